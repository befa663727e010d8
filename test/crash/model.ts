/**
 * What the clients of one crash-point run were told before the kill (their acknowledgements) and
 * what was in flight: the input of the checker (checker.ts). Values of produced records are unique
 * per run and carry their send order (`<prefix>-<n>`, n increasing per partition), so "present
 * exactly once, in order" can be read off the log.
 */

export interface GroupObs {
  /** Highest group epoch a heartbeat answer carried. */
  maxGroupEpoch: number
  /** member id → the last member epoch a heartbeat answer gave it. */
  readonly members: Map<string, number>
  /** The topology epoch of an acknowledged push (answered NONE), if any. */
  ackedStored: number | undefined
  /** Something after the acknowledged push may move the stored epoch (a delete, the cleanup cycle, a conversion). */
  touched: boolean
  /** DeleteGroups answered NONE, or a classic JoinGroup converted it: the streams group must be gone. */
  gone: boolean
  /** The group may be cleaned up and expire on its own (empty, cleanup cycle running). */
  mayVanish: boolean
}

export interface ProducerObs {
  readonly producerId: bigint
  readonly producerEpoch: number
  /** Sequence of the next batch. */
  nextSeq: number
  /** The batch sent and not answered when the process died (the producer retries it). */
  inflight: { readonly batch: Uint8Array; readonly values: string[]; readonly seq: number } | undefined
}

export type PartitionKind = 'log' | 'retention' | 'compact' | 'txn'

export interface PartitionObs {
  readonly topic: string
  readonly partition: number
  readonly kind: PartitionKind
  /** value → the offset its acknowledgement gave. */
  readonly acked: Map<string, number>
  /** Values sent without an answer (they may or may not be in the log). */
  readonly inflight: Set<string>
  /** value → record key (compacted topics). */
  readonly keys: Map<string, string>
  producer: ProducerObs | undefined
  /** Offsets of the idempotent checks after the restart (the retried batch, the next one). */
  readonly prefix: string
}

export interface TxnObs {
  readonly transactionalId: string
  /** partition key → the values the transaction wrote there. */
  readonly values: Map<string, string[]>
  outcome: 'committed' | 'aborted' | 'unknown'
}

export class Observations {
  readonly groups = new Map<string, GroupObs>()
  readonly partitions = new Map<string, PartitionObs>()
  readonly txns: TxnObs[] = []

  group(groupId: string): GroupObs {
    let g = this.groups.get(groupId)
    if (g === undefined) {
      g = {
        maxGroupEpoch: 0,
        members: new Map(),
        ackedStored: undefined,
        touched: false,
        gone: false,
        mayVanish: false,
      }
      this.groups.set(groupId, g)
    }
    return g
  }

  partition(topic: string, partition: number, kind: PartitionKind): PartitionObs {
    const key = partitionKey(topic, partition)
    let p = this.partitions.get(key)
    if (p === undefined) {
      p = {
        topic,
        partition,
        kind,
        acked: new Map(),
        inflight: new Set(),
        keys: new Map(),
        producer: undefined,
        prefix: `${topic}.${partition}`,
      }
      this.partitions.set(key, p)
    }
    return p
  }
}

export const partitionKey = (topic: string, partition: number): string => `${topic}/${partition}`

/** The send order of a value `<prefix>-<n>`. */
export function seqOf(value: string): number {
  return Number(value.slice(value.lastIndexOf('-') + 1))
}
