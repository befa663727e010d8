/**
 * Client quotas (Kafka's ClientQuotaControlManager, ClientQuotasImage and ClientQuotaManager in
 * one): the quotas set on user, client-id and IP entities, durable, described and altered as
 * Kafka's DescribeClientQuotas and AlterClientQuotas do, and enforced per request.
 *
 * Entities: a user, a client id, or a user with a client id (each name may be null: the default
 * entity), or an IP address (null: the default IP). Keys: `producer_byte_rate`,
 * `consumer_byte_rate`, `request_percentage` and `controller_mutation_rate` on user/client-id
 * entities; `connection_creation_rate` on IP entities.
 *
 * Enforcement, as Kafka's quota managers: the quota that applies to a request is the most specific
 * one set for its user (the principal's name) and client id, in this order:
 *   users/<user>/clients/<client-id>, users/<user>/clients/<default>, users/<user>,
 *   users/<default>/clients/<client-id>, users/<default>/clients/<default>, users/<default>,
 *   clients/<client-id>, clients/<default>.
 * Each quota type keeps one rate per matched entity (a rate for `users/alice` is shared by every
 * client id of alice; one for `users/alice/clients/<default>` is kept per client id), measured over
 * `quota.window.num` windows of `quota.window.size.seconds` ({@link SampledRate}). A value that
 * takes the rate above the quota returns a throttle time. `controller_mutation_rate` is stored and
 * described but not enforced.
 *
 * Durability: the dynamic-config log of the record store ({@link GROUP_CONFIG_LOG_ID}, which also
 * holds the group configs; Kafka keeps ConfigRecord and ClientQuotaRecord in one metadata log too),
 * one record per entity and key, record type {@link CLIENT_QUOTA_RECORD_TYPE}:
 *   key   = int16 record type, int8 number of entity parts, per part the entity type (int16 length
 *           + UTF-8) and name (int16 length, -1 for the default, + UTF-8), then the quota key
 *   value = int16 version 0, float64 value; a removed quota is a tombstone.
 * One AlterClientQuotas request is one append; memory changes only after it succeeded.
 */
import { LocalError } from '../../errors.js'
import { ApiError } from '../../protocol/api-error.js'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import type { Logger } from 'pino'
import { GROUP_CONFIG_LOG_ID } from '../../coordinator/service/group-config-manager.js'
import type { CoordinatorRecord, RecordStore } from '../../coordinator/storage/types.js'
import { ErrorCode } from '../../protocol/errors.js'
import { type RateConfig, SampledRate } from './rate.js'

export const CLIENT_QUOTA_RECORD_TYPE = 0x7f04

export const USER = 'user'
export const CLIENT_ID = 'client-id'
export const IP = 'ip'

export const PRODUCER_BYTE_RATE = 'producer_byte_rate'
export const CONSUMER_BYTE_RATE = 'consumer_byte_rate'
export const REQUEST_PERCENTAGE = 'request_percentage'
export const CONTROLLER_MUTATION_RATE = 'controller_mutation_rate'
export const CONNECTION_CREATION_RATE = 'connection_creation_rate'

/** Kafka's config types of the quota keys (QuotaConfig). */
const USER_CLIENT_KEYS: ReadonlyMap<string, 'long' | 'double'> = new Map([
  [PRODUCER_BYTE_RATE, 'long'],
  [CONSUMER_BYTE_RATE, 'long'],
  [REQUEST_PERCENTAGE, 'double'],
  [CONTROLLER_MUTATION_RATE, 'double'],
])
const IP_KEYS: ReadonlyMap<string, 'int'> = new Map([[CONNECTION_CREATION_RATE, 'int']])

/** Entity type → name (null: the default entity). */
export type QuotaEntity = ReadonlyMap<string, string | null>

/** The quota types enforced per request. */
export type QuotaType = 'produce' | 'fetch' | 'request'
const KEY_OF: Readonly<Record<QuotaType, string>> = {
  produce: PRODUCER_BYTE_RATE,
  fetch: CONSUMER_BYTE_RATE,
  request: REQUEST_PERCENTAGE,
}

export interface EntityOutcome {
  readonly entity: readonly { readonly entityType: string; readonly entityName: string | null }[]
  readonly errorCode: number
  readonly errorMessage: string | null
}

export interface DescribedEntity {
  readonly entity: { entityType: string; entityName: string | null }[]
  readonly values: { key: string; value: number }[]
}

export interface DescribeFilterComponent {
  readonly entityType: string
  readonly matchType: number
  readonly match: string | null
}

export interface AlterEntry {
  readonly entity: readonly { readonly entityType: string; readonly entityName: string | null }[]
  readonly ops: readonly { readonly key: string; readonly value: number; readonly remove: boolean }[]
}

/** A stored record the client quota replay cannot read. */
const recordError = (message: string): LocalError => new LocalError('CLIENT_QUOTA_RECORD_INVALID', message)

/** Canonical text of an entity: its parts sorted by type. */
function entityKey(entity: QuotaEntity): string {
  return JSON.stringify([...entity].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)))
}

function entityText(entity: QuotaEntity): string {
  return `ClientQuotaEntity(entries={${[...entity].map(([t, n]) => `${t}=${n}`).join(', ')}})`
}

function wireEntity(entity: QuotaEntity): { entityType: string; entityName: string | null }[] {
  return [...entity].map(([entityType, entityName]) => ({ entityType, entityName }))
}

// ---------------------------------------------------------------------------------------------
// Records

export function encodeClientQuotaKey(entity: QuotaEntity, key: string): Uint8Array {
  const parts: Buffer[] = []
  const head = Buffer.alloc(3)
  head.writeInt16BE(CLIENT_QUOTA_RECORD_TYPE, 0)
  head.writeInt8(entity.size, 2)
  parts.push(head)
  const str = (s: string | null) => {
    const b = s === null ? Buffer.alloc(0) : Buffer.from(s, 'utf8')
    const len = Buffer.alloc(2)
    len.writeInt16BE(s === null ? -1 : b.length, 0)
    parts.push(len, b)
  }
  for (const [type, name] of [...entity].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    str(type)
    str(name)
  }
  str(key)
  return Buffer.concat(parts)
}

export function decodeClientQuotaKey(bytes: Uint8Array): { entity: QuotaEntity; key: string } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let o = 0
  const need = (n: number) => {
    if (o + n > buf.length) throw recordError(`client quota record key truncated at byte ${o}`)
  }
  need(3)
  if (buf.readInt16BE(0) !== CLIENT_QUOTA_RECORD_TYPE)
    throw recordError(`unexpected record type ${buf.readInt16BE(0)} for a client quota`)
  const parts = buf.readInt8(2)
  o = 3
  const str = (): string | null => {
    need(2)
    const n = buf.readInt16BE(o)
    o += 2
    if (n < 0) return null
    need(n)
    const s = buf.toString('utf8', o, o + n)
    o += n
    return s
  }
  const entity = new Map<string, string | null>()
  for (let i = 0; i < parts; i++) {
    const type = str()
    if (type === null) throw recordError('client quota record with a null entity type')
    entity.set(type, str())
  }
  const key = str()
  if (key === null || o !== buf.length) throw recordError('malformed client quota record key')
  return { entity, key }
}

/** Whether a record of the dynamic-config log is a client quota record. */
export function isClientQuotaRecord(key: Uint8Array): boolean {
  return key.byteLength >= 2 && ((key[0] << 8) | key[1]) === CLIENT_QUOTA_RECORD_TYPE
}

function quotaRecord(entity: QuotaEntity, key: string, value: number | null): CoordinatorRecord {
  if (value === null) return { key: encodeClientQuotaKey(entity, key), value: null }
  const v = Buffer.alloc(10)
  v.writeInt16BE(0, 0)
  v.writeDoubleBE(value, 2)
  return { key: encodeClientQuotaKey(entity, key), value: v }
}

function decodeValue(bytes: Uint8Array): number {
  if (bytes.byteLength !== 10) throw recordError('malformed client quota record value')
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).readDoubleBE(2)
}

// ---------------------------------------------------------------------------------------------

interface StoredEntity {
  readonly entity: QuotaEntity
  readonly values: Map<string, number>
}

/** The longest throttle time: ThrottleTimeMs is an int32, and so is a Node timer's delay. */
const MAX_THROTTLE_MS = 2147483647

/**
 * Every this many new rates, the rates idle for the whole measured span are dropped (they measure 0
 * and would be recreated so): the rates kept are bounded by the clients active in that span.
 */
const SWEEP_EVERY = 1024

export interface ClientQuotasOptions {
  readonly store: RecordStore
  readonly logger: Logger
  readonly rate: RateConfig
  /** Resolves an IP entity's host name (Kafka's InetAddress.getByName); default: DNS. */
  readonly resolveHost?: (host: string) => Promise<boolean>
}

export class ClientQuotas {
  readonly #store: RecordStore
  readonly #logger: Logger
  readonly #rate: RateConfig
  readonly #resolveHost: (host: string) => Promise<boolean>
  readonly #entities = new Map<string, StoredEntity>()
  /** Per quota type: entity key → quota, for the precedence lookups. */
  readonly #byType: Record<QuotaType, Map<string, number>> = {
    produce: new Map(),
    fetch: new Map(),
    request: new Map(),
  }
  readonly #rates: Record<QuotaType | 'connection', Map<string, SampledRate>> = {
    produce: new Map(),
    fetch: new Map(),
    request: new Map(),
    connection: new Map(),
  }
  #recordsSinceSweep = 0
  #tail: Promise<unknown> = Promise.resolve()

  private constructor(options: ClientQuotasOptions) {
    this.#store = options.store
    this.#logger = options.logger
    this.#rate = options.rate
    this.#resolveHost =
      options.resolveHost ??
      (async (host) => {
        if (isIP(host) !== 0) return true
        try {
          await lookup(host)
          return true
        } catch {
          return false
        }
      })
  }

  /** Replays the stored quotas. */
  static async load(options: ClientQuotasOptions): Promise<ClientQuotas> {
    const q = new ClientQuotas(options)
    for (const r of await options.store.load(GROUP_CONFIG_LOG_ID)) {
      if (!isClientQuotaRecord(r.key)) continue
      const { entity, key } = decodeClientQuotaKey(r.key)
      q.#apply(entity, key, r.value === null ? null : decodeValue(r.value))
    }
    return q
  }

  /** Whether any quota of the type is set (nothing is measured otherwise, as in Kafka). */
  enabled(type: QuotaType): boolean {
    return this.#byType[type].size > 0
  }

  /** The longest throttle of a request-percentage or connection-rate quota: one window. */
  get maxThrottleMs(): number {
    return this.#rate.windowMs
  }

  // -------------------------------------------------------------------------------------------
  // Enforcement

  /**
   * Records `value` (bytes, or request time as a percentage of one second) for the client and
   * returns the throttle time in ms (0 when within its quota or when no quota applies).
   */
  recordAndThrottleMs(type: QuotaType, user: string, clientId: string, value: number, nowMs: number): number {
    if (!this.enabled(type)) return 0
    const q = this.#quotaFor(type, user, clientId)
    if (q === null) return 0
    const rate = this.#rateFor(type, q.tags, nowMs)
    const throttle = rate.recordAndThrottleMs(value, q.bound, nowMs)
    // A byte-rate throttle is not bounded in Kafka either, but it must fit ThrottleTimeMs (int32).
    return Math.min(throttle, type === 'request' ? this.#rate.windowMs : MAX_THROTTLE_MS)
  }

  /**
   * The connection-creation-rate check of an address: records the connection and returns the
   * delay in ms when the address is over its quota (the connection is then not recorded).
   */
  connectionThrottleMs(host: string, nowMs: number): number {
    const bound = this.#ipQuota(host)
    if (bound === null) return 0
    const rate = this.#rateFor('connection', host, nowMs)
    const throttle = rate.recordAndThrottleMs(1, bound, nowMs)
    if (throttle > 0) rate.record(-1, nowMs)
    return Math.min(throttle, this.#rate.windowMs)
  }

  #ipQuota(host: string): number | null {
    const own = this.#entities.get(entityKey(new Map([[IP, host]])))?.values.get(CONNECTION_CREATION_RATE)
    if (own !== undefined) return own
    return this.#entities.get(entityKey(new Map([[IP, null]])))?.values.get(CONNECTION_CREATION_RATE) ?? null
  }

  #rateFor(type: QuotaType | 'connection', tags: string, nowMs: number): SampledRate {
    const rates = this.#rates[type]
    let rate = rates.get(tags)
    if (rate === undefined) {
      if (++this.#recordsSinceSweep >= SWEEP_EVERY) this.#sweep(nowMs)
      rate = new SampledRate(this.#rate)
      rates.set(tags, rate)
    }
    return rate
  }

  /** Drops rates idle for the whole measured span: they measure 0 and would be recreated so. */
  #sweep(nowMs: number): void {
    this.#recordsSinceSweep = 0
    const idle = this.#rate.samples * this.#rate.windowMs
    for (const rates of Object.values(this.#rates)) {
      for (const [k, r] of rates) if (nowMs - r.lastRecordMs >= idle) rates.delete(k)
    }
  }

  /** The quota of the most specific entity set for (user, clientId), and its rate's tags. */
  #quotaFor(type: QuotaType, user: string, clientId: string): { bound: number; tags: string } | null {
    const set = this.#byType[type]
    const get = (u: string | null | undefined, c: string | null | undefined): number | undefined => {
      const e = new Map<string, string | null>()
      if (u !== undefined) e.set(USER, u)
      if (c !== undefined) e.set(CLIENT_ID, c)
      return set.get(entityKey(e))
    }
    const both = `${user}\u0000${clientId}`
    const userOnly = `${user}\u0000`
    if (user !== '' && clientId !== '') {
      for (const [u, c] of [
        [user, clientId],
        [user, null],
      ] as const) {
        const v = get(u, c)
        if (v !== undefined) return { bound: v, tags: both }
      }
    }
    if (user !== '') {
      const v = get(user, undefined)
      if (v !== undefined) return { bound: v, tags: userOnly }
    }
    if (user !== '' && clientId !== '') {
      for (const [u, c] of [
        [null, clientId],
        [null, null],
      ] as const) {
        const v = get(u, c)
        if (v !== undefined) return { bound: v, tags: both }
      }
    }
    if (user !== '') {
      const v = get(null, undefined)
      if (v !== undefined) return { bound: v, tags: userOnly }
    }
    if (clientId !== '') {
      const v = get(undefined, clientId) ?? get(undefined, null)
      if (v !== undefined) return { bound: v, tags: `\u0000${clientId}` }
    }
    return null
  }

  // -------------------------------------------------------------------------------------------
  // DescribeClientQuotas

  /** Kafka's ClientQuotasImage.describe: the entities the filter selects; throws ApiError (the error of the whole describe). */
  describe(components: readonly DescribeFilterComponent[], strict: boolean): DescribedEntity[] {
    const exact = new Map<string, string | null>()
    const typeMatch = new Set<string>()
    for (const c of components) {
      if (c.entityType === '') throw new ApiError(ErrorCode.INVALID_REQUEST, 'Invalid empty entity type.')
      if (exact.has(c.entityType) || typeMatch.has(c.entityType)) {
        throw new ApiError(
          ErrorCode.INVALID_REQUEST,
          `Entity type ${c.entityType} cannot appear more than once in the filter.`,
        )
      }
      if (c.entityType !== IP && c.entityType !== USER && c.entityType !== CLIENT_ID) {
        throw new ApiError(ErrorCode.UNSUPPORTED_VERSION, `Unsupported entity type ${c.entityType}`)
      }
      switch (c.matchType) {
        case 0:
          if (c.match === null)
            throw new ApiError(
              ErrorCode.INVALID_REQUEST,
              'Request specified MATCH_TYPE_EXACT, but set match string to null.',
            )
          exact.set(c.entityType, c.match)
          break
        case 1:
          if (c.match !== null)
            throw new ApiError(
              ErrorCode.INVALID_REQUEST,
              'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.',
            )
          exact.set(c.entityType, null)
          break
        case 2:
          if (c.match !== null)
            throw new ApiError(
              ErrorCode.INVALID_REQUEST,
              'Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.',
            )
          typeMatch.add(c.entityType)
          break
        default:
          throw new ApiError(ErrorCode.INVALID_REQUEST, `Unknown match type ${c.matchType}`)
      }
    }
    const has = (t: string) => exact.has(t) || typeMatch.has(t)
    if (has(IP) && (has(USER) || has(CLIENT_ID))) {
      throw new ApiError(
        ErrorCode.INVALID_REQUEST,
        'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.',
      )
    }
    const out: DescribedEntity[] = []
    for (const { entity, values } of this.#entities.values()) {
      let match: boolean
      if (exact.size > 0 || typeMatch.size > 0) {
        match =
          [...exact].every(([t, n]) => entity.has(t) && entity.get(t) === n) &&
          [...typeMatch].every((t) => entity.has(t) && entity.get(t) !== null)
        if (match && strict) match = entity.size === exact.size + typeMatch.size
      } else {
        // No component: everything unless strict.
        match = !strict
      }
      if (match) {
        out.push({
          entity: wireEntity(entity),
          values: [...values].map(([key, value]) => ({ key, value })),
        })
      }
    }
    return out
  }

  // -------------------------------------------------------------------------------------------
  // AlterClientQuotas

  /**
   * Kafka's controller alteration: per entry, duplicate keys and entities refused, the entity and
   * its keys validated, then every change of the valid entries stored in one append (none with
   * `validateOnly`). One outcome per distinct entity, in first-seen order.
   */
  alter(entries: readonly AlterEntry[], validateOnly: boolean): Promise<EntityOutcome[]> {
    const run = this.#tail.then(() => this.#alter(entries, validateOnly))
    this.#tail = run.catch(() => undefined)
    return run
  }

  async #alter(entries: readonly AlterEntry[], validateOnly: boolean): Promise<EntityOutcome[]> {
    const outcomes = new Map<
      string,
      { entity: QuotaEntity; errorCode: number; errorMessage: string | null }
    >()
    const records: CoordinatorRecord[] = []
    const changes: { entity: QuotaEntity; key: string; value: number | null }[] = []
    for (const entry of entries) {
      // The request's pairs become a map, as Kafka's AlterClientQuotasRequest.entries() builds it.
      const entity = new Map<string, string | null>()
      for (const p of entry.entity) entity.set(p.entityType, p.entityName)
      const k = entityKey(entity)
      const ops = new Map<string, number | null>()
      let duplicateKey: string | null = null
      for (const op of entry.ops) {
        if (ops.has(op.key)) duplicateKey = op.key
        else ops.set(op.key, op.remove ? null : op.value)
      }
      if (outcomes.has(k)) {
        outcomes.set(k, {
          entity,
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `Ignoring duplicate entity ${entityText(entity)}`,
        })
        continue
      }
      if (duplicateKey !== null) {
        // Kafka records this error and then, finding the entity answered, replaces it.
        outcomes.set(k, {
          entity,
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `Ignoring duplicate entity ${entityText(entity)}`,
        })
        continue
      }
      const error = await this.#check(entity, ops)
      if (error !== null) {
        outcomes.set(k, { entity, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: error })
        continue
      }
      const current = this.#entities.get(k)?.values
      for (const [key, value] of ops) {
        if (value === null) {
          if (current?.has(key)) {
            records.push(quotaRecord(entity, key, null))
            changes.push({ entity, key, value: null })
          }
        } else if (current?.get(key) !== value) {
          records.push(quotaRecord(entity, key, value))
          changes.push({ entity, key, value })
        }
      }
      outcomes.set(k, { entity, errorCode: ErrorCode.NONE, errorMessage: null })
    }
    if (!validateOnly && records.length > 0) {
      try {
        await this.#store.append(GROUP_CONFIG_LOG_ID, records)
      } catch (err) {
        this.#logger.error({ err }, 'Failed to store client quotas')
        return [...outcomes.values()].map((o) => ({
          entity: wireEntity(o.entity),
          errorCode: o.errorCode === ErrorCode.NONE ? ErrorCode.UNKNOWN_SERVER_ERROR : o.errorCode,
          errorMessage: o.errorCode === ErrorCode.NONE ? null : o.errorMessage,
        }))
      }
      for (const c of changes) {
        this.#apply(c.entity, c.key, c.value)
        this.#logger.info(
          { entity: Object.fromEntries(c.entity), key: c.key, value: c.value },
          c.value === null
            ? `Removed client quota ${c.key} of ${entityText(c.entity)}`
            : `Set client quota ${c.key} of ${entityText(c.entity)} to ${c.value}`,
        )
      }
    }
    return [...outcomes.values()].map((o) => ({
      entity: wireEntity(o.entity),
      errorCode: o.errorCode,
      errorMessage: o.errorMessage,
    }))
  }

  /** Kafka's validateEntity, configKeysForEntityType and validateQuotaKeyValue: the message, or null. */
  async #check(entity: QuotaEntity, ops: ReadonlyMap<string, number | null>): Promise<string | null> {
    if (entity.size === 0) return 'Invalid empty client quota entity'
    for (const [type, name] of entity) {
      if (type !== USER && type !== CLIENT_ID && type !== IP)
        return `Unhandled client quota entity type: ${type}`
      if (name !== null && name === '') return `Empty ${type} not supported`
    }
    let keys: ReadonlyMap<string, string>
    if (entity.has(IP)) {
      if (entity.has(USER) || entity.has(CLIENT_ID))
        return 'Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId'
      const ip = entity.get(IP) ?? null
      if (ip !== null && !(await this.#resolveHost(ip))) return `${ip} is not a valid IP or resolvable host.`
      keys = IP_KEYS
    } else {
      keys = USER_CLIENT_KEYS
    }
    for (const [key, value] of ops) {
      if (value === null) continue
      const type = keys.get(key)
      if (type === undefined) return `Invalid configuration key ${key}`
      if (!(value > 0)) return `Quota ${key} must be greater than 0`
      if (type === 'int' && value > 2147483647) return `Proposed value for ${key} is too large for an INT.`
      if (type === 'long' && value > 2 ** 63) return `Proposed value for ${key} is too large for a LONG.`
      if (type !== 'double' && Math.abs(value % 1) > 1e-6) return `${key} cannot be a fractional value.`
    }
    return null
  }

  #apply(entity: QuotaEntity, key: string, value: number | null): void {
    const k = entityKey(entity)
    let stored = this.#entities.get(k)
    if (value === null) {
      stored?.values.delete(key)
      if (stored !== undefined && stored.values.size === 0) this.#entities.delete(k)
    } else {
      if (stored === undefined) {
        stored = { entity, values: new Map() }
        this.#entities.set(k, stored)
      }
      stored.values.set(key, value)
    }
    for (const type of Object.keys(KEY_OF) as QuotaType[]) {
      if (KEY_OF[type] !== key) continue
      if (value === null) this.#byType[type].delete(k)
      else this.#byType[type].set(k, value)
    }
  }
}
