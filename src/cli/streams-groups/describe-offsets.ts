/**
 * `kafka-streams-groups --describe [--offsets] [--verbose]`, as Kafka's StreamsGroupCommand
 * printOffsets: the partitions of the members' active tasks (source and repartition source topics
 * of each task's subtopology), their earliest and latest offsets (ListOffsets), the committed
 * offsets, and the lag = log end offset − committed offset (− earliest offset when nothing is
 * committed). Rows come in the order Kafka's hash map iterates them.
 */
import type { StreamsGroupDescription, TopicPartition } from '../../clients/admin/index.js'
import { OffsetSpec } from '../../clients/admin/index.js'
import { committedOffsets } from './group-topics.js'
import { type CommandContext, printError } from './io.js'
import { inHashOrder, tpKey } from './offsets-resetter.js'
import { UsageExit } from './options.js'

interface OffsetsInfo extends TopicPartition {
  readonly currentOffset: bigint | null
  readonly leaderEpoch: number | null
  readonly logEndOffset: bigint
  readonly lag: bigint
}

/** The partitions of the members' active tasks. */
function activePartitions(d: StreamsGroupDescription): TopicPartition[] {
  const topicsBySubtopology = new Map(
    d.subtopologies.map((s) => [
      s.subtopologyId,
      [...s.sourceTopics, ...s.repartitionSourceTopics.map((t) => t.name)],
    ]),
  )
  const out = new Map<string, TopicPartition>()
  for (const m of d.members) {
    for (const task of m.assignment.activeTasks) {
      const topics = topicsBySubtopology.get(task.subtopologyId)
      if (topics === undefined)
        throw new UsageExit(`Subtopology ${task.subtopologyId} not found in group description!`)
      for (const topic of topics) {
        for (const partition of task.partitions) out.set(tpKey(topic, partition), { topic, partition })
      }
    }
  }
  return [...out.values()]
}

async function offsetsOf(ctx: CommandContext, d: StreamsGroupDescription): Promise<OffsetsInfo[]> {
  const tps = activePartitions(d)
  const list = (spec: OffsetSpec) =>
    ctx.admin.listOffsets(
      tps.map((tp) => ({ ...tp, spec })),
      { timeoutMs: ctx.timeoutMs },
    )
  const earliest = new Map(
    (await list(OffsetSpec.earliest()).all()).map((r) => [tpKey(r.topic, r.partition), r.offset]),
  )
  const latest = new Map(
    (await list(OffsetSpec.latest()).all()).map((r) => [tpKey(r.topic, r.partition), r.offset]),
  )
  const committed = await committedOffsets(ctx, d.groupId)
  return inHashOrder(
    tps.map((tp) => {
      const key = tpKey(tp.topic, tp.partition)
      const end = latest.get(key)!
      const c = committed.get(key)
      const current = c?.offset ?? null
      return {
        topic: tp.topic,
        partition: tp.partition,
        currentOffset: current,
        leaderEpoch: c === undefined || c.leaderEpoch < 0 ? null : c.leaderEpoch,
        logEndOffset: end,
        lag: current !== null ? end - current : end - earliest.get(key)!,
      }
    }),
  )
}

const pad = (s: string | number | bigint, w: number): string => String(s).padEnd(w)

export async function printOffsets(
  ctx: CommandContext,
  d: StreamsGroupDescription,
  verbose: boolean,
): Promise<void> {
  const offsets = await offsetsOf(ctx, d)
  if (d.groupState === 'Dead' || d.members.length === 0) return
  if (d.groupState === 'Empty') printError(ctx.io, `Streams group '${d.groupId}' has no active members.`)
  const gl = Math.max(15, d.groupId.length)
  const tl = Math.max(15, ...offsets.map((o) => o.topic.length))
  if (!verbose) {
    const row = (a: string, b: string, c: string | number, e: string | bigint) =>
      `${pad(a, gl)} ${pad(b, tl)} ${pad(c, 10)} ${e}\n`
    ctx.io.out(row('GROUP', 'TOPIC', 'PARTITION', 'OFFSET-LAG'))
    for (const o of offsets) ctx.io.out(row(d.groupId, o.topic, o.partition, o.lag))
    return
  }
  const row = (c: ReadonlyArray<string | number | bigint>) =>
    `${pad(c[0]!, gl)} ${pad(c[1]!, tl)} ${pad(c[2]!, 10)} ${pad(c[3]!, 15)} ${pad(c[4]!, 15)} ${pad(c[5]!, 15)} ${pad(c[6]!, 15)}\n`
  ctx.io.out(
    row(['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LEADER-EPOCH', 'LOG-END-OFFSET', 'OFFSET-LAG']),
  )
  for (const o of offsets) {
    ctx.io.out(
      row([
        d.groupId,
        o.topic,
        o.partition,
        o.currentOffset ?? '-',
        o.leaderEpoch ?? '-',
        o.logEndOffset,
        o.lag,
      ]),
    )
  }
}
