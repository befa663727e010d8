/**
 * The record store: the only durable state of the coordinator. Every shard (one per
 * `offsets.topic.num.partitions` partition) has its own ordered log of key/value records. A record's
 * key identifies what it describes; a later record with the same key supersedes the earlier one, and
 * a record whose value is null is a tombstone. Engines may compact by key at any time, so `load`
 * returns, per key, at least the latest record in append order (tombstones may be dropped).
 */
export interface CoordinatorRecord {
  /** Encoded record key (int16 type id + key struct, as Kafka writes coordinator keys). */
  readonly key: Uint8Array
  /** Encoded record value (int16 version + value struct), or null for a tombstone. */
  readonly value: Uint8Array | null
}

export interface RecordStore {
  /** Opens the store (creates files and tables when missing). */
  open(): Promise<void>
  /**
   * Appends a batch to one shard's log atomically: either every record becomes durable, in order,
   * or none does and the promise rejects. Batches on one shard are applied in call order.
   */
  append(shard: number, records: readonly CoordinatorRecord[]): Promise<void>
  /** Every live record of one shard in append order (tombstones may or may not be included). */
  load(shard: number): Promise<CoordinatorRecord[]>
  /** Drops records superseded by a later record with the same key, and tombstones. */
  compact(shard: number): Promise<void>
  /** Flushes and releases everything. Safe to call more than once. */
  close(): Promise<void>
}
