import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { fn, schemas, structArb, versionsOf } from './schema-arbitrary.js'

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40)

describe('property: every message and record, every valid version', () => {
  for (const s of schemas) {
    for (const v of versionsOf(s)) {
      it(`${s.name} v${v}: message → encode → decode is equal; bytes → decode → encode is equal`, () => {
        const encode = fn(`encode${s.name}`)
        const decode = fn(`decode${s.name}`)
        fc.assert(
          fc.property(structArb(s, s.root, v, true), (m) => {
            const bytes = encode(m, v) as Uint8Array
            const back = decode(bytes, v)
            assert.deepStrictEqual(back, m)
            const again = encode(back, v) as Uint8Array
            assert.deepStrictEqual(Buffer.from(again), Buffer.from(bytes))
          }),
          { numRuns: RUNS },
        )
      })
    }
  }
})
