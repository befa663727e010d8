import { LocalError } from '../../../../errors.js'
import { MockAssignor } from './mock-assignor.js'
import {
  STICKY_ASSIGNOR_NAME,
  StickyTaskAssignor,
  type StickyTaskAssignorOptions,
} from './sticky-task-assignor.js'
import type { TaskAssignor } from './types.js'

/** The broker config listing the streams-group assignors; the first entry is the default. */
export const STREAMS_GROUP_ASSIGNORS_CONFIG = 'group.streams.assignors'
/** The group config that selects an assignor by name. */
export const STREAMS_ASSIGNOR_NAME_CONFIG = 'streams.assignor.name'
/** Default of `group.streams.assignors`. */
export const STREAMS_GROUP_ASSIGNORS_DEFAULT: readonly string[] = Object.freeze([STICKY_ASSIGNOR_NAME])

/** Kafka's class names, accepted in `group.streams.assignors` like in a Kafka broker config. */
export const STICKY_TASK_ASSIGNOR_CLASS_NAME =
  'org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor'
export const MOCK_ASSIGNOR_CLASS_NAME = 'org.apache.kafka.coordinator.group.streams.assignor.MockAssignor'

export interface ResolveAssignorsOptions {
  /**
   * Resolves an entry that is neither a built-in name nor a known class name (Kafka would load it as a
   * class). Returns undefined when there is no such assignor. Loading plugins is the service's job; the
   * shard only receives the result.
   */
  readonly loadCustom?: (className: string) => TaskAssignor | undefined
  readonly sticky?: StickyTaskAssignorOptions
}

/** A bad `group.streams.assignors` value; the message is Kafka's `ConfigException` text. */
const configError = (message: string): LocalError => new LocalError('ASSIGNOR_INVALID_CONFIG', message)

function invalid(value: string, message: string): LocalError {
  return configError(`Invalid value ${value} for configuration ${STREAMS_GROUP_ASSIGNORS_CONFIG}: ${message}`)
}

/**
 * Turns `group.streams.assignors` into assignor instances (Kafka `GroupCoordinatorConfig.streamsGroupAssignors`):
 * - the list is not empty, has no duplicate and no empty entry;
 * - `sticky` or the sticky class name is the built-in;
 * - Kafka's `MockAssignor` class name is the mock assignor (not a built-in: it is loaded like a class);
 * - anything else goes to `loadCustom`; a custom assignor may not be named `sticky`;
 * - assignor names are unique.
 */
export function resolveStreamsGroupAssignors(
  configured: readonly string[],
  options: ResolveAssignorsOptions = {},
): TaskAssignor[] {
  const config = STREAMS_GROUP_ASSIGNORS_CONFIG
  if (configured.length === 0) {
    throw configError(
      `Configuration '${config}' must not be empty. Valid values include: any non-empty value`,
    )
  }
  if (new Set(configured).size !== configured.length) {
    throw configError(`Configuration '${config}' values must not be duplicated.`)
  }
  if (configured.some((entry) => entry === '')) {
    throw configError(`Configuration '${config}' values must not be empty.`)
  }

  const assignors: TaskAssignor[] = []
  const names = new Set<string>()
  for (const entry of configured) {
    let assignor: TaskAssignor
    let builtIn = false
    if (entry === STICKY_ASSIGNOR_NAME || entry === STICKY_TASK_ASSIGNOR_CLASS_NAME) {
      assignor = new StickyTaskAssignor(options.sticky)
      builtIn = true
    } else if (entry === MOCK_ASSIGNOR_CLASS_NAME) {
      assignor = new MockAssignor()
    } else {
      const loaded = options.loadCustom?.(entry)
      if (loaded === undefined) throw invalid(entry, 'Class cannot be found')
      assignor = loaded
    }
    const name = assignor.name()
    if (!builtIn && name === STICKY_ASSIGNOR_NAME) {
      throw invalid(
        entry,
        `Assignor name '${name}' is reserved by a built-in assignor. ` +
          'A custom assignor must not reuse the name of a built-in assignor',
      )
    }
    if (names.has(name)) {
      throw invalid(
        entry,
        `Assignor name '${name}' is already registered by another configured assignor. ` +
          'Assignor names, whether built-in or custom, must be unique',
      )
    }
    names.add(name)
    assignors.push(assignor)
  }
  return assignors
}

/**
 * The assignors of a coordinator, by name. The first one is the default (spec §4.3).
 */
export class TaskAssignorRegistry {
  readonly #assignors: readonly TaskAssignor[]
  readonly #byName: ReadonlyMap<string, TaskAssignor>

  constructor(assignors: readonly TaskAssignor[]) {
    if (assignors.length === 0) throw new RangeError('At least one task assignor is required')
    const byName = new Map<string, TaskAssignor>()
    for (const assignor of assignors) {
      if (byName.has(assignor.name())) throw new RangeError(`Duplicate task assignor name ${assignor.name()}`)
      byName.set(assignor.name(), assignor)
    }
    this.#assignors = [...assignors]
    this.#byName = byName
  }

  /** From the `group.streams.assignors` config value. */
  static fromConfig(
    configured: readonly string[],
    options: ResolveAssignorsOptions = {},
  ): TaskAssignorRegistry {
    return new TaskAssignorRegistry(resolveStreamsGroupAssignors(configured, options))
  }

  /** The first configured assignor, used when a group names none or names one no longer registered. */
  get defaultAssignor(): TaskAssignor {
    return this.#assignors[0]
  }

  /** Registered names in configuration order. */
  names(): string[] {
    return this.#assignors.map((a) => a.name())
  }

  has(name: string): boolean {
    return this.#byName.has(name)
  }

  /**
   * The assignor for a group: its `streams.assignor.name` if registered, else the default. Also the
   * name StreamsGroupDescribe v1 reports as `AssignorName`.
   */
  select(groupAssignorName: string | null | undefined): TaskAssignor {
    return (
      (groupAssignorName == null ? undefined : this.#byName.get(groupAssignorName)) ?? this.defaultAssignor
    )
  }

  /**
   * Validates a `streams.assignor.name` group config value: null when registered, else Kafka's message.
   */
  validateGroupAssignorName(name: string): string | null {
    if (this.#byName.has(name)) return null
    return (
      `${STREAMS_ASSIGNOR_NAME_CONFIG} '${name}' is not a registered task assignor. ` +
      `Registered assignors are: [${this.names().join(', ')}].`
    )
  }
}
