export { type RuntimeClock, ManualClock, systemClock, type TimerHandle } from './clock.js'
export {
  type CoordinatorKafkaError,
  CoordinatorRuntimeError,
  CoordinatorTimeoutError,
  type CoordinatorRuntimeErrorCode,
  CoordinatorWriteError,
  isCoordinatorRuntimeError,
} from './errors.js'
export { shardFor } from './hash.js'
export { CoordinatorRuntime, type CoordinatorRuntimeOptions } from './runtime.js'
export type {
  CoordinatorResult,
  ReadOperation,
  RecordSerde,
  RuntimeLogger,
  ShardStateMachine,
  ShardTimer,
  TimerIntent,
  TimerIntents,
  TimerOperation,
  TimerOptions,
  TimerWatch,
  WriteOperation,
} from './types.js'
