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

/** Coordinator records in the store: Kafka's key/value framing; unknown record types are skipped. */
export const coordinatorRecordSerde: RecordSerde<CoordinatorRecord> = {
  serialize: (record) => encodeCoordinatorRecord(record),
  serializeAll: (records) => encodeCoordinatorRecords(records),
  release: (records) => releaseEncodedRecords(records),
  deserialize: (stored) => {
    try {
      return decodeCoordinatorRecord(stored.key, stored.value)
    } catch (e) {
      if (e instanceof UnknownRecordTypeError) return undefined
      throw e
    }
  },
}
