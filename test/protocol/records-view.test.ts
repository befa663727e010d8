// `records` fields (a Produce request's batches, a Fetch answer's) are decoded as views of the input,
// not copies: every other field is copied. This pins the Reader's records primitives and that the
// generator uses them for every records field of every message schema.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import {
  createFetchResponse,
  createFetchResponsePartitionData,
  decodeFetchResponse,
  encodeFetchResponse,
  FetchResponseMeta,
} from '../../src/protocol/generated/messages/FetchResponse.js'
import {
  createProduceRequest,
  decodeProduceRequest,
  encodeProduceRequest,
  ProduceRequestMeta,
} from '../../src/protocol/generated/messages/ProduceRequest.js'
import { DecodeError } from '../../src/protocol/errors-codec.js'
import { Reader } from '../../src/protocol/reader.js'
import { Writer } from '../../src/protocol/writer.js'

const SCHEMAS = join(import.meta.dirname, '../../schemas/messages')

/** Names of the message schemas with a field of type `records` (at any depth). */
function schemasWithRecords(): string[] {
  const has = (fields: readonly { type: string; fields?: unknown[] }[] | undefined): boolean =>
    (fields ?? []).some((f) => f.type === 'records' || has(f.fields as typeof fields))
  return readdirSync(SCHEMAS)
    .filter((f) => f.endsWith('.json'))
    .filter((f) => {
      const text = readFileSync(join(SCHEMAS, f), 'utf8').replace(/^\s*\/\/.*$/gm, '')
      const schema = JSON.parse(text) as { fields?: { type: string; fields?: unknown[] }[] }
      return has(schema.fields)
    })
    .map((f) => f.replace(/\.json$/, ''))
    .sort()
}

/** The records bytes of a message decoded from `bytes` are a view of `bytes`, not a copy. */
function assertView(bytes: Uint8Array, records: Uint8Array | null, sent: Uint8Array): void {
  assert.ok(records !== null)
  assert.deepEqual([...records], [...sent])
  assert.equal(records.buffer, bytes.buffer, 'a view of the input')
  const at = records.byteOffset - bytes.byteOffset
  assert.ok(at > 0 && at + records.byteLength <= bytes.byteLength)
  bytes[at] ^= 0xff
  assert.equal(records[0], sent[0] ^ 0xff, 'changes to the input show through')
  bytes[at] ^= 0xff
}

describe('records fields are views of the input', () => {
  it('the generator covers every records field: ProduceRequest and FetchResponse', () => {
    assert.deepEqual(schemasWithRecords(), ['FetchResponse', 'ProduceRequest'])
  })

  const sent = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff)

  it('ProduceRequest, every version', () => {
    for (let v = ProduceRequestMeta.minVersion; v <= ProduceRequestMeta.maxVersion; v++) {
      const m = createProduceRequest({
        acks: 1,
        topicData: [
          {
            name: v < 13 ? 't' : '',
            topicId: v >= 13 ? 'AAAAAAAAAAAAAAAAAAAAAQ' : 'AAAAAAAAAAAAAAAAAAAAAA',
            partitionData: [
              { index: 0, records: sent },
              { index: 1, records: null },
            ],
          },
        ],
      })
      // Decoded from the middle of a larger buffer, as a frame cut out of a socket chunk.
      const body = encodeProduceRequest(m, v)
      const chunk = new Uint8Array(body.byteLength + 16)
      chunk.set(body, 8)
      const bytes = chunk.subarray(8, 8 + body.byteLength)
      const d = decodeProduceRequest(bytes, v)
      assertView(bytes, d.topicData[0].partitionData[0].records, sent)
      assert.equal(d.topicData[0].partitionData[1].records, null, `v${v}: null stays null`)
    }
  })

  it('FetchResponse, every version', () => {
    for (let v = FetchResponseMeta.minVersion; v <= FetchResponseMeta.maxVersion; v++) {
      const m = createFetchResponse({
        responses: [
          {
            topic: v < 13 ? 't' : '',
            topicId: v >= 13 ? 'AAAAAAAAAAAAAAAAAAAAAQ' : 'AAAAAAAAAAAAAAAAAAAAAA',
            partitions: [createFetchResponsePartitionData({ partitionIndex: 0, records: sent })],
          },
        ],
      })
      const bytes = encodeFetchResponse(m, v)
      const d = decodeFetchResponse(bytes, v)
      assertView(bytes, d.responses[0].partitions[0].records, sent)
    }
  })

  it('Reader: the four records primitives, null, and lengths checked before the view', () => {
    const w = new Writer()
    w.writeNullableBytes(sent)
    w.writeNullableBytes(null)
    w.writeCompactNullableBytes(sent)
    w.writeCompactNullableBytes(null)
    w.writeBytes(sent)
    w.writeCompactBytes(sent)
    const bytes = w.finish()
    const r = new Reader(bytes)
    assertView(bytes, r.readNullableRecords(), sent)
    assert.equal(r.readNullableRecords(), null)
    assertView(bytes, r.readCompactNullableRecords(), sent)
    assert.equal(r.readCompactNullableRecords(), null)
    assertView(bytes, r.readRecords(), sent)
    assertView(bytes, r.readCompactRecords(), sent)
    r.expectEnd('records')

    const nulls = new Writer()
    nulls.writeNullableBytes(null)
    nulls.writeCompactNullableBytes(null)
    const rn = new Reader(nulls.finish())
    assert.throws(
      () => rn.readRecords(),
      (e: unknown) => e instanceof DecodeError && e.offset === 0,
    )
    assert.throws(
      () => rn.readCompactRecords(),
      (e: unknown) => e instanceof DecodeError && e.offset === 4,
    )

    // A length past the end fails at the length prefix, before any view is made.
    const long = new Writer()
    long.writeInt32(2)
    long.writeInt32(1000)
    long.writeInt8(1)
    const rl = new Reader(long.finish())
    rl.readInt32()
    assert.throws(
      () => rl.readNullableRecords(),
      (e: unknown) => e instanceof DecodeError && e.offset === 4,
    )
    const neg = new Writer()
    neg.writeInt32(-2)
    assert.throws(() => new Reader(neg.finish()).readNullableRecords(), DecodeError)
  })
})
