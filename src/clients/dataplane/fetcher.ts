/**
 * Reading partitions and committing a group member's offsets, the two calls a processing loop needs
 * beside the member's heartbeat: `fetch` asks each partition's leader for records from a position
 * (Fetch up to v12, without a fetch session, read_uncommitted) and decodes them; `commit` sends a
 * member's OffsetCommit with its member id and epoch (v9 at most, which names topics).
 */
import { NetworkClient, type NetworkClientOptions } from '../network/client.js'
import { KafkaError, kafkaErrorFromCode } from '../network/errors.js'
import { decodeFetchedRecords, type IncomingRecord } from './records.js'

export interface TopicPartitionPosition {
  readonly topic: string
  readonly partition: number
  readonly offset: number
}

/** What one partition gave. `error` (e.g. OFFSET_OUT_OF_RANGE) leaves the position where it was. */
export interface FetchedPartition {
  readonly topic: string
  readonly partition: number
  readonly records: readonly IncomingRecord[]
  /** where to fetch next */
  readonly nextOffset: number
  readonly highWatermark: number
  readonly logStartOffset: number
  readonly error: KafkaError | null
}

export interface FetchOptions {
  /** how long the broker may wait for data (500) */
  readonly maxWaitMs?: number
  /** per partition (1 MiB) */
  readonly partitionMaxBytes?: number
}

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'

export class Fetcher {
  readonly #client: NetworkClient

  constructor(opts: NetworkClientOptions) {
    this.#client = new NetworkClient({ clientId: 'topograph-fetcher', ...opts })
  }

  /** One Fetch per leader for the positions; one answer per position, in the order given. */
  async fetch(
    positions: readonly TopicPartitionPosition[],
    opts: FetchOptions = {},
  ): Promise<FetchedPartition[]> {
    if (positions.length === 0) return []
    const topics = [...new Set(positions.map((p) => p.topic))]
    const md = await this.#client.metadata(topics)
    const leaderOf = new Map<string, number>()
    for (const t of md.topics)
      for (const p of t.partitions)
        if (t.name !== null) leaderOf.set(`${t.name}-${p.partitionIndex}`, p.leaderId)
    const byLeader = new Map<number, TopicPartitionPosition[]>()
    const out = new Map<string, FetchedPartition>()
    for (const p of positions) {
      const leader = leaderOf.get(`${p.topic}-${p.partition}`)
      if (leader === undefined || leader < 0) {
        out.set(`${p.topic}-${p.partition}`, {
          ...p,
          records: [],
          nextOffset: p.offset,
          highWatermark: -1,
          logStartOffset: -1,
          error: kafkaErrorFromCode(3),
        })
        continue
      }
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), p])
    }
    await Promise.all(
      [...byLeader].map(async ([leader, ps]) => {
        const node = this.#client.brokers.find((b) => b.nodeId === leader)
        if (node === undefined) throw new KafkaError(`Broker ${leader} is unknown`, { retriable: true })
        const byTopic = new Map<string, TopicPartitionPosition[]>()
        for (const p of ps) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p])
        const maxWaitMs = opts.maxWaitMs ?? 500
        const res = await this.#client.sendTo(
          node,
          1,
          {
            clusterId: null,
            replicaId: -1,
            replicaState: { replicaId: -1, replicaEpoch: -1n },
            maxWaitMs,
            minBytes: 1,
            maxBytes: 50 * 1024 * 1024,
            isolationLevel: 0,
            sessionId: 0,
            sessionEpoch: -1,
            topics: [...byTopic].map(([topic, tps]) => ({
              topic,
              topicId: ZERO_UUID,
              partitions: tps.map((p) => ({
                partition: p.partition,
                currentLeaderEpoch: -1,
                fetchOffset: BigInt(p.offset),
                lastFetchedEpoch: -1,
                logStartOffset: -1n,
                partitionMaxBytes: opts.partitionMaxBytes ?? 1024 * 1024,
                replicaDirectoryId: ZERO_UUID,
                highWatermark: -1n,
              })),
            })),
            forgottenTopicsData: [],
            rackId: '',
          },
          { maxVersion: 12, timeoutMs: maxWaitMs + 30_000 },
        )
        if (res.errorCode !== 0) throw kafkaErrorFromCode(res.errorCode)
        for (const t of res.responses) {
          for (const p of t.partitions) {
            const asked = byTopic.get(t.topic)?.find((x) => x.partition === p.partitionIndex)
            if (asked === undefined) continue
            const decoded =
              p.errorCode === 0
                ? decodeFetchedRecords(p.records, asked.offset)
                : { records: [], nextOffset: asked.offset }
            out.set(`${t.topic}-${p.partitionIndex}`, {
              topic: t.topic,
              partition: p.partitionIndex,
              records: decoded.records,
              nextOffset: decoded.nextOffset,
              highWatermark: Number(p.highWatermark),
              logStartOffset: Number(p.logStartOffset),
              error: p.errorCode === 0 ? null : kafkaErrorFromCode(p.errorCode),
            })
          }
        }
      }),
    )
    return positions.map(
      (p) =>
        out.get(`${p.topic}-${p.partition}`) ?? {
          ...p,
          records: [],
          nextOffset: p.offset,
          highWatermark: -1,
          logStartOffset: -1,
          error: new KafkaError(`The response did not mention ${p.topic}-${p.partition}`),
        },
    )
  }

  /**
   * Commits offsets as a member of `groupId` (its member id and epoch). Fails with the first
   * partition error (STALE_MEMBER_EPOCH and the like: the member's assignment moved on).
   */
  async commit(
    groupId: string,
    member: { readonly memberId: string; readonly memberEpoch: number },
    offsets: readonly TopicPartitionPosition[],
  ): Promise<void> {
    if (offsets.length === 0) return
    const node = await this.#client.findCoordinator(groupId)
    const byTopic = new Map<string, TopicPartitionPosition[]>()
    for (const o of offsets) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o])
    const res = await this.#client.sendTo(
      node,
      8,
      {
        groupId,
        generationIdOrMemberEpoch: member.memberEpoch,
        memberId: member.memberId,
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [...byTopic].map(([name, os]) => ({
          name,
          topicId: ZERO_UUID,
          partitions: os.map((o) => ({
            partitionIndex: o.partition,
            committedOffset: BigInt(o.offset),
            committedLeaderEpoch: -1,
            committedMetadata: '',
          })),
        })),
      },
      { maxVersion: 9 },
    )
    for (const t of res.topics)
      for (const p of t.partitions) {
        if (p.errorCode !== 0) {
          if (p.errorCode === 16 || p.errorCode === 15 || p.errorCode === 14)
            this.#client.markCoordinatorUnknown(groupId)
          throw kafkaErrorFromCode(p.errorCode)
        }
      }
  }

  async close(): Promise<void> {
    await this.#client.close()
  }
}
