// Kafka Streams with processing.guarantee=exactly_once_v2 and group.protocol=streams against a real
// Topograph process: two instances of Kafka's WordCount example. Every commit of a stream thread is a
// transaction (transactional Produce to the repartition, changelog and output topics, TxnOffsetCommit
// of the input offsets, EndTxn v5), so the output read with read_committed holds, per word, exactly
// the counts 1, 2, …, n in order, whatever fails:
//   1. no failure;
//   2. one instance killed with SIGKILL while input arrives: its open transaction is aborted at its
//      timeout (its records never reach read_committed readers, its pending offsets are dropped), the
//      survivor takes its tasks over from the last committed offsets and restores the counts from
//      the changelog (read_committed);
//   3. the Topograph server killed with SIGKILL and restarted while input arrives: transactions in
//      flight are aborted (by their timeout or the producer's own abort) or completed after the
//      restart, and the application carries on.
// A duplicate count (processed twice) or a missing one (lost) breaks the 1..n sequence of its word.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  InteropServer,
  JavaClients,
  type JavaRecord,
  kafkaJavaSkip,
  killAll,
  type ManagedProcess,
  type ProduceRecord,
  startStreamsExample,
} from '../helpers/interop.js'

const APP = 'eos-app'
const INPUT = 'eos-input'
const OUTPUT = 'eos-output'
const VOCABULARY = ['kiwi', 'Lime', 'mango', 'NUT', 'olive', 'pear', 'quince', 'kiwi']

const words = (line: string): string[] =>
  line
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== '')

function lines(from: number, count: number): string[] {
  return Array.from({ length: count }, (_, n) => {
    const i = from + n
    return Array.from(
      { length: 1 + (i % 4) },
      (_, j) => VOCABULARY[(i * 3 + j * 5) % VOCABULARY.length]!,
    ).join(' ')
  })
}

function counts(ls: readonly string[]): Map<string, number> {
  const m = new Map<string, number>()
  for (const l of ls) for (const w of words(l)) m.set(w, (m.get(w) ?? 0) + 1)
  return m
}

/** Per word, the counts in the order the output topic holds them. */
function sequences(records: readonly JavaRecord[]): Map<string, number[]> {
  const m = new Map<string, number[]>()
  const sorted = [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset)
  for (const r of sorted) {
    const s = m.get(r.key!) ?? []
    s.push(r.value as number)
    m.set(r.key!, s)
  }
  return new Map([...m].sort())
}

const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1)
const expected = (c: Map<string, number>) => new Map([...c].sort().map(([w, n]) => [w, upTo(n)]))
const total = (c: Map<string, number>) => [...c.values()].reduce((a, b) => a + b, 0)

describe('Kafka Streams exactly_once_v2, two instances, an instance and the server killed', () => {
  let server: InteropServer
  let java: JavaClients
  const instances: ManagedProcess[] = []
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start({
      // a killed member is noticed after 6 s
      'group.streams.session.timeout.ms': '6000',
      'group.streams.min.session.timeout.ms': '6000',
      'group.streams.heartbeat.interval.ms': '500',
      'group.streams.min.heartbeat.interval.ms': '500',
      'group.streams.initial.rebalance.delay.ms': '0',
      // abandoned transactions (transaction.timeout.ms: 5 s below) are aborted within a second of it
      'transaction.abort.timed.out.transaction.cleanup.interval.ms': '1000',
    })
    java = await JavaClients.start(server.bootstrap)
    await java.call({
      op: 'createTopics',
      topics: [
        { name: INPUT, partitions: 2 },
        { name: OUTPUT, partitions: 2 },
      ],
    })
  })
  after(async () => {
    try {
      await Promise.all(instances.map((p) => p.kill()))
      await java?.close()
      await server?.close()
    } finally {
      await killAll()
    }
  })

  const start = (name: string): ManagedProcess => {
    const p = startStreamsExample(name, 'examples.WordCount', [
      server.bootstrap,
      APP,
      'exactly_once_v2',
      INPUT,
      OUTPUT,
      // every count update goes to the output; a transaction every 100 ms (the EOS default)
      'statestore.cache.max.bytes=0',
      'commit.interval.ms=100',
      'producer.transaction.timeout.ms=5000',
      'producer.request.timeout.ms=5000',
      'producer.delivery.timeout.ms=30000',
    ])
    instances.push(p)
    return p
  }

  let produced = 0
  const produceLines = async (ls: readonly string[]): Promise<void> => {
    const records: ProduceRecord[] = ls.map((value, n) => ({
      topic: INPUT,
      partition: (produced + n) % 2,
      key: `line-${produced + n}`,
      value,
    }))
    produced += ls.length
    await java.produce(records)
  }

  /** Feeds `ls` in small batches, running `midway` once half of them are in. */
  const feed = async (ls: readonly string[], midway: () => Promise<void>): Promise<void> => {
    const half = Math.floor(ls.length / 2)
    for (let i = 0; i < ls.length; i += 5) {
      if (i === half - (half % 5)) await midway()
      await produceLines(ls.slice(i, i + 5))
      await new Promise((r) => setTimeout(r, 150))
    }
  }

  /** The committed output: waits for `want` records, then checks nothing beyond them is there. */
  const readCommitted = async (want: number): Promise<JavaRecord[]> => {
    const read = (maxRecords: number, timeoutMs: number) =>
      java.consume({
        config: { 'isolation.level': 'read_committed' },
        assign: [
          [OUTPUT, 0],
          [OUTPUT, 1],
        ],
        seek: 'beginning',
        maxRecords,
        timeoutMs,
        valueFormat: 'long',
      })
    const first = await read(want, 240_000)
    assert.equal(first.records.length, want, 'committed output records')
    const again = await read(want + 1000, 3_000)
    return again.records
  }

  test('exact counts with read_committed through an instance crash and a server crash', {
    skip: kafkaJavaSkip,
    timeout: 900_000,
  }, async () => {
    const a = start('eos-1')
    const b = start('eos-2')
    await Promise.all([a, b].map((p) => p.waitFor(/^state REBALANCING -> RUNNING$/m, 240_000)))

    // 1. No failure.
    const phase1 = lines(0, 30)
    await produceLines(phase1)
    let all = counts(phase1)
    assert.deepEqual(sequences(await readCommitted(total(all))), expected(all))

    // 2. One instance killed in the middle of the input.
    const phase2 = lines(30, 40)
    await feed(phase2, async () => {
      assert.equal((await a.kill()).signal, 'SIGKILL')
    })
    all = counts([...phase1, ...phase2])
    assert.deepEqual(sequences(await readCommitted(total(all))), expected(all))
    assert.ok(b.running, b.tail())

    // 3. The server killed and restarted in the middle of the input.
    const phase3 = lines(70, 40)
    await feed(phase3, async () => {
      await server.kill9()
      await server.restart()
    })
    all = counts([...phase1, ...phase2, ...phase3])
    assert.deepEqual(sequences(await readCommitted(total(all))), expected(all))
    assert.ok(b.running, b.tail())

    const exit = await b.stop(60_000)
    assert.equal(exit.code, 143, b.tail())
  })
})
