// Kafka's Java consumer with group.protocol=consumer (KIP-848) against a real Topograph process: two
// members share a topic's partitions, records keep arriving, one member leaves, and every record is
// read exactly once across the two; the partitions of the two members never overlap.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  closeInterop,
  createTopics,
  eventually,
  InteropServer,
  JavaClients,
  kafkaJavaSkip,
  type ManagedProcess,
  runKafkaTool,
  startJavaProgram,
} from '../helpers/interop.js'

const TOPIC = 'events'
const GROUP = 'kip848-app'

/** The values a member printed as read, and its last assignment. */
function seen(p: ManagedProcess): { values: string[]; assigned: number[] | undefined } {
  const values: string[] = []
  let assigned: number[] | undefined
  for (const line of p.stdout().split('\n')) {
    const r = /^record (\d+) (\d+) (\S+)$/.exec(line)
    if (r) values.push(r[3]!)
    const a = /^assigned ?(.*)$/.exec(line)
    if (a) assigned = a[1] === '' ? [] : a[1]!.split(',').map(Number)
  }
  return { values, assigned }
}

describe('Kafka Java consumer, group.protocol=consumer', () => {
  let server: InteropServer
  let java: JavaClients
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start({
      'group.consumer.min.heartbeat.interval.ms': '500',
      'group.consumer.heartbeat.interval.ms': '500',
      'group.consumer.assignment.interval.ms': '0',
    })
    await createTopics(server.bootstrap, [{ name: TOPIC, partitions: 4 }])
    java = await JavaClients.start(server.bootstrap)
  })
  after(() => closeInterop(java, server))

  const slow = { skip: kafkaJavaSkip, timeout: 300_000 }

  test('two members read every record exactly once across a join and a leave', slow, async () => {
    let next = 0
    const produce = async (n: number) => {
      const records = Array.from({ length: n }, () => {
        const i = next++
        return { topic: TOPIC, partition: i % 4, key: `k${i}`, value: `v${i}` }
      })
      await java.produce(records)
    }
    const all = () => Array.from({ length: next }, (_, i) => `v${i}`)
    const start = (name: string) =>
      startJavaProgram('GroupConsumer', [server.bootstrap, GROUP, TOPIC, 'consumer', name])

    await produce(100)
    const c1 = await start('member-1')
    await c1.waitFor(/^assigned 0,1,2,3$/m, 120_000)
    const c2 = await start('member-2')
    // Both members hold partitions, and never the same one.
    // (Polled: the condition reads both members' output.)
    await eventually(
      async () => {
        const a = seen(c1).assigned
        const b = seen(c2).assigned
        if (a === undefined || b === undefined || a.length === 0 || b.length === 0) return undefined
        if (a.length + b.length !== 4) return undefined
        return true
      },
      120_000,
      () => `member-1: ${seen(c1).assigned}, member-2: ${seen(c2).assigned}`,
    )
    const a = seen(c1).assigned!
    const b = seen(c2).assigned!
    assert.deepEqual([...a, ...b].sort(), [0, 1, 2, 3])

    await produce(100)
    const readAll = () =>
      eventually(
        async () => (new Set([...seen(c1).values, ...seen(c2).values]).size >= next ? true : undefined),
        120_000,
        () => `${new Set([...seen(c1).values, ...seen(c2).values]).size} of ${next} records read`,
      )
    await readAll()
    // member-2 leaves; member-1 takes its partitions over and reads what follows.
    const before = c1.stdout().length
    c2.write('close\n')
    await c2.waitFor(/^closed$/m, 60_000)
    await c1.waitFor(/^assigned 0,1,2,3$/m, 120_000, { from: before })
    await produce(100)
    await readAll()
    c1.write('close\n')
    await c1.waitFor(/^closed$/m, 60_000)
    const read = [...seen(c1).values, ...seen(c2).values].sort()
    assert.deepEqual(read, all().sort(), 'every record exactly once')
    assert.ok(seen(c2).values.length > 0, 'member-2 read some records')
    assert.doesNotMatch(c1.stdout() + c2.stdout(), /^error /m)
  })

  test('kafka-consumer-groups lists and describes a consumer group', slow, async () => {
    const member = await startJavaProgram('GroupConsumer', [
      server.bootstrap,
      'tool-app',
      TOPIC,
      'consumer',
      'tool-member',
    ])
    await member.waitFor(/^assigned 0,1,2,3$/m, 120_000)
    await member.waitFor(/^committed$/m, 120_000)
    const tool = async (...args: string[]) => {
      const r = await runKafkaTool(
        'kafka-consumer-groups',
        ['--bootstrap-server', server.bootstrap, ...args],
        {
          timeoutMs: 180_000,
        },
      )
      assert.equal(r.code, 0, r.stdout + r.stderr)
      return r.stdout
    }
    assert.match(await tool('--list'), /^tool-app$/m)
    const offsets = await tool('--describe', '--group', 'tool-app')
    for (let p = 0; p < 4; p++) assert.match(offsets, new RegExp(`tool-app\\s+${TOPIC}\\s+${p}\\s`))
    assert.match(offsets, /tool-member/)
    const members = await tool('--describe', '--group', 'tool-app', '--members')
    assert.match(members, /tool-app\s+\S+\s+\S+\s+tool-member\s+4/)
    const state = await tool('--describe', '--group', 'tool-app', '--state')
    assert.match(state, /uniform\s+Stable\s+1/)
    member.write('close\n')
    await member.waitFor(/^closed$/m, 60_000)
  })
})
