// kafka-python (Debian python3-kafka) against a real Topograph process: a producer (uncompressed and
// gzip, the codecs it has without extra Python modules) and a consumer group that commits, reading
// back every key, value, header and timestamp; a second consumer of the group resumes where the
// first committed.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createTopics, InteropServer, killAll, run } from '../helpers/interop.js'

const T0 = Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000

const SCRIPT = `
import json, sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
bootstrap, t0 = sys.argv[1], int(sys.argv[2])
out = {'acks': []}
for batch, codec in enumerate([None, 'gzip']):
    p = KafkaProducer(bootstrap_servers=bootstrap, acks='all', compression_type=codec, linger_ms=50,
                      client_id='interop-kafka-python')
    futures = []
    for n in range(10):
        i = batch * 10 + n
        futures.append(p.send('kpy-data', key=('k%d' % i).encode(), value=('value %d %s' % (i, 'q' * i)).encode(),
                              headers=[('trace', ('t%d' % i).encode()), ('empty', b'')],
                              partition=i % 2, timestamp_ms=t0 + i * 10))
    p.flush()
    out['acks'] += [[m.partition, m.offset, m.timestamp] for m in (f.get(timeout=30) for f in futures)]
    p.close()

def record(m):
    return {'partition': m.partition, 'offset': m.offset, 'key': m.key.decode(), 'value': m.value.decode(),
            'timestamp': m.timestamp, 'timestamp_type': m.timestamp_type,
            'headers': [[k, v.decode()] for k, v in m.headers]}

def consume(limit):
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id='kpy-group', enable_auto_commit=False,
                      auto_offset_reset='earliest', consumer_timeout_ms=20000, max_poll_records=3,
                      client_id='interop-kafka-python')
    c.subscribe(['kpy-data'])
    got = []
    for m in c:
        got.append(record(m))
        c.commit()
        if len(got) == limit:
            break
    committed = sorted([tp.partition, c.committed(tp)] for tp in c.assignment() if c.committed(tp) is not None)
    c.close()
    return got, committed

out['first'], out['first_committed'] = consume(7)
out['second'], out['second_committed'] = consume(13)
print(json.dumps(out))
`

interface PyRecord {
  partition: number
  offset: number
  key: string
  value: string
  timestamp: number
  timestamp_type: number
  headers: [string, string][]
}

describe('kafka-python producer and consumer', () => {
  let server: InteropServer
  before(async () => {
    server = await InteropServer.start()
    await createTopics(server.bootstrap, [{ name: 'kpy-data', partitions: 2 }])
  })
  after(async () => {
    try {
      await server?.close()
    } finally {
      await killAll()
    }
  })

  test('produce (none, gzip), group consume with commits, resume', { timeout: 180_000 }, async () => {
    const r = await run('/usr/bin/python3', ['-c', SCRIPT, server.bootstrap, String(T0)], {
      timeoutMs: 150_000,
    })
    assert.equal(r.code, 0, r.stderr)
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      acks: [number, number, number][]
      first: PyRecord[]
      first_committed: [number, number][]
      second: PyRecord[]
      second_committed: [number, number][]
    }
    const expected: PyRecord[] = Array.from({ length: 20 }, (_, i) => ({
      partition: i % 2,
      offset: Math.floor(i / 2),
      key: `k${i}`,
      value: `value ${i} ${'q'.repeat(i)}`,
      timestamp: T0 + i * 10,
      timestamp_type: 0,
      headers: [
        ['trace', `t${i}`],
        ['empty', ''],
      ],
    }))
    assert.deepEqual(
      out.acks,
      expected.map((e) => [e.partition, e.offset, e.timestamp]),
    )
    const order = (a: PyRecord, b: PyRecord): number => a.partition - b.partition || a.offset - b.offset
    assert.equal(out.first.length, 7)
    // what the first member committed is, per partition, how far it read (kafka-python's commit()
    // also commits the position of an assigned partition it has read nothing from yet)
    const readFrom = (p: number): number => out.first.filter((x) => x.partition === p).length
    for (const [p, offset] of out.first_committed) assert.equal(offset, readFrom(p), `partition ${p}`)
    for (const p of [0, 1])
      if (readFrom(p) > 0)
        assert.ok(
          out.first_committed.some(([q]) => q === p),
          `commit for partition ${p}`,
        )
    for (const p of [0, 1])
      assert.deepEqual(
        out.first.filter((x) => x.partition === p).sort(order),
        expected.filter((e) => e.partition === p).slice(0, readFrom(p)),
      )
    assert.deepEqual([...out.first, ...out.second].sort(order), [...expected].sort(order))
    assert.deepEqual(out.second_committed, [
      [0, 10],
      [1, 10],
    ])
  })
})
