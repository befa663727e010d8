// kafka-python's group coordinator client (Debian python3-kafka) against the server: a KafkaConsumer
// with a group id joins, gets its assignment through JoinGroup/SyncGroup, commits an offset with its
// generation, and leaves on close. The group is checked with raw DescribeGroups meanwhile.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { after, before, test } from 'node:test'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

let ts: TestServer
before(async () => {
  ts = await startTestServer({ 'group.initial.rebalance.delay.ms': '100' })
})
after(async () => {
  await ts.stop()
})

const SCRIPT = `
import json, sys, time
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata
c = KafkaConsumer(bootstrap_servers=sys.argv[1], group_id='py-group', client_id='kpy',
                  enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=500,
                  request_timeout_ms=15000)
c.subscribe(['py-orders'])
deadline = time.time() + 30
while not c.assignment() and time.time() < deadline:
    c._coordinator.poll()
    time.sleep(0.05)
tp = TopicPartition('py-orders', 1)
c.commit({tp: OffsetAndMetadata(17, 'm')})
out = {
    'assignment': sorted(p.partition for p in c.assignment()),
    'member': c._coordinator._generation.member_id,
    'generation': c._coordinator._generation.generation_id,
    'committed': c.committed(tp),
}
print(json.dumps(out), flush=True)
sys.stdin.readline()
c.close()
print('closed', flush=True)
`

async function describe(c: WireClient): Promise<AnyBody> {
  const { body } = await c.request<AnyBody>(15, 5, {
    groups: ['py-group'],
    includeAuthorizedOperations: false,
  })
  return body.groups[0]
}

test('a kafka-python consumer joins a classic group, commits with its generation and leaves', {
  timeout: 60_000,
}, async () => {
  const admin = await WireClient.connect(ts.port)
  const child = spawn('/usr/bin/python3', ['-c', SCRIPT, `127.0.0.1:${ts.port}`], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const lines = createInterface({ input: child.stdout })
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no output in time:\n${stderr}`)), 40_000)
      lines.once('line', (l) => {
        clearTimeout(timer)
        resolve(l)
      })
      void exited.then((code) => {
        clearTimeout(timer)
        reject(new Error(`python exited (${code}):\n${stderr}`))
      })
    })
  try {
    const created = await admin.request<AnyBody>(19, 7, {
      topics: [{ name: 'py-orders', numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)
    const out = JSON.parse(await nextLine())
    assert.deepEqual(out.assignment, [0, 1, 2])
    assert.equal(out.generation, 1)
    assert.match(out.member, /^kpy-[0-9a-f-]{36}$/)
    assert.deepEqual(out.committed, 17)

    const d = await describe(admin)
    assert.deepEqual(
      [d.errorCode, d.groupState, d.protocolType, d.protocolData],
      [0, 'Stable', 'consumer', 'range'],
    )
    assert.deepEqual(
      d.members.map((m: AnyBody) => [m.memberId, m.clientId, m.clientHost]),
      [[out.member, 'kpy', '/127.0.0.1']],
    )

    child.stdin.write('\n')
    assert.equal(await nextLine(), 'closed')
    assert.equal(await exited, 0)
    const left = await describe(admin)
    assert.deepEqual([left.groupState, left.members], ['Empty', []])
  } finally {
    admin.close()
    if (child.exitCode === null) {
      child.kill('SIGKILL')
      await exited
    }
  }
})
