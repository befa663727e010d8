/**
 * The SCRAM credentials the server authenticates with (Kafka's ScramControlManager and ScramImage
 * in one): the ones configured in `sasl.scram.users`, and the ones stored through
 * AlterUserScramCredentials, described by DescribeUserScramCredentials.
 *
 * Precedence: a stored credential of a user and mechanism wins over a configured one of the same
 * user and mechanism. A deletion removes only a stored credential (the configured one, if any,
 * applies again); deleting a credential that exists only in `sasl.scram.users` is INVALID_REQUEST
 * (Kafka has no configured credentials; this rule is ours).
 *
 * Every SASL/SCRAM exchange looks its credential up here when the client-first message arrives, so
 * a credential stored is usable by the next authentication and a deleted one fails it; connections
 * already authenticated stay.
 *
 * Durability: the dynamic-config log of the record store ({@link GROUP_CONFIG_LOG_ID}, which also
 * holds the group configs and the client quotas; Kafka keeps UserScramCredentialRecord in its one
 * metadata log too), one record per user and mechanism, record type {@link SCRAM_RECORD_TYPE}:
 *   key   = int16 record type, int8 mechanism (Kafka's type: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512),
 *           user name (int16 length + UTF-8)
 *   value = int16 version 0, int32 iterations, then salt, StoredKey and ServerKey (each int32
 *           length + bytes); a deletion is a tombstone.
 * One AlterUserScramCredentials request is one append; memory changes only after it succeeded.
 */
import type { Logger } from 'pino'
import { GROUP_CONFIG_LOG_ID } from '../../coordinator/service/group-config-manager.js'
import type { CoordinatorRecord, RecordStore } from '../../coordinator/storage/types.js'
import { LocalError } from '../../errors.js'
import { ErrorCode } from '../../protocol/errors.js'
import { JavaHashMap, javaStringHash } from '../../java-order.js'
import {
  credentialFromSaltedPassword,
  SCRAM_MAX_ITERATIONS,
  SCRAM_MECHANISMS,
  SCRAM_MIN_ITERATIONS,
  type ScramCredential,
  type ScramCredentials,
  type ScramMechanism,
  type ScramUserLookup,
} from './scram.js'

export const SCRAM_RECORD_TYPE = 0x7f05

/** Kafka's ScramMechanism type codes (org.apache.kafka.clients.admin.ScramMechanism). */
const MECHANISM_BY_TYPE: ReadonlyMap<number, ScramMechanism> = new Map([
  [1, 'SCRAM-SHA-256'],
  [2, 'SCRAM-SHA-512'],
])
export function scramMechanismType(m: ScramMechanism): number {
  return m === 'SCRAM-SHA-256' ? 1 : 2
}

const recordError = (message: string): LocalError => new LocalError('SCRAM_RECORD_INVALID', message)

// ---------------------------------------------------------------------------------------------
// Records

export function encodeScramKey(user: string, mechanism: ScramMechanism): Uint8Array {
  const name = Buffer.from(user, 'utf8')
  if (name.length > 0x7fff) throw recordError('SCRAM user name longer than 32767 bytes')
  const out = Buffer.alloc(5 + name.length)
  out.writeInt16BE(SCRAM_RECORD_TYPE, 0)
  out.writeInt8(scramMechanismType(mechanism), 2)
  out.writeInt16BE(name.length, 3)
  name.copy(out, 5)
  return out
}

export function decodeScramKey(bytes: Uint8Array): { user: string; mechanism: ScramMechanism } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buf.length < 5 || buf.readInt16BE(0) !== SCRAM_RECORD_TYPE)
    throw recordError('malformed SCRAM credential record key')
  const mechanism = MECHANISM_BY_TYPE.get(buf.readInt8(2))
  if (mechanism === undefined)
    throw recordError(`unknown SCRAM mechanism type ${buf.readInt8(2)} in a record`)
  const n = buf.readInt16BE(3)
  if (n < 0 || 5 + n !== buf.length) throw recordError('malformed SCRAM credential record key')
  return { user: buf.toString('utf8', 5, 5 + n), mechanism }
}

export function encodeScramValue(c: ScramCredential): Uint8Array {
  const parts = [c.salt, c.storedKey, c.serverKey]
  const out = Buffer.alloc(6 + parts.reduce((n, p) => n + 4 + p.length, 0))
  let o = out.writeInt16BE(0, 0)
  o = out.writeInt32BE(c.iterations, o)
  for (const p of parts) {
    o = out.writeInt32BE(p.length, o)
    o += Buffer.from(p).copy(out, o)
  }
  return out
}

export function decodeScramValue(mechanism: ScramMechanism, bytes: Uint8Array): ScramCredential {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const bad = () => recordError('malformed SCRAM credential record value')
  if (buf.length < 6 || buf.readInt16BE(0) !== 0) throw bad()
  const iterations = buf.readInt32BE(2)
  let o = 6
  const field = (): Buffer => {
    if (o + 4 > buf.length) throw bad()
    const n = buf.readInt32BE(o)
    o += 4
    if (n < 0 || o + n > buf.length) throw bad()
    const b = Buffer.from(buf.subarray(o, o + n))
    o += n
    return b
  }
  const salt = field()
  const storedKey = field()
  const serverKey = field()
  if (o !== buf.length) throw bad()
  return { mechanism, salt, iterations, storedKey, serverKey }
}

/** Whether a record of the dynamic-config log is a SCRAM credential record. */
export function isScramRecord(key: Uint8Array): boolean {
  return key.byteLength >= 2 && ((key[0] << 8) | key[1]) === SCRAM_RECORD_TYPE
}

// ---------------------------------------------------------------------------------------------

export interface ScramDeletion {
  readonly name: string
  readonly mechanism: number
}

export interface ScramUpsertion {
  readonly name: string
  readonly mechanism: number
  readonly iterations: number
  readonly salt: Uint8Array
  readonly saltedPassword: Uint8Array
}

export interface ScramUserResult {
  readonly user: string
  readonly errorCode: number
  readonly errorMessage: string | null
}

export interface ScramDescribeResult extends ScramUserResult {
  readonly credentialInfos: { mechanism: number; iterations: number }[]
}

type Outcome = { readonly errorCode: number; readonly errorMessage: string | null }
const fail = (errorCode: number, errorMessage: string | null): Outcome => ({ errorCode, errorMessage })
const OK: Outcome = { errorCode: ErrorCode.NONE, errorMessage: null }

const ALTERED_TWICE = 'A user credential cannot be altered twice in the same request'

/** Kafka's ScramControlManager.validateScramUsernameAndMechanism. */
function checkNameAndMechanism(name: string, mechanism: number): Outcome {
  if (name === '') return fail(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty')
  if (!MECHANISM_BY_TYPE.has(mechanism))
    return fail(ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism')
  return OK
}

/** Kafka's ScramControlManager.validateUpsertion. */
export function checkUpsertion(u: ScramUpsertion): Outcome {
  const e = checkNameAndMechanism(u.name, u.mechanism)
  if (e.errorCode !== ErrorCode.NONE) return e
  if (u.iterations < SCRAM_MIN_ITERATIONS)
    return fail(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations')
  if (u.iterations > SCRAM_MAX_ITERATIONS)
    return fail(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations')
  return OK
}

export interface ScramCredentialStoreOptions {
  /** `sasl.scram.users` */
  readonly configured: ScramCredentials
  readonly logger: Logger
}

export class ScramCredentialStore {
  readonly #configured: ScramCredentials
  readonly #logger: Logger
  /** Stored credentials by mechanism, then user name. */
  readonly #stored = new Map<ScramMechanism, Map<string, ScramCredential>>(
    SCRAM_MECHANISMS.map((m) => [m, new Map()]),
  )
  #store: RecordStore | undefined
  #tail: Promise<unknown> = Promise.resolve()

  constructor(options: ScramCredentialStoreOptions) {
    this.#configured = options.configured
    this.#logger = options.logger
  }

  /** Replays the stored credentials of the (opened) store, which later alterations append to. */
  async load(store: RecordStore): Promise<void> {
    for (const r of await store.load(GROUP_CONFIG_LOG_ID)) {
      // The log also holds the group configs and the client quotas, replayed by their owners.
      if (!isScramRecord(r.key)) continue
      const { user, mechanism } = decodeScramKey(r.key)
      const users = this.#stored.get(mechanism) as Map<string, ScramCredential>
      if (r.value === null) users.delete(user)
      else users.set(user, decodeScramValue(mechanism, r.value))
    }
    this.#store = store
  }

  /** The credential an exchange uses: the stored one, else the configured one. */
  credential(mechanism: ScramMechanism, user: string): ScramCredential | undefined {
    return this.#stored.get(mechanism)?.get(user) ?? this.#configured.get(mechanism)?.get(user)
  }

  /** The lookup of one mechanism, for the SCRAM server of an exchange. */
  lookup(mechanism: ScramMechanism): ScramUserLookup {
    return { get: (user) => this.credential(mechanism, user) }
  }

  #users(): Set<string> {
    const users = new Set<string>()
    for (const m of SCRAM_MECHANISMS) {
      for (const u of this.#stored.get(m)?.keys() ?? []) users.add(u)
      for (const u of this.#configured.get(m)?.keys() ?? []) users.add(u)
    }
    return users
  }

  // -------------------------------------------------------------------------------------------
  // DescribeUserScramCredentials

  /**
   * Kafka's ScramImage.describe: null or empty `users` describes every user with a credential;
   * otherwise each user named once, a user without credential RESOURCE_NOT_FOUND,
   * a user named twice DUPLICATE_RESOURCE (one result).
   */
  describe(users: readonly string[] | null): ScramDescribeResult[] {
    // Kafka iterates a HashMap of the users: its order is Kafka's order of the results.
    const unique = new JavaHashMap<string, boolean>(javaStringHash)
    if (users === null || users.length === 0) {
      for (const u of [...this.#users()].sort()) unique.set(u, false)
    } else {
      for (const u of users) unique.set(u, unique.has(u))
    }
    const out: ScramDescribeResult[] = []
    for (const [user, duplicate] of unique.entries()) {
      if (duplicate) {
        out.push({
          user,
          errorCode: ErrorCode.DUPLICATE_RESOURCE,
          errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`,
          credentialInfos: [],
        })
        continue
      }
      const credentialInfos: { mechanism: number; iterations: number }[] = []
      for (const m of SCRAM_MECHANISMS) {
        const c = this.credential(m, user)
        if (c !== undefined)
          credentialInfos.push({ mechanism: scramMechanismType(m), iterations: c.iterations })
      }
      if (credentialInfos.length === 0) {
        out.push({
          user,
          errorCode: ErrorCode.RESOURCE_NOT_FOUND,
          errorMessage: `Attempt to describe a user credential that does not exist: ${user}`,
          credentialInfos,
        })
      } else {
        out.push({ user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos })
      }
    }
    return out
  }

  // -------------------------------------------------------------------------------------------
  // AlterUserScramCredentials

  /**
   * Kafka's ScramControlManager.alterCredentials: one result per user. A user named more than once
   * in the request (deletions and upsertions together, whatever the mechanisms) is
   * DUPLICATE_RESOURCE; each deletion and upsertion is validated as Kafka validates it; the valid
   * ones are stored in one append. Results: the deletions done, the upsertions done, then the
   * failed users, each group in the order of Kafka's HashMap of it.
   */
  alter(
    deletions: readonly ScramDeletion[],
    upsertions: readonly ScramUpsertion[],
  ): Promise<ScramUserResult[]> {
    const run = this.#tail.then(() => this.#alter(deletions, upsertions))
    this.#tail = run.catch(() => undefined)
    return run
  }

  async #alter(
    deletions: readonly ScramDeletion[],
    upsertions: readonly ScramUpsertion[],
  ): Promise<ScramUserResult[]> {
    const toDelete = new JavaHashMap<string, ScramDeletion>(javaStringHash)
    const toUpsert = new JavaHashMap<string, ScramUpsertion>(javaStringHash)
    const errors = new JavaHashMap<string, Outcome>(javaStringHash)
    for (const d of deletions) {
      if (errors.has(d.name)) continue
      if (toDelete.delete(d.name)) {
        errors.set(d.name, fail(ErrorCode.DUPLICATE_RESOURCE, ALTERED_TWICE))
        continue
      }
      const e = this.#checkDeletion(d)
      if (e.errorCode !== ErrorCode.NONE) errors.set(d.name, e)
      else toDelete.set(d.name, d)
    }
    for (const u of upsertions) {
      if (errors.has(u.name)) continue
      // Both maps are cleared of the name, as Kafka's `remove(…) != null || remove(…) != null`
      // stops at the first map that held it (a name is never in both).
      if (toDelete.delete(u.name) || toUpsert.delete(u.name)) {
        errors.set(u.name, fail(ErrorCode.DUPLICATE_RESOURCE, ALTERED_TWICE))
        continue
      }
      const e = checkUpsertion(u)
      if (e.errorCode !== ErrorCode.NONE) errors.set(u.name, e)
      else toUpsert.set(u.name, u)
    }

    const results: ScramUserResult[] = []
    const records: CoordinatorRecord[] = []
    const changes: { user: string; mechanism: ScramMechanism; credential: ScramCredential | null }[] = []
    for (const d of toDelete.values()) {
      const mechanism = MECHANISM_BY_TYPE.get(d.mechanism) as ScramMechanism
      results.push({ user: d.name, ...OK })
      records.push({ key: encodeScramKey(d.name, mechanism), value: null })
      changes.push({ user: d.name, mechanism, credential: null })
    }
    for (const u of toUpsert.values()) {
      const mechanism = MECHANISM_BY_TYPE.get(u.mechanism) as ScramMechanism
      // Kafka's finishUpsertion: a SaltedPassword its HMAC refuses (an empty key) fails the user
      // with UNKNOWN_SERVER_ERROR and no message (ApiError.fromThrowable).
      if (u.saltedPassword.byteLength === 0) {
        errors.set(u.name, fail(ErrorCode.UNKNOWN_SERVER_ERROR, null))
        continue
      }
      const credential = credentialFromSaltedPassword(mechanism, u.salt, u.iterations, u.saltedPassword)
      results.push({ user: u.name, ...OK })
      // A wire string holds at most 32767 bytes, so the key always encodes.
      records.push({ key: encodeScramKey(u.name, mechanism), value: encodeScramValue(credential) })
      changes.push({ user: u.name, mechanism, credential })
    }
    for (const [user, e] of errors.entries()) results.push({ user, ...e })

    if (records.length > 0) {
      try {
        if (this.#store === undefined) throw new Error('the SCRAM credential store is not loaded')
        await this.#store.append(GROUP_CONFIG_LOG_ID, records)
      } catch (err) {
        this.#logger.error({ err }, 'Failed to store SCRAM credentials')
        return results.map((r) =>
          r.errorCode === ErrorCode.NONE
            ? { user: r.user, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null }
            : r,
        )
      }
      for (const c of changes) {
        const users = this.#stored.get(c.mechanism) as Map<string, ScramCredential>
        if (c.credential === null) users.delete(c.user)
        else users.set(c.user, c.credential)
        this.#logger.info(
          { user: c.user, mechanism: c.mechanism },
          c.credential === null
            ? `Removed the ${c.mechanism} credential of user ${c.user}`
            : `Set the ${c.mechanism} credential of user ${c.user} (${c.credential.iterations} iterations)`,
        )
      }
    }
    return results
  }

  /** Kafka's validateDeletion, with the configured credentials (ours) told apart. */
  #checkDeletion(d: ScramDeletion): Outcome {
    const e = checkNameAndMechanism(d.name, d.mechanism)
    if (e.errorCode !== ErrorCode.NONE) return e
    const mechanism = MECHANISM_BY_TYPE.get(d.mechanism) as ScramMechanism
    if (this.#stored.get(mechanism)?.has(d.name)) return OK
    if (this.#configured.get(mechanism)?.has(d.name)) {
      return fail(
        ErrorCode.INVALID_REQUEST,
        `The ${mechanism} credential of user ${d.name} comes from sasl.scram.users and cannot be deleted through the API; remove it from the configuration`,
      )
    }
    return fail(ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist')
  }
}
