import { ApiError } from '../../protocol/api-error.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { RecordStore } from '../../coordinator/storage/types.js'
import type { AclOperationName, Authorizer } from '../router.js'
import {
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  type AclOperationCodeName,
  bindingKey,
  bindingMatchesFilter,
  patternApplies,
  type ResourceTypeName,
  WILDCARD_HOST,
  WILDCARD_PRINCIPAL,
} from './acl.js'
import { ACL_LOG_ID, aclRecord, loadAcls } from './acl-store.js'
import { currentClientHost } from './request-scope.js'

/**
 * The ACL authorizer (Kafka's StandardAuthorizer rules), enabled by a non-empty
 * `authorizer.class.name`:
 *
 * 1. a principal in `super.users` may do everything;
 * 2. a DENY ACL that applies (resource pattern, principal or `User:*`, host or `*`, the operation
 *    or ALL) refuses, whatever else applies;
 * 3. an ALLOW ACL that applies permits, where ALLOW of READ, WRITE, DELETE or ALTER also permits
 *    DESCRIBE and ALLOW of ALTER_CONFIGS also permits DESCRIBE_CONFIGS;
 * 4. otherwise refused, unless no ACL at all applies to the resource and
 *    `allow.everyone.if.no.acl.found` is true.
 *
 * ACLs are durable (see acl-store.ts); create and delete append first and change the in-memory set
 * only after the append succeeded, one change at a time.
 */

export interface AclAuthorizerOptions {
  /** `super.users`: principals, e.g. `User:admin`. */
  readonly superUsers: readonly string[]
  /** `allow.everyone.if.no.acl.found` */
  readonly allowEveryoneIfNoAclFound: boolean
  /** `max.acls`: the most ACLs stored (default {@link DEFAULT_MAX_ACLS}). */
  readonly maxAcls?: number
  /** `max.acl.bytes`: the most UTF-8 bytes of one ACL's strings (default {@link DEFAULT_MAX_ACL_BYTES}). */
  readonly maxAclBytes?: number
}

export const DEFAULT_MAX_ACLS = 10_000
export const DEFAULT_MAX_ACL_BYTES = 4096
/** Kafka's controller writes at most this many records for one request (MAX_RECORDS_PER_USER_OP). */
export const MAX_ACLS_PER_REQUEST = 10_000

/** A creation the limits refuse: POLICY_VIOLATION, the message naming the limit. */
const aclLimit = (message: string): ApiError => new ApiError(ErrorCode.POLICY_VIOLATION, message)

/** UTF-8 bytes of the strings of an ACL (resource name, principal, host): what max.acl.bytes bounds. */
export function aclBytes(b: AclBinding): number {
  return Buffer.byteLength(b.resourceName) + Buffer.byteLength(b.principal) + Buffer.byteLength(b.host)
}

/** One question in a batch. */
export interface AuthorizationAction {
  readonly operation: AclOperationCodeName
  readonly resourceType: ResourceTypeName
  readonly resourceName: string
}

/** The operations Kafka reports in authorized-operations fields, per resource type. */
export const SUPPORTED_OPERATIONS: Readonly<
  Partial<Record<ResourceTypeName, readonly AclOperationCodeName[]>>
> = {
  TOPIC: ['READ', 'WRITE', 'CREATE', 'DESCRIBE', 'DELETE', 'ALTER', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS'],
  GROUP: ['READ', 'DESCRIBE', 'DELETE', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS'],
  CLUSTER: [
    'CREATE',
    'CLUSTER_ACTION',
    'DESCRIBE_CONFIGS',
    'ALTER_CONFIGS',
    'IDEMPOTENT_WRITE',
    'ALTER',
    'DESCRIBE',
  ],
  TRANSACTIONAL_ID: ['DESCRIBE', 'WRITE', 'TWO_PHASE_COMMIT'],
  DELEGATION_TOKEN: ['DESCRIBE'],
}

const DESCRIBE_IMPLIED_BY: ReadonlySet<AclOperationCodeName> = new Set([
  'DESCRIBE',
  'READ',
  'WRITE',
  'DELETE',
  'ALTER',
  'ALL',
])
const DESCRIBE_CONFIGS_IMPLIED_BY: ReadonlySet<AclOperationCodeName> = new Set([
  'DESCRIBE_CONFIGS',
  'ALTER_CONFIGS',
  'ALL',
])

function allowCovers(aclOp: AclOperationCodeName, op: AclOperationCodeName): boolean {
  if (aclOp === op || aclOp === 'ALL') return true
  if (op === 'DESCRIBE') return DESCRIBE_IMPLIED_BY.has(aclOp)
  if (op === 'DESCRIBE_CONFIGS') return DESCRIBE_CONFIGS_IMPLIED_BY.has(aclOp)
  return false
}

export class AclAuthorizer implements Authorizer {
  readonly #store: RecordStore
  readonly #superUsers: ReadonlySet<string>
  readonly #allowIfNoAcl: boolean
  readonly #maxAcls: number
  readonly #maxAclBytes: number
  /** Live ACLs by binding identity, and the same ACLs by resource type for lookups. */
  #acls: Map<string, AclBinding>
  #byType = new Map<ResourceTypeName, AclBinding[]>()
  /** Serializes changes: each append and its in-memory update finish before the next starts. */
  #tail: Promise<unknown> = Promise.resolve()

  private constructor(store: RecordStore, acls: Map<string, AclBinding>, options: AclAuthorizerOptions) {
    this.#store = store
    this.#acls = acls
    this.#superUsers = new Set(options.superUsers)
    this.#allowIfNoAcl = options.allowEveryoneIfNoAclFound
    this.#maxAcls = options.maxAcls ?? DEFAULT_MAX_ACLS
    this.#maxAclBytes = options.maxAclBytes ?? DEFAULT_MAX_ACL_BYTES
    this.#reindex()
  }

  /** Reads the ACL log of `store` and returns an authorizer holding those ACLs. */
  static async load(store: RecordStore, options: AclAuthorizerOptions): Promise<AclAuthorizer> {
    return new AclAuthorizer(store, await loadAcls(store), options)
  }

  get size(): number {
    return this.#acls.size
  }

  /**
   * Why one new ACL is refused by `max.acl.bytes`, or null. ACLs stored before the limit was
   * lowered stay.
   */
  checkAclSize(b: AclBinding): string | null {
    const n = aclBytes(b)
    if (n <= this.#maxAclBytes) return null
    return `The ACL's resource name, principal and host take ${n} bytes, above the limit of ${this.#maxAclBytes} (max.acl.bytes).`
  }

  /**
   * Kafka's authorize for one action. With four arguments (the router's `Authorizer` form) the host
   * is the address of the client whose request is being handled (see request-scope.ts).
   */
  authorize(
    principal: string,
    operation: AclOperationName,
    resourceType: 'TOPIC' | 'GROUP' | 'CLUSTER' | 'TRANSACTIONAL_ID',
    resourceName: string,
  ): boolean
  authorize(
    principal: string,
    host: string,
    operation: AclOperationCodeName,
    resourceType: ResourceTypeName,
    resourceName: string,
  ): boolean
  authorize(principal: string, a: string, b: string, c: string, d?: string): boolean {
    if (d === undefined) {
      return this.#decide(principal, currentClientHost(), a as AclOperationCodeName, b as ResourceTypeName, c)
    }
    return this.#decide(principal, a, b as AclOperationCodeName, c as ResourceTypeName, d)
  }

  /** The batch form: one answer per action, in order. */
  authorizeAll(principal: string, host: string, actions: readonly AuthorizationAction[]): boolean[] {
    return actions.map((x) => this.#decide(principal, host, x.operation, x.resourceType, x.resourceName))
  }

  /**
   * Kafka's authorized-operations bit set for one resource: bit n is set when the principal may
   * perform the operation whose code is n, over the operations Kafka defines for the type.
   */
  authorizedOperations(
    principal: string,
    host: string | undefined,
    resourceType: ResourceTypeName,
    resourceName: string,
  ): number {
    let bits = 0
    for (const op of SUPPORTED_OPERATIONS[resourceType] ?? []) {
      if (this.#decide(principal, host, op, resourceType, resourceName)) bits |= 1 << AclOperation[op]
    }
    return bits
  }

  #decide(
    principal: string,
    host: string | undefined,
    op: AclOperationCodeName,
    type: ResourceTypeName,
    name: string,
  ): boolean {
    if (this.#superUsers.has(principal)) return true
    let anyForResource = false
    let allowed = false
    for (const acl of this.#byType.get(type) ?? []) {
      if (!patternApplies(acl, type, name)) continue
      anyForResource = true
      if (acl.principal !== principal && acl.principal !== WILDCARD_PRINCIPAL) continue
      if (acl.host !== WILDCARD_HOST && acl.host !== host) continue
      if (acl.permissionType === 'DENY') {
        if (acl.operation === op || acl.operation === 'ALL') return false
      } else if (allowCovers(acl.operation, op)) allowed = true
    }
    if (allowed) return true
    return !anyForResource && this.#allowIfNoAcl
  }

  /** Every ACL the filter matches (DescribeAcls). */
  acls(filter: AclBindingFilter): AclBinding[] {
    return [...this.#acls.values()].filter((b) => bindingMatchesFilter(b, filter))
  }

  /**
   * Adds already validated bindings in one append. Bindings that exist already are kept (creating
   * an existing ACL succeeds without change, as in Kafka). Rejects with an {@link ApiError} (POLICY_VIOLATION),
   * storing nothing, when the new ones are more than Kafka writes for one request or would take the
   * server above `max.acls`.
   */
  createAcls(bindings: readonly AclBinding[]): Promise<void> {
    return this.#serial(async () => {
      const fresh = new Map<string, AclBinding>()
      for (const b of bindings) {
        const k = bindingKey(b)
        if (!this.#acls.has(k)) fresh.set(k, b)
      }
      if (fresh.size === 0) return
      // Kafka's BoundedList of one request's records, and its text.
      if (fresh.size > MAX_ACLS_PER_REQUEST)
        throw aclLimit('Unable to perform excessively large batch operation.')
      if (this.#acls.size + fresh.size > this.#maxAcls) {
        throw aclLimit(
          `Creating ${fresh.size} ACL(s) would bring the server to ${this.#acls.size + fresh.size} ACLs, above the limit of ${this.#maxAcls} (max.acls).`,
        )
      }
      await this.#store.append(
        ACL_LOG_ID,
        [...fresh.values()].map((b) => aclRecord(b, true)),
      )
      for (const [k, b] of fresh) this.#acls.set(k, b)
      this.#reindex()
    })
  }

  /** Removes every ACL each filter matches, in one append; returns the matches per filter. */
  deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclBinding[][]> {
    return this.#serial(async () => {
      const matches = filters.map((f) => this.acls(f))
      const doomed = new Map<string, AclBinding>()
      for (const list of matches) for (const b of list) doomed.set(bindingKey(b), b)
      if (doomed.size > 0) {
        await this.#store.append(
          ACL_LOG_ID,
          [...doomed.values()].map((b) => aclRecord(b, false)),
        )
        for (const k of doomed.keys()) this.#acls.delete(k)
        this.#reindex()
      }
      return matches
    })
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn)
    this.#tail = run.catch(() => undefined)
    return run
  }

  #reindex(): void {
    const byType = new Map<ResourceTypeName, AclBinding[]>()
    for (const b of this.#acls.values()) {
      let list = byType.get(b.resourceType)
      if (list === undefined) byType.set(b.resourceType, (list = []))
      list.push(b)
    }
    this.#byType = byType
  }
}

/** `super.users` is Kafka's semicolon-separated principal list (`User:alice;User:bob`). */
export function parseSuperUsers(value: string): string[] {
  return value
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}
