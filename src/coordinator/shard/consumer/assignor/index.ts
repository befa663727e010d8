/** The consumer group assignors by name (`group.consumer.assignors`: Kafka's built-in names). */
import { RangeAssignor } from './range.js'
import type { ConsumerGroupPartitionAssignor } from './types.js'
import { UniformAssignor } from './uniform.js'

export * from './types.js'
export { RangeAssignor } from './range.js'
export { UniformAssignor } from './uniform.js'

export const BUILTIN_CONSUMER_ASSIGNORS: readonly string[] = [UniformAssignor.NAME, RangeAssignor.NAME]

/** The assignor of a built-in name; undefined for any other name. */
export function consumerAssignor(name: string): ConsumerGroupPartitionAssignor | undefined {
  if (name === UniformAssignor.NAME) return new UniformAssignor()
  if (name === RangeAssignor.NAME) return new RangeAssignor()
  return undefined
}

/** The configured assignors, in order; the first is the default. */
export class ConsumerAssignors {
  readonly #byName = new Map<string, ConsumerGroupPartitionAssignor>()
  readonly #default: ConsumerGroupPartitionAssignor

  constructor(names: readonly string[]) {
    for (const name of names) {
      const a = consumerAssignor(name)
      if (a === undefined) throw new Error(`Unknown consumer group assignor ${name}.`)
      if (!this.#byName.has(name)) this.#byName.set(name, a)
    }
    const first = this.#byName.values().next()
    if (first.done) throw new Error('At least one consumer group assignor is required.')
    this.#default = first.value
  }

  names(): string[] {
    return [...this.#byName.keys()]
  }

  has(name: string): boolean {
    return this.#byName.has(name)
  }

  get default(): ConsumerGroupPartitionAssignor {
    return this.#default
  }

  /** The named assignor, or the default when the name is null or not configured. */
  select(name: string | null): ConsumerGroupPartitionAssignor {
    return (name === null ? undefined : this.#byName.get(name)) ?? this.#default
  }
}
