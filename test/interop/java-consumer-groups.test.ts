// Kafka's Java consumer with group.protocol=consumer (KIP-848) against a real Topograph process: two
// members share a topic's partitions, records keep arriving, one member leaves, and every record is
// read exactly once across the two; the partitions of the two members never overlap. Then three
// members on a broker-side subscription pattern read every record exactly once across joins, a
// kill -9 of one member, a topic created later that the pattern picks up, and a leave, with
// `kafka-consumer-groups --describe` checked on the way. And the first member of a new group whose
// pattern matches no topic yet waits in the group until a matching topic is created.
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
      // A killed member's partitions move after 6 s rather than Kafka's minimum of 45 s.
      'group.consumer.min.session.timeout.ms': '6000',
      'group.consumer.session.timeout.ms': '6000',
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
  test(
    'a new group on a pattern that matches no topic yet waits, then reads the topic created later',
    slow,
    async () => {
      const member = await startJavaProgram('GroupConsumer', [
        server.bootstrap,
        'late-app',
        'regex:late-.*',
        'consumer',
        'late-member',
      ])
      // Several heartbeats (500 ms apart) with nothing to read: the member stays in the group.
      await new Promise((r) => setTimeout(r, 4000))
      assert.doesNotMatch(member.stdout(), /^error /m)
      await createTopics(server.bootstrap, [{ name: 'late-1', partitions: 2 }])
      await member.waitFor(/^assigned late-1-0,late-1-1$/m, 120_000)
      await java.produce(
        [0, 1, 2, 3].map((i) => ({ topic: 'late-1', partition: i % 2, key: `k${i}`, value: `late${i}` })),
      )
      await eventually(
        async () => (seen(member).values.length === 4 ? true : undefined),
        60_000,
        () => member.stdout(),
      )
      assert.deepEqual(seen(member).values.sort(), ['late0', 'late1', 'late2', 'late3'])
      member.write('close\n')
      await member.waitFor(/^closed$/m, 60_000)
      assert.doesNotMatch(member.stdout(), /^error /m)
    },
  )
  test(
    'three members on a pattern: exactly once across joins, kill -9, a new topic and a leave',
    slow,
    async () => {
      const GROUP3 = 'trio-app'
      await createTopics(server.bootstrap, [{ name: 'trio-a', partitions: 6 }])
      let next = 0
      const produce = async (topic: string, partitions: number, n: number) => {
        const records = Array.from({ length: n }, () => {
          const i = next++
          return { topic, partition: i % partitions, key: `k${i}`, value: `t${i}` }
        })
        await java.produce(records)
      }
      const start = (name: string) =>
        startJavaProgram('GroupConsumer', [server.bootstrap, GROUP3, 'regex:trio-.*', 'consumer', name])
      /** The last assignment a member printed: `topic-partition` entries. */
      const assigned = (p: ManagedProcess): string[] | undefined => {
        let last: string[] | undefined
        for (const line of p.stdout().split('\n')) {
          const a = /^assigned ?(.*)$/.exec(line)
          if (a) last = a[1] === '' ? [] : a[1]!.split(',')
        }
        return last
      }
      /** Waits until the running members hold `partitions` between them, each at least one, disjoint. */
      const spread = (members: ManagedProcess[], partitions: string[]) =>
        eventually(
          async () => {
            const held = members.map(assigned)
            if (held.some((h) => h === undefined || h.length === 0)) return undefined
            const all = held.flat() as string[]
            if (new Set(all).size !== all.length) return undefined
            return JSON.stringify([...all].sort()) === JSON.stringify([...partitions].sort())
              ? true
              : undefined
          },
          120_000,
          () => members.map((m) => `${assigned(m)}`).join(' | '),
        )
      const partitionsOf = (topic: string, n: number) => Array.from({ length: n }, (_, i) => `${topic}-${i}`)
      const members: ManagedProcess[] = []
      const valuesRead = () => members.flatMap((m) => seen(m).values)
      /** Every record produced so far was read, and each member committed after its last record. */
      const readAndCommitted = () =>
        eventually(
          async () => {
            if (new Set(valuesRead()).size < next) return undefined
            for (const m of members) {
              const lines = m.stdout().trimEnd().split('\n')
              const lastRecord = lines.findLastIndex((l) => l.startsWith('record '))
              if (lastRecord >= 0 && !lines.slice(lastRecord).includes('committed')) return undefined
            }
            return true
          },
          120_000,
          () => `${new Set(valuesRead()).size} of ${next} records read`,
        )

      await produce('trio-a', 6, 60)
      members.push(await start('trio-1'))
      await spread(members, partitionsOf('trio-a', 6))
      members.push(await start('trio-2'), await start('trio-3'))
      const [m1, m2, m3] = members as [ManagedProcess, ManagedProcess, ManagedProcess]
      await spread([m1, m2, m3], partitionsOf('trio-a', 6))
      await produce('trio-a', 6, 60)
      await readAndCommitted()

      // kill -9 of trio-3 once it committed what it read: its partitions move to the others when its
      // session times out, and they read on from its committed offsets.
      await m3.kill()
      await produce('trio-a', 6, 60)
      await spread([m1, m2], partitionsOf('trio-a', 6))
      await readAndCommitted()

      // A topic created later matches the pattern: the coordinator assigns it at a later heartbeat.
      await createTopics(server.bootstrap, [{ name: 'trio-b', partitions: 2 }])
      await spread([m1, m2], [...partitionsOf('trio-a', 6), ...partitionsOf('trio-b', 2)])
      await produce('trio-b', 2, 20)
      await readAndCommitted()

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
      // Every partition of both topics, committed to its log end (lag 0), with its owner's client id.
      const described = await tool('--describe', '--group', GROUP3)
      const owners = new Map(
        [m1, m2].flatMap((m, i) => (assigned(m) ?? []).map((tp) => [tp, `trio-${i + 1}`])),
      )
      for (const [topic, n] of [
        ['trio-a', 6],
        ['trio-b', 2],
      ] as const) {
        for (let p = 0; p < n; p++) {
          const row = new RegExp(
            `^${GROUP3}\\s+${topic}\\s+${p}\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+\\S+\\s+\\S+\\s+(\\S+)`,
            'm',
          ).exec(described)
          assert.ok(row, `no row for ${topic}-${p} in:\n${described}`)
          assert.equal(row[1], row[2], `${topic}-${p} committed at its log end`)
          assert.equal(row[3], '0')
          assert.equal(row[4], owners.get(`${topic}-${p}`))
        }
      }
      const state = await tool('--describe', '--group', GROUP3, '--state')
      assert.match(state, /uniform\s+Stable\s+2/)
      const listedMembers = await tool('--describe', '--group', GROUP3, '--members')
      assert.match(listedMembers, /trio-1\s+\d+/)
      assert.match(listedMembers, /trio-2\s+\d+/)
      assert.doesNotMatch(listedMembers, /trio-3/)

      // trio-2 leaves: trio-1 takes every partition and reads the rest.
      m2.write('close\n')
      await m2.waitFor(/^closed$/m, 60_000)
      await spread([m1], [...partitionsOf('trio-a', 6), ...partitionsOf('trio-b', 2)])
      await produce('trio-a', 6, 30)
      await produce('trio-b', 2, 10)
      await readAndCommitted()
      m1.write('close\n')
      await m1.waitFor(/^closed$/m, 60_000)

      const read = valuesRead()
      const want = Array.from({ length: next }, (_, i) => `t${i}`)
      assert.equal(read.length, new Set(read).size, 'no record read twice')
      assert.deepEqual([...read].sort(), want.sort(), 'every record exactly once')
      for (const m of members) assert.ok(seen(m).values.length > 0, `${m} read some records`)
      assert.doesNotMatch(m1.stdout() + m2.stdout() + m3.stdout(), /^error /m)
    },
  )
})
