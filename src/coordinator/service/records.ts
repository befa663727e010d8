/** The group coordinator's records in the record store. */
import type { CoordinatorRecord } from '../../protocol/generated/coordinator-records.js'
import {
  decodeCoordinatorRecord,
  encodeCoordinatorRecord,
  encodeCoordinatorRecords,
  releaseEncodedRecords,
  UnknownRecordTypeError,
} from '../../protocol/records.js'
import type { RecordSerde } from '../runtime/types.js'

/** The record type id of OffsetCommit (Kafka's OffsetCommitKey apiKey). */
const OFFSET_COMMIT_TYPE_ID = 1

/** Coordinator records in the store: Kafka's key/value framing; unknown record types are skipped. */
export const coordinatorRecordSerde: RecordSerde<CoordinatorRecord> = {
  serialize: (record) => encodeCoordinatorRecord(record),
  serializeAll: (records) => encodeCoordinatorRecords(records),
  release: (records) => releaseEncodedRecords(records),
  // OffsetCommit records (type 1): each sets or removes one committed offset, and a group's
  // offsets are read sorted, so loading replays only the latest record of each. The other records
  // build groups and members whose order of creation shows (members in a group, groups in a
  // shard), so every one of them is replayed. The simple group an offset makes is made by the
  // latest record as well (docs/storage.md, "Superseded records are not replayed").
  latestOnly: (bytes, start, length) =>
    length >= 2 && bytes[start] === 0 && bytes[start + 1] === OFFSET_COMMIT_TYPE_ID,
  deserialize: (stored) => {
    try {
      return decodeCoordinatorRecord(stored.key, stored.value)
    } catch (e) {
      if (e instanceof UnknownRecordTypeError) return undefined
      throw e
    }
  },
}
