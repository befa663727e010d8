/**
 * The reset scenarios of kafka-streams-groups, as Kafka's shared GroupOffsetsResetter computes
 * them: the partitions named by `--input-topic topic[:p,q]`, and the new offset of each partition
 * for `--to-offset`, `--to-earliest`, `--to-latest`, `--shift-by`, `--to-datetime`,
 * `--by-duration`, `--from-file` and `--to-current`. Requested offsets are kept between the log
 * start and end offsets (with Kafka's WARN lines); partitions without a record at a timestamp fall
 * back to the log end (with Kafka's `Warn:` line). Plans come out in the order Kafka's hash maps
 * iterate them.
 */
import { readFileSync } from 'node:fs'
import {
  OffsetSpec,
  type TopicDescription,
  type TopicPartition,
  topicPartitionString,
} from '../../clients/admin/index.js'
import { javaHashOrder, javaStringHash, topicPartitionHash } from '../../java-order.js'
import {
  type CommandContext,
  getOrRuntime,
  JavaThrowable,
  logLine,
  printError,
  runtimeOfExecution,
} from './io.js'
import {
  csvFields,
  epochMillisMinus,
  javaSplit,
  parseDateTime,
  parseDuration,
  parseJavaInt,
  parseJavaLong,
} from './java-text.js'
import { UsageExit } from './options.js'

export interface PlannedOffset extends TopicPartition {
  readonly offset: bigint
}

export const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`

/** `tps` as a Java HashMap keyed by TopicPartition iterates them. */
export function inHashOrder<T extends TopicPartition>(tps: readonly T[]): T[] {
  return javaHashOrder(tps, (tp) => topicPartitionHash(tp.topic, tp.partition))
}

/** Distinct partitions, first occurrence kept. */
export function distinct<T extends TopicPartition>(tps: readonly T[]): T[] {
  const seen = new Map<string, T>()
  for (const tp of tps)
    if (!seen.has(tpKey(tp.topic, tp.partition))) seen.set(tpKey(tp.topic, tp.partition), tp)
  return [...seen.values()]
}

const LOGGER = 'org.apache.kafka.tools.GroupOffsetsResetter'

/** The first `--to-offset` value etc., converted once (Kafka converts when the service starts). */
export interface ResetValues {
  readonly toOffset: bigint | null
  readonly shiftBy: bigint | null
}

export class OffsetsResetter {
  readonly #ctx: CommandContext
  readonly #values: ResetValues

  constructor(ctx: CommandContext, values: ResetValues) {
    this.#ctx = ctx
    this.#values = values
  }

  /** Offsets by spec; a partition missing from the answer is unknown (null). */
  async #logOffsets(tps: readonly TopicPartition[], spec: OffsetSpec): Promise<Map<string, bigint | null>> {
    const answered = await getOrRuntime(
      this.#ctx.admin
        .listOffsets(
          tps.map((tp) => ({ ...tp, spec })),
          { timeoutMs: this.#ctx.timeoutMs },
        )
        .all(),
    )
    const byKey = new Map(answered.map((a) => [tpKey(a.topic, a.partition), a.offset]))
    return new Map(
      tps.map((tp) => [tpKey(tp.topic, tp.partition), byKey.get(tpKey(tp.topic, tp.partition)) ?? null]),
    )
  }

  logStartOffsets(tps: readonly TopicPartition[]): Promise<Map<string, bigint | null>> {
    return this.#logOffsets(tps, OffsetSpec.earliest())
  }

  logEndOffsets(tps: readonly TopicPartition[]): Promise<Map<string, bigint | null>> {
    return this.#logOffsets(tps, OffsetSpec.latest())
  }

  /**
   * Offsets at a timestamp. Partitions with no record at or after it (offset -1) print Kafka's
   * `Warn:` line and take their log end offset.
   */
  async #logTimestampOffsets(
    tps: readonly TopicPartition[],
    timestamp: bigint,
  ): Promise<Map<string, bigint | null>> {
    const answered = await getOrRuntime(
      this.#ctx.admin
        .listOffsets(
          tps.map((tp) => ({ ...tp, spec: OffsetSpec.forTimestamp(timestamp) })),
          { timeoutMs: this.#ctx.timeoutMs },
        )
        .all(),
    )
    const out = new Map<string, bigint | null>()
    const empty: TopicPartition[] = []
    for (const a of answered) {
      if (a.offset !== -1n) out.set(tpKey(a.topic, a.partition), a.offset)
      else empty.push({ topic: a.topic, partition: a.partition })
    }
    for (const tp of inHashOrder(empty)) {
      this.#ctx.io.out(
        `\nWarn: Partition ${tp.partition} from topic ${tp.topic} is empty. Falling back to latest known offset.\n`,
      )
    }
    for (const [k, v] of await this.logEndOffsets(empty)) out.set(k, v)
    return out
  }

  /** Keeps each requested offset within [log start, log end], with Kafka's WARN lines. */
  async #checkOffsetsRange(requested: readonly PlannedOffset[]): Promise<PlannedOffset[]> {
    const starts = await this.logStartOffsets(requested)
    const ends = await this.logEndOffsets(requested)
    const out: PlannedOffset[] = []
    for (const r of inHashOrder(requested)) {
      const key = tpKey(r.topic, r.partition)
      const end = ends.get(key) ?? null
      const start = starts.get(key) ?? null
      const tp = topicPartitionString(r)
      if (end !== null && r.offset > end) {
        logLine(
          this.#ctx.io,
          'WARN',
          `New offset (${r.offset}) is higher than latest offset for topic partition ${tp}. Value will be set to ${end}.`,
          LOGGER,
        )
        out.push({ topic: r.topic, partition: r.partition, offset: end })
      } else if (start !== null && r.offset < start) {
        logLine(
          this.#ctx.io,
          'WARN',
          `New offset (${r.offset}) is lower than earliest offset for topic partition ${tp}. Value will be set to ${start}.`,
          LOGGER,
        )
        out.push({ topic: r.topic, partition: r.partition, offset: start })
      } else out.push(r)
    }
    return inHashOrder(out)
  }

  /** `topic:0,1` into its partitions; Kafka's IllegalArgumentException texts (with the help). */
  parseTopicsWithPartitions(arg: string): TopicPartition[] {
    const parts = javaSplit(arg, ':')
    if (parts.length !== 2)
      throw new UsageExit(`Invalid topic arg '${arg}', expected topic name and partitions`)
    const [topic, partitions] = parts as [string, string]
    return javaSplit(partitions, ',').map((p) => {
      const partition = parseJavaInt(p)
      if (partition === null) throw new UsageExit(`Invalid partition '${p}' specified in topic arg '${arg}''`)
      return { topic, partition }
    })
  }

  /**
   * `--input-topic` values: `topic:p,q` as given, then every partition of each bare topic (from
   * DescribeTopics; a failure there is rethrown as Kafka's ExecutionException cause).
   */
  async parseTopicPartitionsToReset(args: readonly string[]): Promise<TopicPartition[]> {
    const withPartitions = args.filter((a) => a.includes(':'))
    const bare = args.filter((a) => !a.includes(':'))
    const specified = withPartitions.flatMap((a) => this.parseTopicsWithPartitions(a))
    const unspecified: TopicPartition[] = []
    if (bare.length > 0) {
      for (const d of await this.#describeAll(bare)) {
        for (const p of d.partitions) unspecified.push({ topic: d.name, partition: p.partition })
      }
    }
    return [...specified, ...unspecified]
  }

  /**
   * DescribeTopics for every topic (Kafka's `allTopicNames().get()`): throws the first failure in
   * Kafka's order, as the cause of the ExecutionException; callers wrap it as Kafka does.
   */
  async #describeAll(topics: readonly string[]): Promise<TopicDescription[]> {
    const settled = await this.#ctx.admin.describeTopics(topics, { timeoutMs: this.#ctx.timeoutMs }).settled()
    const out: TopicDescription[] = []
    for (const topic of javaHashOrder([...settled.keys()], javaStringHash)) {
      const r = settled.get(topic)!
      if ('error' in r) throw r.error
      out.push(r.value)
    }
    return out
  }

  /** Kafka's checkAllTopicPartitionsValid: every partition exists and has a leader. */
  async checkAllTopicPartitionsValid(tps: readonly TopicPartition[]): Promise<void> {
    const topics = [...new Set(tps.map((tp) => tp.topic))]
    let described: TopicDescription[]
    try {
      described = await this.#describeAll(topics)
    } catch (e) {
      throw runtimeOfExecution(e)
    }
    const exists = new Set(described.flatMap((d) => d.partitions.map((p) => tpKey(d.name, p.partition))))
    const missing = tps.filter((tp) => !exists.has(tpKey(tp.topic, tp.partition)))
    if (missing.length > 0) {
      throw new JavaThrowable(`The partitions "${missing.map(topicPartitionString).join(',')}" do not exist`)
    }
    try {
      described = await this.#describeAll(topics)
    } catch (e) {
      throw runtimeOfExecution(e)
    }
    const leaderless = new Set(
      described.flatMap((d) =>
        d.partitions.filter((p) => p.leader === null).map((p) => tpKey(d.name, p.partition)),
      ),
    )
    const noLeader = tps.filter((tp) => leaderless.has(tpKey(tp.topic, tp.partition)))
    if (noLeader.length > 0) {
      throw new JavaThrowable(
        `The partitions "${noLeader.map(topicPartitionString).join(',')}" have no leader`,
      )
    }
  }

  async resetToOffset(tps: readonly TopicPartition[]): Promise<PlannedOffset[]> {
    const offset = this.#values.toOffset ?? 0n
    return this.#checkOffsetsRange(tps.map((tp) => ({ topic: tp.topic, partition: tp.partition, offset })))
  }

  async resetToEarliest(tps: readonly TopicPartition[]): Promise<PlannedOffset[]> {
    const starts = await this.logStartOffsets(tps)
    return inHashOrder(
      tps.map((tp) => {
        const o = starts.get(tpKey(tp.topic, tp.partition)) ?? null
        if (o === null)
          throw new UsageExit(`Error getting starting offset of topic partition: ${topicPartitionString(tp)}`)
        return { topic: tp.topic, partition: tp.partition, offset: o }
      }),
    )
  }

  async resetToLatest(tps: readonly TopicPartition[]): Promise<PlannedOffset[]> {
    const ends = await this.logEndOffsets(tps)
    return inHashOrder(
      tps.map((tp) => {
        const o = ends.get(tpKey(tp.topic, tp.partition)) ?? null
        if (o === null)
          throw new UsageExit(`Error getting ending offset of topic partition: ${topicPartitionString(tp)}`)
        return { topic: tp.topic, partition: tp.partition, offset: o }
      }),
    )
  }

  async resetByShiftBy(
    tps: readonly TopicPartition[],
    committed: ReadonlyMap<string, bigint>,
  ): Promise<PlannedOffset[]> {
    const shift = this.#values.shiftBy ?? 0n
    const requested = tps.map((tp) => {
      const current = committed.get(tpKey(tp.topic, tp.partition))
      if (current === undefined) {
        throw new UsageExit(
          `Cannot shift offset for partition ${topicPartitionString(tp)} since there is no current committed offset`,
        )
      }
      // Java long arithmetic wraps.
      return { topic: tp.topic, partition: tp.partition, offset: BigInt.asIntN(64, current + shift) }
    })
    return this.#checkOffsetsRange(requested)
  }

  async #resetToTimestamp(tps: readonly TopicPartition[], timestamp: bigint): Promise<PlannedOffset[]> {
    const found = await this.#logTimestampOffsets(tps, timestamp)
    return inHashOrder(
      tps.map((tp) => {
        const o = found.get(tpKey(tp.topic, tp.partition)) ?? null
        if (o === null) {
          throw new UsageExit(
            `Error getting offset by timestamp of topic partition: ${topicPartitionString(tp)}`,
          )
        }
        return { topic: tp.topic, partition: tp.partition, offset: o }
      }),
    )
  }

  resetToDateTime(tps: readonly TopicPartition[], datetime: string): Promise<PlannedOffset[]> {
    return this.#resetToTimestamp(tps, parseDateTime(datetime))
  }

  resetByDuration(tps: readonly TopicPartition[], duration: string): Promise<PlannedOffset[]> {
    return this.#resetToTimestamp(tps, epochMillisMinus(Date.now(), parseDuration(duration)))
  }

  /**
   * The reset plan of `--from-file`, by group: `topic,partition,offset` lines for the one `--group`
   * given, else `group,topic,partition,offset` lines (Kafka's CsvUtils records).
   */
  resetPlanFromFile(file: string, groups: readonly string[]): Map<string, PlannedOffset[]> {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      throw new JavaThrowable(
        code === 'ENOENT'
          ? `java.nio.file.NoSuchFileException: ${file}`
          : `java.io.IOException: ${(e as Error).message}`,
        e,
      )
    }
    const lines = javaSplit(text, '\n')
    const noGroup = (line: string): PlannedOffset | null => {
      const f = csvFields(line)
      if (f === null || f.length > 3) return null
      const partition = parseJavaInt(f[1] ?? '0')
      const offset = parseJavaLong(f[2] ?? '0')
      if (partition === null || offset === null) return null
      return { topic: f[0]!, partition, offset }
    }
    const plan = new Map<string, PlannedOffset[]>()
    const add = (group: string, p: PlannedOffset): void => {
      const list = (plan.get(group) ?? []).filter((x) => x.topic !== p.topic || x.partition !== p.partition)
      list.push(p)
      plan.set(group, list)
    }
    const bad = (n: number): JavaThrowable =>
      new JavaThrowable(`java.io.IOException: Cannot read line ${n + 1} of ${file} as a reset plan record`)
    if (groups.length === 1 && lines.length > 0 && noGroup(lines[0]!) !== null) {
      lines.forEach((line, i) => {
        const r = noGroup(line)
        if (r === null) throw bad(i)
        add(groups[0]!, r)
      })
    } else {
      lines.forEach((line, i) => {
        const f = csvFields(line)
        if (f === null || f.length > 4) throw bad(i)
        const partition = parseJavaInt(f[2] ?? '0')
        const offset = parseJavaLong(f[3] ?? '0')
        if (partition === null || offset === null) throw bad(i)
        add(f[0]!, { topic: f[1] ?? '', partition, offset })
      })
    }
    return plan
  }

  async resetFromFile(groupId: string, plan: ReadonlyMap<string, PlannedOffset[]>): Promise<PlannedOffset[]> {
    const forGroup = plan.get(groupId)
    if (forGroup === undefined) {
      printError(this.#ctx.io, `No reset plan for group ${groupId} found.`)
      return []
    }
    return this.#checkOffsetsRange(forGroup)
  }

  /** The committed offset where there is one, else the log end offset. */
  async resetToCurrent(
    tps: readonly TopicPartition[],
    committed: ReadonlyMap<string, bigint>,
  ): Promise<PlannedOffset[]> {
    const out: PlannedOffset[] = []
    const without: TopicPartition[] = []
    for (const tp of tps) {
      const c = committed.get(tpKey(tp.topic, tp.partition))
      if (c === undefined) without.push(tp)
      else out.push({ topic: tp.topic, partition: tp.partition, offset: c })
    }
    const ends = await this.logEndOffsets(without)
    for (const tp of without) {
      const o = ends.get(tpKey(tp.topic, tp.partition)) ?? null
      if (o === null) {
        throw new JavaThrowable(`Error getting ending offset of topic partition: ${topicPartitionString(tp)}`)
      }
      out.push({ topic: tp.topic, partition: tp.partition, offset: o })
    }
    return inHashOrder(out)
  }
}
