/** Configuration parsing and argument checks shared by the built-in plugins. */
import {
  type StreamsGroupTopologyDescription,
  StreamsTopologyDescriptionPermanentFailureException,
  topologyDescriptionProblem,
} from '../spi.js'

/** Largest description (UTF-8 bytes of its JSON) a built-in plugin stores; shared by all of them. */
import { MAX_DESCRIPTION_BYTES_KEY } from './keys.js'

export { MAX_DESCRIPTION_BYTES_KEY }
export const DEFAULT_MAX_DESCRIPTION_BYTES = 1_048_576

/**
 * An integer config in [min, max]; `fallback` when the key is unset or blank.
 * @throws Error naming the key when the value is not such an integer.
 */
export function intConfig(
  configs: Readonly<Record<string, string>>,
  key: string,
  fallback: number,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): number {
  const raw = configs[key]
  if (raw === undefined || raw.trim() === '') return fallback
  const v = Number(raw.trim())
  if (!/^[+-]?\d+$/.test(raw.trim()) || !Number.isSafeInteger(v) || v < min || v > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`
    throw new Error(`Invalid value ${raw} for configuration ${key}: must be ${range}`)
  }
  return v
}

export function maxDescriptionBytes(configs: Readonly<Record<string, string>>): number {
  return intConfig(configs, MAX_DESCRIPTION_BYTES_KEY, DEFAULT_MAX_DESCRIPTION_BYTES, 1)
}

/**
 * Checks the arguments of setTopology and serialises the description. Throws a permanent failure for
 * anything the plugin will never accept (the same call would fail again); callers run it inside an
 * async function, so the throw reaches the coordinator as a rejection.
 */
export function encodeForSet(
  groupId: unknown,
  topologyEpoch: unknown,
  description: unknown,
  maxBytes: number,
): { readonly json: string; readonly bytes: number } {
  checkGroupId(groupId)
  checkEpoch(topologyEpoch)
  const problem = topologyDescriptionProblem(description)
  if (problem !== null) {
    throw new StreamsTopologyDescriptionPermanentFailureException(`Invalid topology description: ${problem}.`)
  }
  const json = JSON.stringify(description as StreamsGroupTopologyDescription)
  const bytes = Buffer.byteLength(json, 'utf8')
  if (bytes > maxBytes) {
    throw new StreamsTopologyDescriptionPermanentFailureException(
      `Topology description is ${bytes} bytes, larger than the maximum of ${maxBytes} bytes (${MAX_DESCRIPTION_BYTES_KEY}).`,
    )
  }
  return { json, bytes }
}

export function checkGroupId(groupId: unknown): asserts groupId is string {
  if (typeof groupId !== 'string') {
    throw new StreamsTopologyDescriptionPermanentFailureException('The group id must be a string.')
  }
}

export function checkEpoch(topologyEpoch: unknown): asserts topologyEpoch is number {
  // Topology epochs are int32 on the wire.
  if (
    typeof topologyEpoch !== 'number' ||
    !Number.isInteger(topologyEpoch) ||
    topologyEpoch < 0 ||
    topologyEpoch > 2_147_483_647
  ) {
    throw new StreamsTopologyDescriptionPermanentFailureException(
      `The topology epoch must be an integer from 0 to 2147483647, got ${String(topologyEpoch)}.`,
    )
  }
}

/** Parses a stored description, failing (transient: the store may be repaired) when it is corrupt. */
export function decodeStored(
  json: unknown,
  groupId: string,
  failure: (message: string) => Error,
): StreamsGroupTopologyDescription {
  let parsed: unknown = json
  if (typeof json === 'string') {
    try {
      parsed = JSON.parse(json)
    } catch {
      throw failure(`The stored topology description of group ${groupId} is not valid JSON.`)
    }
  }
  const problem = topologyDescriptionProblem(parsed)
  if (problem !== null)
    throw failure(`The stored topology description of group ${groupId} is invalid: ${problem}.`)
  return parsed as StreamsGroupTopologyDescription
}
