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

/**
 * A record that also tells where its bytes lie: its key's `keyLength` bytes from `offset` in
 * `bytes`, then its value's `valueLength` bytes (-1: a tombstone). `key` and `value` hold the same
 * bytes. An engine that copies records may copy such a record's bytes from `bytes` without reading
 * `key` and `value`, which such a record may make only when they are read (the coordinator's
 * encoder carves OffsetCommit records out of a shared buffer and makes their views on demand).
 */
export interface LaidOutRecord extends CoordinatorRecord {
  readonly bytes: Uint8Array
  readonly offset: number
  readonly keyLength: number
  readonly valueLength: number
}

/** Whether `r` tells where its bytes lie ({@link LaidOutRecord}). */
export function isLaidOut(r: CoordinatorRecord): r is LaidOutRecord {
  return (r as Partial<LaidOutRecord>).bytes !== undefined
}

/** One shard's batch of a group commit (see RecordStore.appendBatches). */
export interface ShardBatch {
  readonly shard: number
  readonly records: readonly CoordinatorRecord[]
}

/**
 * Which keys a load may return by their latest record alone (`LoadOptions.latestOnly`): the key's
 * `length` bytes from `start` in `bytes`, where the store holds them (no view is made for it).
 */
export type LatestOnly = (bytes: Uint8Array, start: number, length: number) => boolean

/** Options of `RecordStore.load`. */
export interface LoadOptions {
  /**
   * For the keys it accepts, `load` returns only the key's latest record, at its place in the log,
   * and nothing of a key whose latest record is a tombstone: for those keys the log as `compact`
   * leaves it. Every record of the other keys is returned. docs/storage.md, "Superseded records
   * are not replayed".
   */
  readonly latestOnly?: LatestOnly
}

export interface RecordStore {
  /** Opens the store (creates files and tables when missing). */
  open(): Promise<void>
  /**
   * Appends a batch to one shard's log atomically: either every record becomes durable, in order,
   * or none does and the promise rejects. Batches on one shard are applied in call order.
   */
  append(shard: number, records: readonly CoordinatorRecord[]): Promise<void>
  /**
   * Appends the batches of several shards as one write (group commit: one transaction, one round
   * trip): either every batch becomes durable, in order, or none does and the promise rejects. A
   * shard's batches are applied in call order, and in list order within one call. Optional: a store
   * without it gets each batch through `append`.
   */
  appendBatches?(batches: readonly ShardBatch[]): Promise<void>
  /**
   * Every live record of one shard in append order (tombstones may or may not be included). With
   * `options.latestOnly`, of the keys it accepts only the latest record, none of a key whose latest
   * record is a tombstone (every built-in engine leaves the others out before it makes their
   * objects; a store that ignores the option returns them, and loading replays them).
   */
  load(shard: number, options?: LoadOptions): Promise<CoordinatorRecord[]>
  /** Drops records superseded by a later record with the same key, and tombstones. */
  compact(shard: number): Promise<void>
  /** Flushes and releases everything. Safe to call more than once. */
  close(): Promise<void>
}

/**
 * A test hook every built-in engine offers (added to the interface file so callers' tests can make a
 * storage failure happen without knowing which engine runs): the next `append`, on any shard, rejects
 * with `error` (default: a `StorageError` with code `STORAGE_INJECTED_FAILURE`) and writes nothing.
 * It fires once; later appends behave normally. Kept out of `RecordStore` itself so that a future
 * engine need not carry a test hook to be a valid store.
 */
export interface FaultInjection {
  failNextAppend(error?: Error): void
}
