// The fuzzer's own model of the wire: for every served API version, random valid requests are
// read back completely by its frame map, and any frame of a campaign is rebuilt byte for byte from
// the seed and its index.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { decodeRequest, encodeRequestFrame } from '../../src/protocol/frames.js'
import { API_DEFINITIONS, type ApiMessageTypes } from '../../src/protocol/generated/registry.js'
import { buildFrame, framePlan } from '../../tools/fuzz/frames.js'
import { encodeFrame, mapFrame, randomRequest } from '../../tools/fuzz/model.js'
import { Rng } from '../../tools/fuzz/rng.js'
import { expectationOf, pipelinable } from '../../tools/fuzz/wire.js'

const plan = framePlan()

describe('fuzz model', () => {
  test('every served API version: random requests decode and are mapped to their last byte', () => {
    const rng = new Rng(2026)
    let frames = 0
    for (const api of plan.apis) {
      for (let v = api.minVersion; v <= api.maxVersion; v++) {
        for (let i = 0; i < 20; i++) {
          const frame = encodeFrame(api.apiKey, v, i, 'kfuzz', randomRequest(rng, api.schema, v))
          const decoded = decodeRequest(frame.subarray(4))
          assert.equal(decoded.apiKey, api.apiKey)
          const map = mapFrame(frame, api.schema, v)
          const covered = map.spans.reduce((n, s) => n + s.size, 0)
          assert.equal(covered, frame.length - 4, `${api.name} v${v}: spans cover the frame`)
          frames++
        }
      }
    }
    assert.ok(frames > 1000)
  })

  test('frame i of seed s is the same bytes every time', () => {
    for (let i = 0; i < 300; i++) {
      const a = buildFrame(plan, 7, i)
      const b = buildFrame(plan, 7, i)
      assert.deepEqual(Buffer.concat(a.mutated.chunks), Buffer.concat(b.mutated.chunks), `frame ${i}`)
      assert.equal(a.mutated.mutation, b.mutated.mutation)
    }
    assert.notDeepEqual(
      Buffer.concat(buildFrame(plan, 7, 1).mutated.chunks),
      Buffer.concat(buildFrame(plan, 8, 1).mutated.chunks),
    )
    assert.equal(plan.mapErrors, 0)
  })

  test('what a byte stream obliges the server to answer', () => {
    const frame = Buffer.from('0000000400120000', 'hex')
    assert.deepEqual(expectationOf(frame), { complete: 1, invalidSize: false, partial: false })
    assert.deepEqual(expectationOf(Buffer.concat([frame, frame])), {
      complete: 2,
      invalidSize: false,
      partial: false,
    })
    assert.deepEqual(expectationOf(frame.subarray(0, 5)), { complete: 0, invalidSize: false, partial: true })
    assert.deepEqual(expectationOf(Buffer.from('ffffffff', 'hex')), {
      complete: 0,
      invalidSize: true,
      partial: false,
    })
    assert.deepEqual(expectationOf(Buffer.from('7fffffff00', 'hex')), {
      complete: 0,
      invalidSize: true,
      partial: false,
    })
  })
})

describe('fuzz lanes', () => {
  const frameOf = <K extends keyof ApiMessageTypes>(
    apiKey: K,
    version: number,
    init: Partial<ApiMessageTypes[K]['request']>,
  ) => encodeRequestFrame(apiKey, version, 1, 'kfuzz', API_DEFINITIONS[apiKey].createRequest(init))
  const can = (frame: Buffer, family = 'valid', writes = 1) =>
    pipelinable(frame, expectationOf(frame), family, writes)

  test('only a complete request that owes an answer, and is not SASL, is pipelined', () => {
    const metadata = frameOf(3, 12, { topics: null })
    assert.equal(can(metadata), true)
    assert.equal(can(metadata, 'value'), true)
    assert.equal(can(metadata, 'framing'), false)
    assert.equal(can(metadata, 'valid', 2), false)
    assert.equal(can(metadata.subarray(0, metadata.length - 1)), false)
    assert.equal(can(Buffer.concat([metadata, metadata])), false)
    assert.equal(can(Buffer.from('00000000', 'hex')), true)
    assert.equal(can(Buffer.from('0000000100', 'hex')), true)
    // The server may close after answering a SASL request, or after a failed acks=0 Produce (which
    // owes no answer): a frame sent behind one on the same connection was reported as a
    // well-formed request closed unanswered.
    assert.equal(can(frameOf(17, 1, { mechanism: 'NOPE' })), false)
    assert.equal(can(frameOf(36, 2, { authBytes: Buffer.alloc(0) })), false)
    assert.equal(can(frameOf(0, 9, { acks: 0, timeoutMs: 1000, topicData: [] })), false)
    assert.equal(can(frameOf(0, 9, { acks: 1, timeoutMs: 1000, topicData: [] })), true)
  })
})
