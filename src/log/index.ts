/**
 * The log: Topograph's partitions as Kafka stores them (docs/log.md). It imports nothing from
 * src/coordinator or src/server; the Kafka handlers sit on top of it.
 *
 * Public interface (additive changes only):
 *
 *   const logs = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: ['/data/logs'] }, { logger })
 *   await logs.open()                                    // recovers after an unclean shutdown
 *   await logs.createPartitions('t', topicId, 0, 3, { cleanupPolicy: ['compact'] })   // opens or creates
 *   logs.updateTopicConfig('t', { retentionMs: 1000 }); await logs.deleteTopic('t')
 *   const p = logs.partition('t', 0)                     // PartitionLog | undefined
 *   await p.append(batchBytes, { now: Date.now(), produceVersion: 9 })   // AppendResult (errorCode, baseOffset, …)
 *   const marker = txnMarker({ producerId, producerEpoch, committed, coordinatorEpoch, timestamp }, crc32c)
 *   await p.appendMarker(marker, { now, transactionVersion: 2 })   // transaction markers (the coordinator's)
 *   await p.read(fetchOffset, maxBytes, { minOneMessage, isolationLevel })  // ReadResult (records, HW, LSO, aborted)
 *   p.bytesAvailable(fetchOffset, isolationLevel)        // long-poll MinBytes accounting
 *   const off = p.addListener((event) => …)              // long-poll wake-ups, no polling
 *   await p.listOffsets(ts, isolationLevel)              // ListOffsets semantics, data-plane.md §7
 *   await p.deleteRecordsBefore(offset)                  // DeleteRecords, §8
 *   p.endOffsetForLeaderEpoch(epoch)                     // OffsetForLeaderEpoch, §9
 *   p.producerStates()                                   // DescribeProducers
 *   await logs.logDirs()                                 // DescribeLogDirs
 *   await logs.close()                                   // snapshots, checkpoints, clean-shutdown marker
 *
 *   const ids = new ProducerIdManager(logs.metadataDir()); await ids.open(); await ids.next()   // InitProducerId
 *
 * Errors a client can cause come back as Kafka error codes in the results; an I/O failure takes the
 * partition offline (KAFKA_STORAGE_ERROR from then on); a deleted partition answers
 * UNKNOWN_TOPIC_OR_PARTITION.
 */
export * from './types.js'
export {
  checkLogConfig,
  DEFAULT_LOG_CONFIG,
  DEFAULT_LOG_MANAGER_CONFIG,
  LOG_CONFIG_KEYS,
  LOG_MANAGER_CONFIG_KEYS,
  LONG_MAX,
  resolveLogConfig,
} from './config.js'
export { createLogManager, LogManagerImpl, type LogManagerOptions } from './manager.js'
export { MemoryLogStorage } from './memory.js'
export type { LogStorage, PartitionStore } from './storage.js'
export * as batch from './batch.js'
export { crc32c, compress, decompress } from './compression.js'
export { writeFileAtomic } from './file-layer.js'
export { PRODUCER_ID_BLOCK_SIZE, ProducerIdManager } from './producer-ids.js'
export { FileLogStorage, type FileLayer, type FileLogStorageOptions, NODE_FILE_LAYER } from './file.js'
export { LEADER_EPOCH } from './partition-log.js'
export { ControlRecordType, TXN_MARKER_ATTRIBUTES, type TxnMarker, txnMarker } from './marker.js'
export { type CleanStats, LogCleaner } from './cleaner.js'
