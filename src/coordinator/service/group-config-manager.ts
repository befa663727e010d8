/**
 * The group config manager (Kafka's GroupConfigManager, plus the part of Kafka's controller that
 * stores GROUP configs): the dynamic configs set on groups, durable in their own log of the
 * coordinator record store, and the effective streams settings of every group that sets any.
 *
 * Durability: log {@link GROUP_CONFIG_LOG_ID} (beside the topic catalog and the ACLs; no shard uses
 * it), one record per changed key, as Kafka's ConfigRecord:
 *   key   = int16 record type {@link GROUP_CONFIG_RECORD_TYPE}, group id, config name
 *           (each int16 length + UTF-8)
 *   value = int16 version 0, then the value as given (UTF-8); a deleted key is a tombstone.
 * One alteration request is one append (Kafka applies a request's records atomically). Loading is
 * replaying the log; a group left with no key is forgotten.
 *
 * Like Kafka, a group's configs are independent of the group itself: they may be set before the
 * group exists, and they outlive its deletion or expiry (a group created again with the same id
 * finds them). Only deleting every key removes a group from the manager.
 *
 * The shards read {@link GroupConfigManager.streamsConfig} synchronously (a map lookup); it changes
 * only after the append of an alteration succeeded.
 */
import { LocalError } from '../../errors.js'
import { AlterConfigOpType, MAX_CONFIG_VALUE_LENGTH } from '../../config/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { ApiError } from '../../protocol/api-error.js'
import type { RuntimeLogger } from '../runtime/types.js'
import type { StreamsGroupConfig } from '../shard/streams/config.js'
import type { CoordinatorRecord, RecordStore } from '../storage/types.js'
import {
  describeGroupConfig,
  evaluateGroupConfig,
  type GroupConfigContext,
  type GroupConfigEntry,
  streamsGroupConfigWith,
  validateGroupConfig,
} from './group-config.js'

/** Log id of the group configs: below the ACL log (2147483646) and the topic catalog (2147483647). */
export const GROUP_CONFIG_LOG_ID = 2147483645
/** Record type of a group config record (outside the range Kafka uses for coordinator records). */
export const GROUP_CONFIG_RECORD_TYPE = 0x7f03
/** Kafka's AlterConfigOp.OpType codes and its longest config value (from the config kit). */
export { AlterConfigOpType, MAX_CONFIG_VALUE_LENGTH }
/** Default of `max.group.configs`, the most groups that set configs (Topograph only). */
export const DEFAULT_MAX_GROUP_CONFIGS = 10_000

const OP_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT'] as const

export interface GroupConfigChange {
  readonly name: string
  /** An AlterConfigOpType code. */
  readonly op: number
  readonly value: string | null
}

export interface GroupConfigAlteration {
  readonly groupId: string
  readonly changes: readonly GroupConfigChange[]
}

export interface GroupConfigAlterResult {
  readonly errorCode: number
  readonly errorMessage: string | null
}

export function encodeGroupConfigKey(groupId: string, name: string): Uint8Array {
  const g = Buffer.from(groupId, 'utf8')
  const n = Buffer.from(name, 'utf8')
  if (g.length > 0x7fff || n.length > 0x7fff)
    throw new LocalError('GROUP_CONFIG_RECORD_INVALID', 'group config key field longer than 32767 bytes')
  const out = Buffer.allocUnsafe(2 + 2 + g.length + 2 + n.length)
  let o = out.writeInt16BE(GROUP_CONFIG_RECORD_TYPE, 0)
  o = out.writeInt16BE(g.length, o)
  o += g.copy(out, o)
  o = out.writeInt16BE(n.length, o)
  n.copy(out, o)
  return out
}

export function decodeGroupConfigKey(key: Uint8Array): { groupId: string; name: string } {
  const buf = Buffer.from(key.buffer, key.byteOffset, key.byteLength)
  let o = 0
  const need = (n: number) => {
    if (o + n > buf.length)
      throw new LocalError('GROUP_CONFIG_RECORD_INVALID', `group config record key truncated at byte ${o}`)
  }
  need(2)
  const type = buf.readInt16BE(0)
  if (type !== GROUP_CONFIG_RECORD_TYPE)
    throw new LocalError(
      'GROUP_CONFIG_RECORD_INVALID',
      `unexpected record type ${type} in the group config log`,
    )
  o = 2
  const str = () => {
    need(2)
    const n = buf.readInt16BE(o)
    o += 2
    need(n)
    const s = buf.toString('utf8', o, o + n)
    o += n
    return s
  }
  const groupId = str()
  const name = str()
  if (o !== buf.length)
    throw new LocalError('GROUP_CONFIG_RECORD_INVALID', 'group config record key has trailing bytes')
  return { groupId, name }
}

export function encodeGroupConfigValue(value: string): Uint8Array {
  const v = Buffer.from(value, 'utf8')
  const out = Buffer.allocUnsafe(2 + v.length)
  out.writeInt16BE(0, 0)
  v.copy(out, 2)
  return out
}

export function decodeGroupConfigValue(value: Uint8Array): string {
  const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (buf.length < 2)
    throw new LocalError('GROUP_CONFIG_RECORD_INVALID', 'group config record value is truncated')
  const version = buf.readInt16BE(0)
  if (version !== 0)
    throw new LocalError(
      'GROUP_CONFIG_RECORD_INVALID',
      `group config record has version ${version}; this version reads 0`,
    )
  return buf.toString('utf8', 2)
}

export function groupConfigRecord(groupId: string, name: string, value: string | null): CoordinatorRecord {
  return {
    key: encodeGroupConfigKey(groupId, name),
    value: value === null ? null : encodeGroupConfigValue(value),
  }
}

export interface GroupConfigManagerOptions {
  readonly store: RecordStore
  readonly context: GroupConfigContext
  /** The broker-level streams settings; a group without overrides uses them as they are. */
  readonly baseStreamsConfig: StreamsGroupConfig
  readonly logger: RuntimeLogger
}

export class GroupConfigManager {
  readonly #store: RecordStore
  readonly #ctx: GroupConfigContext
  readonly #base: StreamsGroupConfig
  readonly #log: RuntimeLogger
  /** Every group's configs as stored (the raw values). */
  readonly #overrides = new Map<string, Map<string, string>>()
  /** The effective streams settings of every group in #overrides. */
  readonly #streams = new Map<string, StreamsGroupConfig>()
  /** Alterations run one at a time: a validation and the append that follows see the same state. */
  #tail: Promise<unknown> = Promise.resolve()

  /** An empty manager; {@link load} replays the stored configs. */
  constructor(options: GroupConfigManagerOptions) {
    this.#store = options.store
    this.#ctx = options.context
    this.#base = options.baseStreamsConfig
    this.#log = options.logger
  }

  /** Replays the group config log of the (opened) store; called once, before any group is served. */
  async load(): Promise<void> {
    const touched = new Set<string>()
    for (const r of await this.#store.load(GROUP_CONFIG_LOG_ID)) {
      // The log also holds the server's client quotas and SCRAM credentials (other record types),
      // replayed by their owners.
      if (r.key.byteLength >= 2 && ((r.key[0] << 8) | r.key[1]) !== GROUP_CONFIG_RECORD_TYPE) continue
      const { groupId, name } = decodeGroupConfigKey(r.key)
      this.#put(groupId, name, r.value === null ? null : decodeGroupConfigValue(r.value))
      touched.add(groupId)
    }
    for (const groupId of touched) this.#refresh(groupId)
  }

  /** The effective streams settings of a group: broker values with its overrides, clamped. */
  streamsConfig(groupId: string): StreamsGroupConfig {
    return this.#streams.get(groupId) ?? this.#base
  }

  /** The configs a group sets, as stored; undefined when it sets none. */
  overrides(groupId: string): ReadonlyMap<string, string> | undefined {
    return this.#overrides.get(groupId)
  }

  /** Groups that set at least one config. */
  groupIds(): string[] {
    return [...this.#overrides.keys()]
  }

  /** Every group config key of a group, as DescribeConfigs reports it. */
  describe(groupId: string): GroupConfigEntry[] {
    return describeGroupConfig(this.#overrides.get(groupId), this.#ctx)
  }

  /**
   * Applies IncrementalAlterConfigs changes to groups, as Kafka's controller does, one result per
   * alteration in order. Each alteration is checked on its own (APPEND/SUBTRACT, value size, the
   * group name, then the group's full config set, GroupConfig.validate); the valid ones are stored
   * in one append, unless `validateOnly`. The caller has already refused duplicate keys, null
   * values and unknown operations, as Kafka's broker does before forwarding.
   */
  alter(
    alterations: readonly GroupConfigAlteration[],
    validateOnly: boolean,
  ): Promise<GroupConfigAlterResult[]> {
    return this.#serial(async () => {
      const results: GroupConfigAlterResult[] = []
      const records: CoordinatorRecord[] = []
      const next = new Map<string, Map<string, string>>()
      const applied: number[] = []
      const maxGroups = this.#ctx.broker.maxGroupConfigs ?? DEFAULT_MAX_GROUP_CONFIGS
      // Groups with configs once the alterations accepted so far are applied.
      let groups = this.#overrides.size
      alterations.forEach((a, index) => {
        const current = next.get(a.groupId) ?? this.#overrides.get(a.groupId) ?? new Map<string, string>()
        const outcome = this.#check(a, current)
        if ('errorCode' in outcome) {
          results.push(outcome)
          return
        }
        const delta = (outcome.configs.size > 0 ? 1 : 0) - (current.size > 0 ? 1 : 0)
        if (delta > 0 && groups + delta > maxGroups) {
          results.push({
            errorCode: ErrorCode.POLICY_VIOLATION,
            errorMessage: `Group ${a.groupId} would be group ${groups + delta} with configs, above the limit of ${maxGroups} (max.group.configs).`,
          })
          return
        }
        groups += delta
        results.push({ errorCode: ErrorCode.NONE, errorMessage: null })
        next.set(a.groupId, outcome.configs)
        for (const [name, value] of outcome.changed) records.push(groupConfigRecord(a.groupId, name, value))
        applied.push(index)
      })
      if (validateOnly || records.length === 0) return results
      try {
        await this.#store.append(GROUP_CONFIG_LOG_ID, records)
      } catch (err) {
        this.#log.error({ err }, 'Failed to store group configs')
        for (const i of applied)
          results[i] = { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null }
        return results
      }
      for (const [groupId, configs] of next) {
        if (configs.size === 0) this.#overrides.delete(groupId)
        else this.#overrides.set(groupId, configs)
        this.#refresh(groupId)
        this.#log.info(
          { groupId, configs: Object.fromEntries(configs) },
          `Updated the dynamic configs of group ${groupId}`,
        )
      }
      return results
    })
  }

  #check(
    a: GroupConfigAlteration,
    current: ReadonlyMap<string, string>,
  ): GroupConfigAlterResult | { configs: Map<string, string>; changed: Map<string, string | null> } {
    const configs = new Map(current)
    const changed = new Map<string, string | null>()
    for (const c of a.changes) {
      const before = configs.get(c.name) ?? null
      let after: string | null
      if (c.op === AlterConfigOpType.SET) after = c.value
      else if (c.op === AlterConfigOpType.DELETE) after = null
      else if (c.op === AlterConfigOpType.APPEND || c.op === AlterConfigOpType.SUBTRACT) {
        // Kafka's controller splits only keys its config schema knows as LIST, and that schema
        // has no GROUP entry: every APPEND or SUBTRACT on a group key is refused.
        return {
          errorCode: ErrorCode.INVALID_CONFIG,
          errorMessage: `Can't ${OP_NAMES[c.op]} to key ${c.name} because its type is not LIST.`,
        }
      } else {
        return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown operations type ${c.op}` }
      }
      if (after === null) configs.delete(c.name)
      else configs.set(c.name, after)
      if (after !== before) changed.set(c.name, after)
      else changed.delete(c.name)
    }
    for (const value of changed.values()) {
      if (value !== null && value.length > MAX_CONFIG_VALUE_LENGTH) {
        return {
          errorCode: ErrorCode.INVALID_CONFIG,
          errorMessage: `The configuration value cannot be added because it exceeds the maximum value size of ${MAX_CONFIG_VALUE_LENGTH} bytes.`,
        }
      }
    }
    if (a.groupId === '') {
      return {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: 'Default group resources are not allowed.',
      }
    }
    try {
      validateGroupConfig(configs, this.#ctx)
    } catch (e) {
      if (e instanceof ApiError) return { errorCode: e.errorCode, errorMessage: e.errorMessage }
      throw e
    }
    return { configs, changed }
  }

  #put(groupId: string, name: string, value: string | null): void {
    let configs = this.#overrides.get(groupId)
    if (value === null) {
      configs?.delete(name)
      if (configs?.size === 0) this.#overrides.delete(groupId)
      return
    }
    if (configs === undefined) this.#overrides.set(groupId, (configs = new Map()))
    configs.set(name, value)
  }

  /** Recomputes a group's effective streams settings from its stored configs. */
  #refresh(groupId: string): void {
    const configs = this.#overrides.get(groupId)
    if (configs === undefined) {
      this.#streams.delete(groupId)
      return
    }
    const evaluated = evaluateGroupConfig(configs, groupId, this.#ctx.broker, (fields, message) =>
      this.#log.warn(fields, message),
    )
    this.#streams.set(groupId, streamsGroupConfigWith(this.#base, evaluated))
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn)
    this.#tail = run.catch(() => undefined)
    return run
  }
}
