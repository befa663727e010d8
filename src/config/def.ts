// The config kit: Kafka's ConfigDef, reduced to what Topograph's three config tables share. The
// broker configuration (src/server/config-defs.ts, with the group coordinator's `group.*` keys from
// src/coordinator/service/config-defs.ts), the topic configs (src/server/topics/topic-configs.ts)
// and the group-level configs (src/coordinator/service/group-config.ts) parse values, validate them
// and word their errors with these functions, so one value gets the same reading and the same
// message in each of them.
//
// This folder imports nothing of the project but the local error catalogue (src/errors.ts, itself
// a leaf): server, coordinator, plugins and tools may all use it.

import { LocalError } from '../errors.js'

/** Kafka's ConfigDef.Type names, lower-case as the tables and the reference docs spell them. */
export type ConfigType = 'int' | 'long' | 'double' | 'string' | 'list' | 'boolean' | 'password' | 'class'
export type Importance = 'high' | 'medium' | 'low'

/**
 * A configuration that cannot be honoured. `key` names the offending key (null when the problem is
 * not about one key, e.g. an unreadable file). The message follows Kafka's
 * `Invalid value X for configuration KEY: reason` where a single value is at fault.
 */
export class ConfigError extends LocalError {
  readonly key: string | null

  constructor(message: string, key: string | null, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', message, options)
    this.name = 'ConfigError'
    this.key = key
  }

  static invalidValue(key: string, shownValue: string, reason: string): ConfigError {
    return new ConfigError(invalidValueMessage(key, shownValue, reason), key)
  }
}

/**
 * Thrown by a value parser or validator with the reason (Kafka's ConfigException message after
 * "Invalid value X for configuration Y: "); the table that called it names the key and the value.
 */
export class InvalidValue extends Error {}

/** Kafka's ConfigException(name, value, message) text. */
export function invalidValueMessage(name: string, shownValue: string, reason: string): string {
  return `Invalid value ${shownValue} for configuration ${name}: ${reason}`
}

/** Whether values of a type are secrets: never logged, described with a null value and IsSensitive. */
export function isSecretType(type: ConfigType | undefined): boolean {
  return type === 'password'
}

// ---------------------------------------------------------------------------------------------
// Values (Kafka's ConfigDef.parseType). Each parser trims the text first, as Kafka does, and throws
// InvalidValue with Kafka's reason.

const INTEGER = /^[+-]?\d+$/
const INT_MIN = -(2n ** 31n)
const INT_MAX = 2n ** 31n - 1n
const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER)

/** Optional sign and decimal digits within [min, max]; otherwise Kafka's "Not a number of type T". */
function integer(text: string, type: 'INT' | 'LONG', min: bigint, max: bigint): bigint {
  const t = text.trim()
  if (!INTEGER.test(t)) throw new InvalidValue(`Not a number of type ${type}`)
  const n = BigInt(t)
  if (n < min || n > max) throw new InvalidValue(`Not a number of type ${type}`)
  return n
}

/** Java's Integer.parseInt: optional sign, decimal digits, within 32 bits. */
export function parseInt32(text: string): number {
  return Number(integer(text, 'INT', INT_MIN, INT_MAX))
}

/** Java's Long.parseLong: optional sign, decimal digits, within 64 bits. */
export function parseInt64(text: string): bigint {
  return integer(text, 'LONG', LONG_MIN, LONG_MAX)
}

/**
 * A LONG held as a JavaScript number, as the broker configuration holds it: limited to
 * ±(2^53 − 1) rather than Java's ±(2^63 − 1); no Kafka default comes near either limit.
 */
export function parseSafeLong(text: string): number {
  return Number(integer(text, 'LONG', -SAFE_MAX, SAFE_MAX))
}

/** Java's Double.parseDouble, as far as telling a number from text goes. */
export function parseDouble(text: string): number {
  const t = text.trim()
  const n = Number(t)
  if (t === '' || Number.isNaN(n)) throw new InvalidValue('Not a number of type DOUBLE')
  return n
}

/** Kafka accepts true and false in any letter case. */
export function parseBoolean(text: string): boolean {
  const lower = text.trim().toLowerCase()
  if (lower === 'true') return true
  if (lower === 'false') return false
  throw new InvalidValue('Expected value to be either true or false')
}

/** Splits a comma-separated list as Kafka does: entries trimmed, an empty string is an empty list. */
export function splitList(value: string): string[] {
  if (value.trim() === '') return []
  return value.split(',').map((s) => s.trim())
}

// ---------------------------------------------------------------------------------------------
// Validators (Kafka's ConfigDef.Range, ValidString, ValidList)

export interface Bounds {
  readonly min?: number
  readonly max?: number
}

/** Kafka's Range: throws InvalidValue with Kafka's reason when `n` lies outside. */
export function checkBounds(n: number | bigint, bounds: Bounds): void {
  if (bounds.min !== undefined && n < bounds.min)
    throw new InvalidValue(`Value must be at least ${bounds.min}`)
  if (bounds.max !== undefined && n > bounds.max)
    throw new InvalidValue(`Value must be no more than ${bounds.max}`)
}

/** Kafka's Range.toString, for the reference table. */
export function boundsText(bounds: Bounds): string {
  if (bounds.min !== undefined && bounds.max !== undefined) return `[${bounds.min}, ..., ${bounds.max}]`
  if (bounds.min !== undefined) return `[${bounds.min}, ...]`
  if (bounds.max !== undefined) return `[..., ${bounds.max}]`
  return 'any'
}

/** Kafka's ValidString.in: throws InvalidValue unless `value` is one of `allowed`. */
export function checkOneOf(value: string, allowed: readonly string[]): void {
  if (!allowed.includes(value)) throw new InvalidValue(`String must be one of: ${allowed.join(', ')}`)
}

export interface ListRules {
  readonly allowEmptyList?: boolean
  readonly allowed?: readonly string[]
  /** Rejects repeated entries. Off where a cross-check reports duplicates with its own message. */
  readonly unique?: boolean
}

/** A list value checked against `rules` (the broker configuration's list keys). */
export function parseList(value: string, rules: ListRules): string[] {
  const items = splitList(value)
  if (items.length === 0 && !rules.allowEmptyList) throw new InvalidValue('the list must not be empty')
  if (items.some((s) => s === '')) throw new InvalidValue('list entries must not be empty')
  if (rules.unique !== false && new Set(items).size !== items.length) {
    throw new InvalidValue('values must not be duplicated')
  }
  if (rules.allowed) {
    const bad = items.find((s) => !rules.allowed!.includes(s))
    if (bad !== undefined) throw new InvalidValue(`'${bad}' is not one of ${rules.allowed.join(', ')}`)
  }
  return items
}

// ---------------------------------------------------------------------------------------------
// Key definitions of a configuration table (the broker's and the group coordinator's keys)

export interface ConfigKeyDef<K extends string = string, T = unknown> {
  readonly name: K
  readonly type: ConfigType
  /** The default as it would be written in a properties file; null means unset. */
  readonly default: string | null
  /** Human-readable description of the accepted values, for the reference table. */
  readonly validValues: string
  readonly importance: Importance
  readonly doc: string
  /** Converts a present value (already trimmed). Throws InvalidValue with the reason. */
  readonly parse: (value: string) => T
  /** The value when the key is absent and has no default. */
  readonly absent: T
  /** For a value that can embed a secret (a password in a URL): the value as logs and DescribeConfigs show it. */
  readonly redact?: (value: string) => string
}

/** Each builder returns a ConfigKeyDef whose value type is exact, so a typed config object can be computed from a table. */
export function intKey<K extends string>(
  name: K,
  dflt: number,
  bounds: Bounds,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, number> {
  return {
    name,
    type: 'int',
    default: String(dflt),
    validValues: boundsText(bounds),
    importance,
    doc,
    parse: (v) => {
      const n = parseInt32(v)
      checkBounds(n, bounds)
      return n
    },
    absent: dflt,
  }
}

/** A LONG key, its value held as a JavaScript number (see {@link parseSafeLong}). */
export function longKey<K extends string>(
  name: K,
  dflt: number,
  bounds: Bounds,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, number> {
  return {
    ...intKey(name, dflt, bounds, importance, doc),
    type: 'long',
    parse: (v) => {
      const n = parseSafeLong(v)
      checkBounds(n, bounds)
      return n
    },
  }
}

export function boolKey<K extends string>(
  name: K,
  dflt: boolean,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, boolean> {
  return {
    name,
    type: 'boolean',
    default: String(dflt),
    validValues: 'true, false',
    importance,
    doc,
    parse: parseBoolean,
    absent: dflt,
  }
}

export function stringKey<K extends string>(
  name: K,
  dflt: string,
  validValues: string,
  importance: Importance,
  doc: string,
  check: (v: string) => void,
  redact?: (v: string) => string,
): ConfigKeyDef<K, string> {
  return {
    name,
    type: 'string',
    default: dflt,
    validValues,
    importance,
    doc,
    parse: (v) => {
      check(v)
      return v
    },
    absent: dflt,
    ...(redact === undefined ? {} : { redact }),
  }
}

/**
 * A key without a default (null when absent): a string, or a password — a secret never logged and
 * described with a null value. `check` throws InvalidValue for a value it refuses.
 */
export function optionalKey<K extends string>(
  name: K,
  type: 'string' | 'password',
  validValues: string,
  importance: Importance,
  doc: string,
  check?: (v: string) => void,
): ConfigKeyDef<K, string | null> {
  return {
    name,
    type,
    default: null,
    validValues,
    importance,
    doc,
    parse: (v) => {
      check?.(v)
      return v
    },
    absent: null,
  }
}

export function enumKey<K extends string, V extends string>(
  name: K,
  dflt: V,
  values: readonly V[],
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, V> {
  return {
    name,
    type: 'string',
    default: dflt,
    validValues: values.join(', '),
    importance,
    doc,
    parse: (v) => {
      checkOneOf(v, values)
      return v as V
    },
    absent: dflt,
  }
}

export function listKey<K extends string>(
  name: K,
  dflt: readonly string[],
  rules: ListRules,
  validValues: string,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, readonly string[]> {
  return {
    name,
    type: 'list',
    default: dflt.join(','),
    validValues,
    importance,
    doc,
    parse: (v) => parseList(v, rules),
    absent: dflt,
  }
}

/** Refuses the empty string (Kafka's ConfigDef.NonEmptyString). */
export function nonEmpty(v: string): void {
  if (v === '') throw new InvalidValue('String must be non-empty')
}

// ---------------------------------------------------------------------------------------------
// The config APIs (IncrementalAlterConfigs)

/** Kafka's AlterConfigOp.OpType codes. */
export const AlterConfigOpType = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const

/** Kafka refuses a config value longer than this (Short.MAX_VALUE). */
export const MAX_CONFIG_VALUE_LENGTH = 32767
