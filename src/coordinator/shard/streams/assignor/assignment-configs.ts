import type { AssignmentConfigs } from './types.js'

/** Key of the standby replica count in a group's assignment configs (`LastAssignmentConfigs`). */
export const NUM_STANDBY_REPLICAS_CONFIG = 'num.standby.replicas'
/** Key of the rack-aware assignment tags in a group's assignment configs; present only when non-empty. */
export const RACK_AWARE_ASSIGNMENT_TAGS_CONFIG = 'rack.aware.assignment.tags'

/** The configs of a group that has none recorded: the broker defaults (0 standbys, no tags). */
export const DEFAULT_ASSIGNMENT_CONFIGS: AssignmentConfigs = Object.freeze({
  numStandbyReplicas: 0,
  rackAwareAssignmentTags: Object.freeze([]) as readonly string[],
})

/**
 * The raw assignment configs of a group (spec §3.7): `num.standby.replicas` always, and
 * `rack.aware.assignment.tags` joined with "," only when there are tags. Keys are in sorted order, the
 * order in which `LastAssignmentConfigs` is written.
 */
export function assignmentConfigsToMap(configs: AssignmentConfigs): Map<string, string> {
  const map = new Map<string, string>([[NUM_STANDBY_REPLICAS_CONFIG, String(configs.numStandbyReplicas)]])
  if (configs.rackAwareAssignmentTags.length > 0) {
    map.set(RACK_AWARE_ASSIGNMENT_TAGS_CONFIG, configs.rackAwareAssignmentTags.join(','))
  }
  return map
}

/**
 * Parses raw assignment configs into the typed configs handed to the assignor (Kafka
 * `AssignmentConfigsImpl.fromMap`). An empty map (a group whose metadata record predates
 * `LastAssignmentConfigs`) yields the defaults; an empty tag string is an empty list.
 */
export function assignmentConfigsFromMap(
  configs: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
): AssignmentConfigs {
  const map = configs instanceof Map ? configs : new Map(Object.entries(configs))
  if (map.size === 0) return DEFAULT_ASSIGNMENT_CONFIGS
  const raw = map.get(NUM_STANDBY_REPLICAS_CONFIG)
  // Integer.parseInt accepts an optional sign and decimal digits only.
  if (raw === undefined || !/^[+-]?\d+$/.test(raw)) {
    throw new RangeError(`Invalid ${NUM_STANDBY_REPLICAS_CONFIG} in assignment configs: ${String(raw)}`)
  }
  const numStandbyReplicas = Number(raw)
  if (
    !Number.isSafeInteger(numStandbyReplicas) ||
    numStandbyReplicas > 2 ** 31 - 1 ||
    numStandbyReplicas < -(2 ** 31)
  ) {
    throw new RangeError(`Invalid ${NUM_STANDBY_REPLICAS_CONFIG} in assignment configs: ${raw}`)
  }
  const tags = map.get(RACK_AWARE_ASSIGNMENT_TAGS_CONFIG) ?? ''
  return {
    numStandbyReplicas,
    rackAwareAssignmentTags: tags === '' ? [] : splitLikeJava(tags),
  }
}

/** `String.split(",")` in Java drops trailing empty strings ("a,b," is [a, b]); JavaScript keeps them. */
function splitLikeJava(value: string): string[] {
  const parts = value.split(',')
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  return parts
}
