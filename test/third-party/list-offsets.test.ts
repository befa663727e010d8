// Offset look-ups by clients no one here wrote: kcat -Q (librdkafka's offsets_for_times and the
// logical offsets) and kafka-python's KafkaConsumer (beginning_offsets, end_offsets,
// offsets_for_times) against the server's empty logs.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const run = promisify(execFile)
let ts: TestServer

before(async () => {
  ts = await startTestServer()
  const c = await WireClient.connect(ts.port)
  try {
    const r = await c.request<{ topics: { errorCode: number }[] }>(19, 7, {
      topics: [{ name: 'lo-3p', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(r.body.topics[0]!.errorCode, 0)
  } finally {
    c.close()
  }
})
after(async () => {
  await ts.stop()
})

test('kcat -Q: a timestamp, the end and the beginning of empty partitions', { timeout: 30_000 }, async () => {
  const { stdout } = await run(
    'kcat',
    [
      '-b',
      `127.0.0.1:${ts.port}`,
      '-Q',
      '-t',
      'lo-3p:0:1700000000000',
      '-t',
      'lo-3p:1:-1',
      '-t',
      'lo-3p:1:-2',
    ],
    { timeout: 20_000 },
  )
  // No record at or after the timestamp: offset -1, as a Kafka broker answers for an empty log.
  assert.deepEqual(stdout.trim().split('\n').sort(), [
    'lo-3p [0] offset -1',
    'lo-3p [1] offset 0',
    'lo-3p [1] offset 0',
  ])
})

const SCRIPT = `
import json, sys
from kafka import KafkaConsumer, TopicPartition
c = KafkaConsumer(bootstrap_servers=sys.argv[1], client_id='kpy-offsets', request_timeout_ms=10000)
tps = [TopicPartition('lo-3p', 0), TopicPartition('lo-3p', 1)]
out = {
  'beginning': sorted([[tp.partition, o] for tp, o in c.beginning_offsets(tps).items()]),
  'end': sorted([[tp.partition, o] for tp, o in c.end_offsets(tps).items()]),
  'for_times': sorted([[tp.partition, None if o is None else o.offset]
                       for tp, o in c.offsets_for_times({tps[0]: 0, tps[1]: 1700000000000}).items()]),
}
c.close()
print(json.dumps(out))
`

test('kafka-python: beginning_offsets, end_offsets and offsets_for_times', { timeout: 60_000 }, async () => {
  const { stdout } = await run('/usr/bin/python3', ['-c', SCRIPT, `127.0.0.1:${ts.port}`], {
    timeout: 45_000,
  })
  const out = JSON.parse(stdout.trim().split('\n').pop() as string)
  assert.deepEqual(out, {
    beginning: [
      [0, 0],
      [1, 0],
    ],
    end: [
      [0, 0],
      [1, 0],
    ],
    // No record at or after any timestamp: Kafka answers offset -1, which kafka-python reports as None.
    for_times: [
      [0, null],
      [1, null],
    ],
  })
})
