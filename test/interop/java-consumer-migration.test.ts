// Online migration of a group between the classic and the consumer protocol (KIP-848), with Kafka's
// Java consumer against a real Topograph process. A rolling upgrade replaces the classic members one
// by one with consumer-protocol members (the classic group becomes a consumer group when the first
// one joins, the classic members going on inside it), then a rolling downgrade replaces those with
// classic members again (the consumer group becomes a classic group when the last consumer-protocol
// member leaves). Records keep arriving throughout; each member prints a record only once the offset
// after it is committed, and every key is read exactly once across all members.
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

const TOPIC = 'migrating'
const GROUP = 'migrating-app'
const PARTITIONS = 4

interface Member {
  readonly name: string
  readonly protocol: 'classic' | 'consumer'
  readonly proc: ManagedProcess
}

/** The keys a member printed as read (committed), and its last assignment. */
function seen(m: Member): { keys: string[]; assigned: number[] | undefined } {
  const keys: string[] = []
  let assigned: number[] | undefined
  for (const line of m.proc.stdout().split('\n')) {
    const r = /^record (\d+) (\d+) (\S+)$/.exec(line)
    if (r) keys.push(r[3]!)
    const a = /^assigned ?(.*)$/.exec(line)
    if (a) assigned = a[1] === '' ? [] : a[1]!.split(',').map(Number)
  }
  return { keys, assigned }
}

describe('Kafka Java consumers migrating a group between protocols', () => {
  let server: InteropServer
  let java: JavaClients
  const members: Member[] = []

  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start({
      'group.consumer.heartbeat.interval.ms': '500',
      'group.consumer.min.heartbeat.interval.ms': '500',
      'group.consumer.assignment.interval.ms': '0',
      'group.initial.rebalance.delay.ms': '0',
      'group.consumer.migration.policy': 'bidirectional',
    })
    await createTopics(server.bootstrap, [{ name: TOPIC, partitions: PARTITIONS }])
    java = await JavaClients.start(server.bootstrap)
  })
  after(async () => {
    for (const m of members) if (m.proc.running) await m.proc.kill()
    await closeInterop(java, server)
  })

  test('a rolling upgrade then a rolling downgrade read every record exactly once', {
    skip: kafkaJavaSkip,
    timeout: 900_000,
  }, async () => {
    let next = 0
    const produce = async (n: number) => {
      const records = Array.from({ length: n }, () => {
        const i = next++
        return { topic: TOPIC, partition: i % PARTITIONS, key: `k${i}`, value: `v${i}` }
      })
      await java.produce(records)
    }
    const start = async (name: string, protocol: Member['protocol']): Promise<Member> => {
      const m: Member = {
        name,
        protocol,
        proc: await startJavaProgram('GroupConsumer', [
          server.bootstrap,
          GROUP,
          TOPIC,
          protocol,
          name,
          'commit-first',
        ]),
      }
      members.push(m)
      return m
    }
    const live = () => members.filter((m) => m.proc.running)
    const describeLive = () =>
      live()
        .map((m) => `${m.name}(${m.protocol}): ${seen(m).assigned?.join(',') ?? '-'}`)
        .join('; ')
    /** The live members hold every partition between them, each member at least one. */
    const balanced = () =>
      eventually(
        async () => {
          const sets = live().map((m) => seen(m).assigned)
          if (sets.some((s) => s === undefined || s.length === 0)) return undefined
          const all = sets.flatMap((s) => s!)
          return all.length === PARTITIONS && new Set(all).size === PARTITIONS ? true : undefined
        },
        180_000,
        describeLive,
      )
    const readKeys = () => members.flatMap((m) => seen(m).keys)
    const readAll = () =>
      eventually(
        async () => (new Set(readKeys()).size >= next ? true : undefined),
        180_000,
        () => `${new Set(readKeys()).size} of ${next} records read; ${describeLive()}`,
      )
    const close = async (m: Member) => {
      m.proc.write('close\n')
      await m.proc.waitFor(/^closed$/m, 90_000)
    }
    const groupType = async () => {
      const r = await runKafkaTool('kafka-consumer-groups', [
        '--bootstrap-server',
        server.bootstrap,
        '--list',
        '--type',
      ])
      const line = r.stdout.split('\n').find((l) => l.trim().startsWith(`${GROUP} `))
      return line?.trim().split(/\s+/)[1]?.toLowerCase()
    }
    const expectType = (type: string) =>
      eventually(
        async () => ((await groupType()) === type ? true : undefined),
        60_000,
        () => `group type ${type}`,
      )

    // A classic group of two.
    await produce(100)
    const c1 = await start('classic-1', 'classic')
    const c2 = await start('classic-2', 'classic')
    await balanced()
    await readAll()
    await expectType('classic')

    // Rolling upgrade: a consumer-protocol member joins (the group becomes a consumer group, the
    // classic members stay in it), then each classic member is replaced by a consumer member.
    const n1 = await start('consumer-1', 'consumer')
    await balanced()
    await expectType('consumer')
    await produce(100)
    await readAll()
    await close(c1)
    const n2 = await start('consumer-2', 'consumer')
    await balanced()
    await produce(100)
    await close(c2)
    await balanced()
    await readAll()
    await expectType('consumer')

    // Rolling downgrade: classic members join the consumer group, the consumer members leave;
    // when the last one leaves, the group is a classic group again.
    const c3 = await start('classic-3', 'classic')
    await balanced()
    await produce(100)
    await close(n1)
    const c4 = await start('classic-4', 'classic')
    await balanced()
    await readAll()
    await close(n2)
    await expectType('classic')
    await balanced()
    await produce(100)
    await readAll()
    await close(c3)
    await close(c4)

    // Every key exactly once, nothing else.
    const keys = readKeys()
    const counts = new Map<string, number>()
    for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1)
    const twice = [...counts].filter(([, n]) => n > 1).map(([k]) => k)
    assert.deepEqual(twice, [], 'keys read more than once')
    assert.equal(counts.size, next)
    for (let i = 0; i < next; i++) assert.ok(counts.has(`k${i}`), `k${i} read`)
    for (const m of members) assert.doesNotMatch(m.proc.stdout(), /^error /m, m.name)
    // Both protocols did some of the reading.
    assert.ok(seen(n1).keys.length + seen(n2).keys.length > 0, 'consumer members read records')
    assert.ok(seen(c3).keys.length + seen(c4).keys.length > 0, 'classic members read after the downgrade')
  })
})
