/** The Writer rejects numbers outside their wire type with EncodeError instead of wrapping them. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as p from '../../src/protocol/index.js'

const outOfRange = (e: unknown) => e instanceof p.EncodeError && e.code === 'VALUE_OUT_OF_RANGE'

describe('Writer range checks', () => {
  it('accepts the bounds of every fixed-width type', () => {
    const w = new p.Writer(1)
    w.writeInt8(-128)
    w.writeInt8(127)
    w.writeInt16(-32768)
    w.writeInt16(32767)
    w.writeUInt16(65535)
    w.writeInt32(-2147483648)
    w.writeInt32(2147483647)
    w.writeInt64(-(2n ** 63n))
    w.writeInt64(2n ** 63n - 1n)
    assert.equal(
      Buffer.from(w.finish()).toString('hex'),
      '807f' + '80007fff' + 'ffff' + '800000007fffffff' + '8000000000000000' + '7fffffffffffffff',
    )
  })

  it('rejects values one past the bounds, fractions and NaN', () => {
    const w = new p.Writer()
    assert.throws(() => w.writeInt8(128), outOfRange)
    assert.throws(() => w.writeInt8(-129), outOfRange)
    assert.throws(() => w.writeInt16(32768), outOfRange)
    assert.throws(() => w.writeUInt16(-1), outOfRange)
    assert.throws(() => w.writeInt32(2147483648), outOfRange)
    assert.throws(() => w.writeInt32(1.5), outOfRange)
    assert.throws(() => w.writeInt32(Number.NaN), outOfRange)
    assert.throws(() => w.writeInt64(2n ** 63n), outOfRange)
    assert.throws(() => w.writeInt64(-(2n ** 63n) - 1n), outOfRange)
    assert.equal(w.length, 0)
  })

  it('a generated encoder surfaces the EncodeError', () => {
    const m = p.createHeartbeatRequest({ groupId: 'g', generationId: 2 ** 31 })
    assert.throws(() => p.encodeHeartbeatRequest(m, 4), outOfRange)
  })
})
