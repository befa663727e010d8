export { type RuntimeClock, ManualClock, systemClock, type TimerHandle } from './clock.js'
export {
  type CoordinatorKafkaError,
  CoordinatorRuntimeError,
  type CoordinatorRuntimeErrorCode,
  CoordinatorWriteError,
  isCoordinatorRuntimeError,
} from './errors.js'
export { javaStringHashCode, shardFor } from './hash.js'
export { CoordinatorRuntime, type CoordinatorRuntimeOptions } from './runtime.js'
export type {
  ReadOperation,
  RecordSerde,
  RuntimeLogger,
  ShardStateMachine,
  ShardTimer,
  TimerIntent,
  TimerIntents,
  TimerOptions,
  TimerWatch,
  WriteOperation,
  WriteResult,
} from './types.js'
