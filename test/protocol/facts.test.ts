/** Facts checked against Kafka trunk: which error codes are retriable, and how trailing request bytes are treated. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as p from '../../src/protocol/index.js'

describe('error table', () => {
  it('marks exactly the codes whose Kafka exception is a RetriableException as retriable', () => {
    // Includes the indirect ones: InvalidMetadataException / RefreshRetriableException subclasses
    // such as ELECTION_NOT_NEEDED (84) and FENCED_LEADER_EPOCH (74).
    const retriable = [
      2, 3, 5, 6, 7, 9, 13, 14, 15, 16, 19, 20, 41, 51, 56, 70, 71, 72, 74, 75, 78, 80, 83, 84, 88, 89, 100,
      103, 106, 122, 123, 133,
    ]
    assert.deepEqual(
      p.ERRORS.filter((e) => e.retriable).map((e) => e.code),
      retriable,
    )
  })

  it('covers every code from -1 to 136 once, in ascending order', () => {
    const codes = p.ERRORS.map((e) => e.code)
    assert.deepEqual(
      codes,
      Array.from({ length: 138 }, (_, i) => i - 1),
    )
  })

  it('names and messages of corrected entries', () => {
    assert.equal(p.errorName(84), 'ELECTION_NOT_NEEDED')
    assert.equal(p.errorInfo(84).retriable, true)
    assert.equal(
      p.errorInfo(124).message,
      'The coordinator rejected the request because the state epoch did not match.',
    )
    assert.equal(p.errorInfo(0).message, null)
    assert.equal(p.errorInfo(9999).name, 'UNKNOWN_SERVER_ERROR')
    assert.equal(p.isKnownErrorCode(9999), false)
  })
})

describe('decodeRequest and bytes after the body', () => {
  const body = p.createHeartbeatRequest({ groupId: 'g', generationId: 2, memberId: 'm' })

  it('ignores trailing bytes after a complete body, as the broker does', () => {
    for (const version of [0, 4]) {
      const frame = p.encodeRequestFrame(12, version, 9, 'c', body).subarray(4)
      const padded = Buffer.concat([frame, Buffer.from('deadbeef00', 'hex')])
      const d = p.decodeRequest(padded)
      assert.equal(d.apiKey, 12)
      assert.equal(d.apiVersion, version)
      assert.equal(d.header.correlationId, 9)
      assert.deepEqual(d.body, body)
    }
  })

  it('still rejects a body that is cut short', () => {
    const frame = p.encodeRequestFrame(12, 4, 9, 'c', body).subarray(4)
    assert.throws(
      () => p.decodeRequest(frame.subarray(0, frame.length - 1)),
      (e: unknown) => e instanceof p.MalformedRequestError && e.correlationId === 9,
    )
  })

  it('the strict body decoders keep rejecting trailing bytes', () => {
    const bytes = Buffer.concat([p.encodeHeartbeatRequest(body, 4), Buffer.from([0])])
    assert.throws(
      () => p.decodeHeartbeatRequest(bytes, 4),
      (e: unknown) => e instanceof p.DecodeError && e.code === 'TRAILING_BYTES',
    )
  })
})
