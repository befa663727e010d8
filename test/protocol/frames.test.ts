import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import * as p from '../../src/protocol/index.js'

function frames(): Buffer[] {
  return [
    p.encodeRequestFrame(18, 3, 1, 'client', p.createApiVersionsRequest({ clientSoftwareName: 'x' })),
    p.encodeRequestFrame(89, 1, 2, null, p.createStreamsGroupDescribeRequest({ groupIds: ['a', 'b'] })),
    p.encodeRequestFrame(12, 0, 3, 'c', p.createHeartbeatRequest({ groupId: 'g' })),
  ]
}

describe('FrameDecoder', () => {
  it('yields the same frames for a stream split at every byte offset (and every pair of offsets)', () => {
    const all = Buffer.concat(frames())
    const expected = frames().map((f) => f.subarray(4).toString('hex'))
    for (let i = 0; i <= all.length; i++) {
      for (let j = i; j <= all.length; j += 7) {
        const d = new p.FrameDecoder()
        const got = [...d.push(all.subarray(0, i)), ...d.push(all.subarray(i, j)), ...d.push(all.subarray(j))]
        assert.deepEqual(
          got.map((f) => f.toString('hex')),
          expected,
        )
        assert.equal(d.bufferedBytes, 0)
      }
    }
  })

  it('one byte at a time', () => {
    const all = Buffer.concat(frames())
    const d = new p.FrameDecoder()
    const got: Buffer[] = []
    for (let i = 0; i < all.length; i++) got.push(...d.push(all.subarray(i, i + 1)))
    assert.equal(got.length, 3)
  })

  it('copies bytes it keeps past a push (the caller may reuse its chunk)', () => {
    const f = frames()[0]!
    const chunk = Buffer.from(f.subarray(0, 10))
    const d = new p.FrameDecoder()
    assert.deepEqual(d.push(chunk), [])
    chunk.fill(0xee)
    const [out] = d.push(f.subarray(10))
    assert.equal(out!.toString('hex'), f.subarray(4).toString('hex'))
  })

  it('rejects negative and oversized sizes with FrameError', () => {
    assert.throws(() => new p.FrameDecoder().push(Buffer.from('ffffffff', 'hex')), p.FrameError)
    assert.throws(
      () => new p.FrameDecoder({ maxFrameSize: 10 }).push(Buffer.from('0000000b', 'hex')),
      p.FrameError,
    )
    assert.throws(() => new p.FrameDecoder().push(Buffer.from('06400001', 'hex')), p.FrameError)
    const d = new p.FrameDecoder()
    assert.throws(
      () => d.push(Buffer.from('ff', 'hex')).concat(d.push(Buffer.from('ffffff', 'hex'))),
      p.FrameError,
    )
  })
})

describe('decodeRequest / responses', () => {
  it('distinguishes unknown API key, unsupported version and malformed body', () => {
    assert.throws(
      () => p.decodeRequest(Buffer.from('03e700000000002a0000', 'hex')),
      (e: unknown) => e instanceof p.UnknownApiKeyError && e.apiKey === 999 && e.correlationId === 42,
    )
    const tooNew = p.encodeRequestFrame(18, 3, 5, 'c', p.createApiVersionsRequest()).subarray(4)
    tooNew.writeInt16BE(9, 2)
    assert.throws(
      () => p.decodeRequest(tooNew),
      (e: unknown) =>
        e instanceof p.UnsupportedApiVersionError &&
        e.apiVersion === 9 &&
        e.correlationId === 5 &&
        e.maxVersion === 5,
    )
    const bad = p.encodeRequestFrame(12, 0, 6, 'c', p.createHeartbeatRequest({ groupId: 'g' })).subarray(4)
    assert.throws(
      () => p.decodeRequest(bad.subarray(0, bad.length - 1)),
      (e: unknown) =>
        e instanceof p.MalformedRequestError && e.correlationId === 6 && e.cause instanceof p.DecodeError,
    )
    assert.throws(() => p.decodeRequest(Buffer.alloc(3)), p.MalformedRequestError)
  })

  it('KIP-511 fallback: v0-layout ApiVersions response with UNSUPPORTED_VERSION', () => {
    const f = p.encodeApiVersionsFallbackResponseFrame(77)
    assert.equal(f.toString('hex'), '00000010' + '0000004d' + '0023' + '00000001' + '0012' + '0000' + '0005')
    const r = p.decodeResponse(18, 0, f.subarray(4))
    assert.equal(r.correlationId, 77)
    assert.equal(r.body.errorCode, p.ErrorCode.UNSUPPORTED_VERSION)
  })

  it('response frames round-trip through decodeResponse', () => {
    const body = p.createStreamsGroupHeartbeatResponse({ memberId: 'm', topologyDescriptionRequired: true })
    const f = p.encodeResponseFrame(88, 1, 11, body)
    assert.equal(f.readInt32BE(0), f.length - 4)
    const r = p.decodeResponse(88, 1, f.subarray(4))
    assert.equal(r.correlationId, 11)
    assert.deepEqual(r.body, body)
  })
})

describe('fuzz: only DecodeError / FrameError / typed request errors, bounded time', () => {
  const seeds = frames().map((f) => f.subarray(4))
  const ok = (e: unknown) =>
    e instanceof p.DecodeError || e instanceof p.FrameError || e instanceof p.RequestDecodeError

  it('mutated and random request frames', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }),
          fc
            .tuple(
              fc.constantFrom(...seeds),
              fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
            )
            .map(([s, muts]) => {
              const b = Buffer.from(s)
              for (const [i, v] of muts) b[i % b.length] = v
              return b
            }),
          fc.tuple(fc.constantFrom(...seeds), fc.nat()).map(([s, n]) => s.subarray(0, n % (s.length + 1))),
        ),
        (bytes) => {
          try {
            p.decodeRequest(bytes)
          } catch (e) {
            if (!ok(e)) throw e
          }
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('every body decoder on random bytes at every version', () => {
    const defs = p.allApiDefinitions()
    const t0 = Date.now()
    fc.assert(
      fc.property(fc.nat(), fc.uint8Array({ maxLength: 48 }), (k, bytes) => {
        const d = defs[k % defs.length]!
        for (let v = d.minVersion; v <= d.maxVersion; v++) {
          for (const read of [d.readRequest, d.readResponse]) {
            try {
              read(new p.Reader(bytes), v)
            } catch (e) {
              if (!(e instanceof p.DecodeError)) throw e
            }
          }
        }
      }),
      { numRuns: 2000 },
    )
    assert.ok(Date.now() - t0 < 20000)
  })

  it('huge declared lengths fail before allocating', () => {
    const r = new p.Reader(Buffer.from('7fffffff', 'hex'))
    assert.throws(
      () => r.readArrayLength(),
      (e: unknown) => e instanceof p.DecodeError && e.code === 'LENGTH_EXCEEDS_REMAINING',
    )
    assert.throws(() => new p.Reader(Buffer.from('ffffffff0f', 'hex')).readCompactBytes(), p.DecodeError)
    assert.throws(
      () => new p.Reader(Buffer.from('8080808080', 'hex')).readUVarint(),
      (e: unknown) => e instanceof p.DecodeError && e.code === 'BAD_VARINT' && e.offset === 0,
    )
    const fd = new p.FrameDecoder()
    fd.push(Buffer.from('05000000', 'hex'))
    assert.ok(fd.bufferedBytes < 16)
  })
})
