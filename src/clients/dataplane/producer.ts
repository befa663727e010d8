/**
 * A small producer: `send` writes records as one v2 batch per partition to each partition's leader
 * (Produce, up to v12, which names topics), waits for the acknowledgement and answers each record's
 * offset. Keyed records go where Kafka's producer would put them (murmur2); unkeyed ones rotate
 * over the partitions. Retriable failures are retried (only for the partitions not yet
 * acknowledged) until `deliveryTimeoutMs`. It is not idempotent: a retry after a lost answer may
 * write a batch twice, as Kafka's producer with enable.idempotence=false may.
 */
import { NetworkClient, type NetworkClientOptions } from '../network/client.js'
import { KafkaError, kafkaErrorFromCode } from '../network/errors.js'
import { partitionForKey } from './partitioner.js'
import { type CompressionCodecName, encodeBatch, type OutgoingRecord } from './records.js'

export interface ProducerOptions extends NetworkClientOptions {
  /** -1 (all, default) or 1 (leader) */
  readonly acks?: -1 | 1
  /** compression.type (none) */
  readonly compression?: CompressionCodecName
  /** delivery.timeout.ms (120000): how long `send` retries */
  readonly deliveryTimeoutMs?: number
}

export interface ProducerRecord extends OutgoingRecord {
  readonly topic: string
  /** the partition; chosen from the key (or in turn when there is none) when absent */
  readonly partition?: number
}

export interface RecordMetadata {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  /** the record's timestamp (the broker's append time on a LogAppendTime topic) */
  readonly timestamp: number
}

interface Leaders {
  readonly count: number
  readonly leaderOf: ReadonlyMap<number, number>
}

export class Producer {
  readonly #client: NetworkClient
  readonly #acks: -1 | 1
  readonly #codec: CompressionCodecName
  readonly #deliveryTimeoutMs: number
  readonly #requestTimeoutMs: number
  readonly #topics = new Map<string, Leaders>()
  #next = 0

  private constructor(opts: ProducerOptions) {
    this.#client = new NetworkClient({ clientId: 'topograph-producer', ...opts })
    this.#acks = opts.acks ?? -1
    this.#codec = opts.compression ?? 'none'
    this.#deliveryTimeoutMs = opts.deliveryTimeoutMs ?? 120_000
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? 30_000
  }

  static create(opts: ProducerOptions): Producer {
    return new Producer(opts)
  }

  /** Writes the records; resolves with each one's partition and offset, in the order given. */
  async send(records: readonly ProducerRecord[]): Promise<RecordMetadata[]> {
    const results: Array<RecordMetadata | undefined> = new Array(records.length)
    const partitionOf: Array<number | undefined> = records.map((r) => r.partition)
    const now = Date.now()
    await this.#client.withRetries(
      async () => {
        const pending = records.map((r, i) => ({ r, i })).filter(({ i }) => results[i] === undefined)
        if (pending.length === 0) return
        await this.#refresh([...new Set(pending.map(({ r }) => r.topic))])
        // topic → partition → record indexes
        const byLeader = new Map<number, Map<string, Map<number, number[]>>>()
        for (const { r, i } of pending) {
          const leaders = this.#topics.get(r.topic)!
          partitionOf[i] ??=
            r.key !== null ? partitionForKey(r.key, leaders.count) : this.#next++ % leaders.count
          const p = partitionOf[i]!
          const leader = leaders.leaderOf.get(p)
          if (leader === undefined) {
            this.#topics.delete(r.topic)
            throw new KafkaError(`No leader for ${r.topic}-${p}`, { retriable: true })
          }
          const topics = byLeader.get(leader) ?? new Map<string, Map<number, number[]>>()
          const parts = topics.get(r.topic) ?? new Map<number, number[]>()
          parts.set(p, [...(parts.get(p) ?? []), i])
          topics.set(r.topic, parts)
          byLeader.set(leader, topics)
        }
        const failures: KafkaError[] = []
        await Promise.all(
          [...byLeader].map(async ([leader, topics]) => {
            const node = this.#client.brokers.find((b) => b.nodeId === leader)
            if (node === undefined) throw new KafkaError(`Broker ${leader} is unknown`, { retriable: true })
            const res = await this.#client.sendTo(
              node,
              0,
              {
                transactionalId: null,
                acks: this.#acks,
                timeoutMs: this.#requestTimeoutMs,
                topicData: [...topics].map(([name, parts]) => ({
                  name,
                  topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
                  partitionData: [...parts].map(([index, idx]) => ({
                    index,
                    records: encodeBatch(
                      idx.map((i) => records[i]!),
                      this.#codec,
                      now,
                    ),
                  })),
                })),
              },
              { maxVersion: 12 },
            )
            for (const t of res.responses) {
              for (const p of t.partitionResponses) {
                const idx = topics.get(t.name)?.get(p.index) ?? []
                if (p.errorCode !== 0) {
                  const e = kafkaErrorFromCode(p.errorCode, p.errorMessage)
                  if (e.retriable) this.#topics.delete(t.name)
                  failures.push(e)
                  continue
                }
                const base = Number(p.baseOffset)
                const appendTime = Number(p.logAppendTimeMs)
                idx.forEach((i, n) => {
                  results[i] = {
                    topic: t.name,
                    partition: p.index,
                    offset: base + n,
                    timestamp: appendTime >= 0 ? appendTime : (records[i]!.timestamp ?? now),
                  }
                })
              }
            }
          }),
        )
        const fatal = failures.find((e) => !e.retriable)
        if (fatal !== undefined) throw fatal
        if (failures.length > 0) throw failures[0]!
        if (results.some((r) => r === undefined))
          throw new KafkaError('The broker did not answer for every partition', { retriable: true })
      },
      { deadline: Date.now() + this.#deliveryTimeoutMs, operation: 'send' },
    )
    return results as RecordMetadata[]
  }

  /** Partition counts and leaders of topics not known yet (Metadata). */
  async #refresh(topics: readonly string[]): Promise<void> {
    const missing = topics.filter((t) => !this.#topics.has(t))
    if (missing.length === 0) return
    const md = await this.#client.metadata(missing)
    for (const name of missing) {
      const t = md.topics.find((x) => x.name === name)
      if (t === undefined || t.errorCode !== 0 || t.partitions.length === 0)
        throw t === undefined || t.errorCode === 0
          ? new KafkaError(`Topic ${name} not found.`, {
              errorName: 'UNKNOWN_TOPIC_OR_PARTITION',
              retriable: true,
            })
          : kafkaErrorFromCode(t.errorCode)
      this.#topics.set(name, {
        count: t.partitions.length,
        leaderOf: new Map(
          t.partitions.filter((p) => p.leaderId >= 0).map((p) => [p.partitionIndex, p.leaderId]),
        ),
      })
    }
  }

  /** The partition count of a topic (Metadata when not known yet). */
  async partitionCount(topic: string): Promise<number> {
    await this.#client.withRetries(() => this.#refresh([topic]), {
      deadline: Date.now() + this.#deliveryTimeoutMs,
      operation: 'partitionCount',
    })
    return this.#topics.get(topic)!.count
  }

  async close(): Promise<void> {
    await this.#client.close()
  }
}
