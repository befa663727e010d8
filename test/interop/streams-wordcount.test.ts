// Kafka Streams (group.protocol=streams, KIP-1071) against a real Topograph process: two instances
// of Kafka's WordCount example (at_least_once), exact counts in the output topic, the changelog
// topic compacted, the topology shown by our kafka-streams-groups, then one instance killed with
// SIGKILL and the other taking over its tasks.
//
// What at_least_once guarantees across a crash: the survivor restarts the dead instance's tasks
// from their last committed input offsets, with stores restored from the changelog; records the dead
// instance processed after its last commit are processed again, so a count can only come out too
// high, never too low. When the kill happens after a commit that covered every input record (checked
// here: the group's committed offsets equal the end offsets of the input and repartition topics, and
// nothing is produced until after the kill), nothing is processed twice and every count is exact.
// That is the case this test sets up, and it asserts exact counts; the >= bound is asserted too, as
// the guarantee that holds whenever the kill happens.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  eventually,
  InteropServer,
  JavaClients,
  type JavaRecord,
  kafkaJavaSkip,
  killAll,
  type ManagedProcess,
  type ProduceRecord,
  run,
  startStreamsExample,
} from '../helpers/interop.js'

const APP = 'wc-app'
const INPUT = 'wc-input'
const OUTPUT = 'wc-output'
const REPARTITION = `${APP}-wordcount-group-by-word-repartition`
const CHANGELOG = `${APP}-wordcount-store-changelog`
const VOCABULARY = ['apple', 'Banana', 'cherry', 'DATE', 'elder', 'fig', 'grape', 'apple']
/** log.roll.ms of the test's server. */
const ROLL_MS = 1000
/**
 * How far apart the two phases' input records are stamped. Streams stamps each changelog record
 * with the timestamp of the input record behind it, and a segment rolls only at an append whose
 * timestamp is log.roll.ms past the segment's first batch (Kafka's LogSegment.shouldRoll), never by
 * the clock alone. With the phases' records stamped as they are produced, the steps between them
 * can take less than log.roll.ms: the changelog then takes all of phase 2 into its first segment,
 * which stays active with nothing after it to roll it, and is never cleaned.
 */
const PHASE_GAP_MS = 30 * ROLL_MS

/** Kafka's WordCount example's split: lower case, split on white space. */
const words = (line: string): string[] =>
  line
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== '')

function lines(from: number, count: number): string[] {
  return Array.from({ length: count }, (_, n) => {
    const i = from + n
    const ws = Array.from({ length: 1 + (i % 5) }, (_, j) => VOCABULARY[(i * 3 + j * 5) % VOCABULARY.length]!)
    return i % 7 === 0 ? `  ${ws.join('   ')} ` : ws.join(' ')
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
  return m
}

const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1)

/** Kafka's format of `--describe --topology` for this application's stored description. */
const EXPECTED_TOPOLOGY = `Topologies:
   Sub-topology: 0
    Processor: wordcount-group-by-word (stores: [])
      --> wordcount-group-by-word-repartition-filter
      <-- wordcount-split
    Processor: wordcount-group-by-word-repartition-filter (stores: [])
      --> wordcount-group-by-word-repartition-sink
      <-- wordcount-group-by-word
    Sink: wordcount-group-by-word-repartition-sink (topic: ${REPARTITION})
      <-- wordcount-group-by-word-repartition-filter
    Source: wordcount-source (topics: [${INPUT}])
      --> wordcount-split
    Processor: wordcount-split (stores: [])
      --> wordcount-group-by-word
      <-- wordcount-source

   Sub-topology: 1
    Processor: wordcount-count (stores: [wordcount-store])
      --> wordcount-to-stream
      <-- wordcount-group-by-word-repartition-source
    Source: wordcount-group-by-word-repartition-source (topics: [${REPARTITION}])
      --> wordcount-count
    Sink: wordcount-sink (topic: ${OUTPUT})
      <-- wordcount-to-stream
    Processor: wordcount-to-stream (stores: [])
      --> wordcount-sink
      <-- wordcount-count


`

/**
 * The node blocks of a topology text (one string per node, its lines joined), sorted per
 * subtopology: the same description in Kafka's Topology#describe() order and in the tool's order
 * compare equal.
 */
function nodeBlocks(text: string): string[][] {
  const subs: string[][] = []
  for (const line of text.split('\n')) {
    const l = line.trimEnd()
    if (/^\s*Sub-topology: /.test(l)) subs.push([])
    else if (/^\s+(Source|Processor|Sink): /.test(l)) subs.at(-1)!.push(l.trim())
    else if (/^\s+(-->|<--) /.test(l)) subs.at(-1)!.push(`${subs.at(-1)!.pop()!} ${l.trim()}`)
  }
  return subs.map((s) => s.sort())
}

describe('Kafka Streams WordCount, two instances, one killed', () => {
  let server: InteropServer
  let java: JavaClients
  const instances: ManagedProcess[] = []
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start({
      'group.streams.topology.description.plugin.class': 'memory',
      // a killed member is noticed after 10 s instead of 45 s
      'group.streams.session.timeout.ms': '10000',
      'group.streams.min.session.timeout.ms': '10000',
      'group.streams.heartbeat.interval.ms': '1000',
      'group.streams.min.heartbeat.interval.ms': '1000',
      'group.streams.initial.rebalance.delay.ms': '0',
      // segments roll after a second of record time (PHASE_GAP_MS), so that the cleaner may clean
      // all but the last one, and the cleaner looks for work every half second and cleans any
      // dirty share
      'log.roll.ms': String(ROLL_MS),
      'log.cleaner.backoff.ms': '500',
      'log.cleaner.min.cleanable.ratio': '0.01',
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

  const produceLines = async (ls: readonly string[], from: number, timestamp: number): Promise<void> => {
    const records: ProduceRecord[] = ls.map((value, n) => ({
      topic: INPUT,
      partition: (from + n) % 2,
      key: `line-${from + n}`,
      value,
      timestamp,
    }))
    await java.produce(records)
  }

  const readOutput = async (expectedRecords: number): Promise<JavaRecord[]> => {
    const { records } = await java.consume({
      assign: [
        [OUTPUT, 0],
        [OUTPUT, 1],
      ],
      seek: 'beginning',
      maxRecords: expectedRecords,
      timeoutMs: 180_000,
      valueFormat: 'long',
    })
    return records
  }

  const endOffsets = async (topic: string): Promise<[string, number, number][]> => {
    const r = await java.call<{ topic: string; partition: number; offset: number }[]>({
      op: 'listOffsets',
      spec: 'latest',
      partitions: [
        [topic, 0],
        [topic, 1],
      ],
    })
    return r.map((o) => [o.topic, o.partition, o.offset])
  }

  /** Resolves once the group has committed every record of the input and repartition topics. */
  const everythingCommitted = async (): Promise<void> => {
    let last: unknown
    await eventually(
      async () => {
        const ends = [...(await endOffsets(INPUT)), ...(await endOffsets(REPARTITION))]
        const committed = await java.call<[string, number, number][]>({
          op: 'listStreamsGroupOffsets',
          group: APP,
        })
        last = { ends, committed }
        const norm = (xs: [string, number, number][]): string =>
          JSON.stringify(xs.filter(([, , o]) => o > 0).sort())
        return norm(committed) === norm(ends) ? true : undefined
      },
      120_000,
      () => `committed offsets ${JSON.stringify(last)}`,
    )
  }

  test('counts, topology, changelog compaction, failover after SIGKILL', {
    skip: kafkaJavaSkip,
    timeout: 900_000,
  }, async () => {
    const settings = [
      // every count update goes to the changelog and the output (no record cache), commits every second
      'statestore.cache.max.bytes=0',
      'commit.interval.ms=1000',
    ]
    for (const name of ['wordcount-1', 'wordcount-2'])
      instances.push(
        startStreamsExample(name, 'examples.WordCount', [
          server.bootstrap,
          APP,
          'at_least_once',
          INPUT,
          OUTPUT,
          ...settings,
        ]),
      )
    await Promise.all(instances.map((p) => p.waitFor(/^state REBALANCING -> RUNNING$/m, 240_000)))

    // 1. Exact counts: each update of a word's count is in the output, in order.
    const phase1 = lines(0, 60)
    // Both phases are stamped in the past, PHASE_GAP_MS apart (see PHASE_GAP_MS).
    const phase1Timestamp = Date.now() - 2 * PHASE_GAP_MS
    await produceLines(phase1, 0, phase1Timestamp)
    const counts1 = counts(phase1)
    const words1 = [...counts1.values()].reduce((a, b) => a + b, 0)
    const out1 = await readOutput(words1)
    assert.equal(out1.length, words1, `output records: ${JSON.stringify(out1.slice(-5))}`)
    assert.deepEqual(
      new Map([...sequences(out1)].sort()),
      new Map([...counts1].sort().map(([w, c]) => [w, upTo(c)])),
    )

    // 2. The topology, as our kafka-streams-groups shows it, is the application's own.
    const described = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/kafka-streams-groups.ts',
        '--bootstrap-server',
        server.bootstrap,
        '--describe',
        '--topology',
        '--group',
        APP,
      ],
      { timeoutMs: 120_000 },
    )
    assert.equal(described.code, 0, described.stderr)
    assert.equal(described.stdout, EXPECTED_TOPOLOGY)
    const own = /^topology:\n([\s\S]*?)\n\n\n/m.exec(instances[0]!.stdout())
    assert.ok(own, instances[0]!.stdout())
    assert.deepEqual(
      nodeBlocks(described.stdout),
      nodeBlocks(
        own[1]!
          .replaceAll('wordcount-group-by-word-repartition)', `${REPARTITION})`)
          .replaceAll('wordcount-group-by-word-repartition]', `${REPARTITION}]`),
      ),
    )

    // 3. The internal topics the coordinator created: a compacted changelog, a repartition topic.
    assert.deepEqual(
      await java.call({ op: 'describeConfigs', topic: CHANGELOG, names: ['cleanup.policy'] }),
      {
        'cleanup.policy': 'compact',
      },
    )
    assert.deepEqual(
      await java.call({ op: 'describeConfigs', topic: REPARTITION, names: ['cleanup.policy'] }),
      {
        'cleanup.policy': 'delete',
      },
    )
    // 4. Kill one instance once every record is committed; the other takes over its tasks.
    await everythingCommitted()
    const [victim, survivor] = instances as [ManagedProcess, ManagedProcess]
    assert.equal((await victim.kill()).signal, 'SIGKILL')
    const phase2 = lines(60, 40)
    await produceLines(phase2, 60, phase1Timestamp + PHASE_GAP_MS)
    const all = counts([...phase1, ...phase2])
    const totalWords = [...all.values()].reduce((a, b) => a + b, 0)
    const out2 = await readOutput(totalWords)
    // Every record processed and committed: the output holds exactly the records read.
    await everythingCommitted()
    assert.equal(
      (await endOffsets(OUTPUT)).reduce((a, [, , o]) => a + o, 0),
      out2.length,
    )
    const finalCounts = new Map([...sequences(out2)].map(([w, s]) => [w, s.at(-1)!]))
    // at_least_once: never fewer than the true count ...
    for (const [w, c] of all) assert.ok((finalCounts.get(w) ?? 0) >= c, `${w}: ${finalCounts.get(w)} < ${c}`)
    // ... and exact here, the kill having come after a commit that covered every input record.
    assert.deepEqual(
      new Map([...sequences(out2)].sort()),
      new Map([...all].sort().map(([w, c]) => [w, upTo(c)])),
    )
    assert.ok(survivor.running, survivor.tail())

    // 5. The changelog holds one record per count update; after the cleaner ran, fewer records are
    // left and the latest value of every key is there. Phase 2's first record in each changelog
    // partition rolled phase 1's segment (PHASE_GAP_MS), which the cleaner may then compact.
    const written = (await endOffsets(CHANGELOG)).reduce((a, [, , o]) => a + o, 0)
    assert.equal(written, totalWords)
    let retained: JavaRecord[] = []
    await eventually(
      async () => {
        retained = (
          await java.consume({
            assign: [
              [CHANGELOG, 0],
              [CHANGELOG, 1],
            ],
            seek: 'beginning',
            maxRecords: written,
            timeoutMs: 5_000,
            valueFormat: 'long',
          })
        ).records
        return retained.length < written ? true : undefined
      },
      240_000,
      () => `the changelog still holds ${retained.length} of ${written} records (not compacted)`,
    )
    const latest = new Map<string, number>()
    for (const r of [...retained].sort((a, b) => a.partition - b.partition || a.offset - b.offset))
      latest.set(r.key!, r.value as number)
    assert.deepEqual(new Map([...latest].sort()), new Map([...all].sort()))

    // 6. The survivor stops cleanly.
    const exit = await survivor.stop(60_000)
    assert.equal(exit.code, 143, survivor.tail())
    assert.match(survivor.stdout(), /^closed$/m)
  })
})
