/**
 * Kafka's ACL model: resource patterns, access-control entries, bindings and binding filters, with
 * Kafka's numeric codes (the wire values of CreateAcls / DescribeAcls / DeleteAcls) and Kafka's
 * matching rules. Pure data and functions; the authorizer and the durable store build on it.
 */

/** Kafka's ResourceType codes. */
export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const
export type ResourceTypeName = keyof typeof ResourceType

/** Kafka's PatternType codes. MATCH and ANY exist only in filters. */
export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const
export type PatternTypeName = keyof typeof PatternType

/** Kafka's AclOperation codes (also the bit positions of the authorized-operations fields). */
export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
  TWO_PHASE_COMMIT: 15,
} as const
export type AclOperationCodeName = keyof typeof AclOperation

/** Kafka's AclPermissionType codes. */
export const AclPermissionType = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const
export type AclPermissionTypeName = keyof typeof AclPermissionType

/** The only name a CLUSTER resource may have. */
export const CLUSTER_NAME = 'kafka-cluster'
/** A LITERAL resource name that matches every resource of its type. */
export const WILDCARD_RESOURCE = '*'
/** A principal that matches every principal of the User type. */
export const WILDCARD_PRINCIPAL = 'User:*'
/** A host that matches every host. */
export const WILDCARD_HOST = '*'

function nameOf<T extends Record<string, number>>(table: T, code: number): keyof T {
  for (const [k, v] of Object.entries(table)) if (v === code) return k as keyof T
  return 'UNKNOWN' as keyof T
}

/** Code → name; codes Kafka does not define read as UNKNOWN, as Kafka's fromCode does. */
export const resourceTypeName = (code: number): ResourceTypeName => nameOf(ResourceType, code)
export const patternTypeName = (code: number): PatternTypeName => nameOf(PatternType, code)
export const operationName = (code: number): AclOperationCodeName => nameOf(AclOperation, code)
export const permissionTypeName = (code: number): AclPermissionTypeName => nameOf(AclPermissionType, code)

/** One ACL: "principal P is ALLOWed/DENYed operation O from host H on resources matching the pattern". */
export interface AclBinding {
  readonly resourceType: ResourceTypeName
  readonly resourceName: string
  readonly patternType: PatternTypeName
  readonly principal: string
  readonly host: string
  readonly operation: AclOperationCodeName
  readonly permissionType: AclPermissionTypeName
}

/** A binding filter (DescribeAcls, DeleteAcls): null strings and ANY codes match everything. */
export interface AclBindingFilter {
  readonly resourceType: ResourceTypeName
  readonly resourceName: string | null
  readonly patternType: PatternTypeName
  readonly principal: string | null
  readonly host: string | null
  readonly operation: AclOperationCodeName
  readonly permissionType: AclPermissionTypeName
}

/** A stable identity for a binding (used as the store key and for de-duplication). */
export function bindingKey(b: AclBinding): string {
  return JSON.stringify([
    b.resourceType,
    b.patternType,
    b.resourceName,
    b.principal,
    b.host,
    b.operation,
    b.permissionType,
  ])
}

/**
 * Kafka's validation of a new ACL (controller and broker checks), in Kafka's order. Returns the
 * INVALID_REQUEST message, or null when the binding may be created.
 */
export function validateNewBinding(b: AclBinding): string | null {
  if (b.resourceType === 'UNKNOWN' || b.resourceType === 'ANY')
    return `Invalid resourceType ${b.resourceType}`
  if (b.patternType !== 'LITERAL' && b.patternType !== 'PREFIXED')
    return `Invalid patternType ${b.patternType}`
  if (b.operation === 'UNKNOWN' || b.operation === 'ANY') return `Invalid operation ${b.operation}`
  if (b.permissionType !== 'ALLOW' && b.permissionType !== 'DENY')
    return `Invalid permissionType ${b.permissionType}`
  if (b.resourceType === 'CLUSTER' && b.resourceName !== CLUSTER_NAME)
    return `The only valid name for the CLUSTER resource is ${CLUSTER_NAME}`
  if (b.resourceName === '') return 'Invalid empty resource name'
  if (!b.principal.includes(':')) {
    return `Could not parse principal from \`${b.principal}\` (no colon is present separating the principal type from the principal name)`
  }
  if (b.host === '') return 'Host pattern cannot be null or empty'
  if (b.host.includes('/')) return `Invalid host pattern '${b.host}': CIDR host patterns are not supported`
  return null
}

/** Kafka's check on a filter (DescribeAclsRequest / DeleteAclsRequest): no UNKNOWN element. */
export function filterHasUnknown(f: AclBindingFilter): boolean {
  return (
    f.resourceType === 'UNKNOWN' ||
    f.patternType === 'UNKNOWN' ||
    f.operation === 'UNKNOWN' ||
    f.permissionType === 'UNKNOWN'
  )
}

/** Kafka's ResourcePatternFilter.matches. */
export function patternMatchesFilter(b: AclBinding, f: AclBindingFilter): boolean {
  if (f.resourceType !== 'ANY' && f.resourceType !== b.resourceType) return false
  if (f.patternType !== 'ANY' && f.patternType !== 'MATCH' && f.patternType !== b.patternType) return false
  if (f.resourceName === null) return true
  if (f.patternType === 'ANY' || f.patternType === b.patternType) return f.resourceName === b.resourceName
  // MATCH: every pattern that would apply to a resource of this name.
  if (b.patternType === 'LITERAL')
    return f.resourceName === b.resourceName || b.resourceName === WILDCARD_RESOURCE
  if (b.patternType === 'PREFIXED') return f.resourceName.startsWith(b.resourceName)
  return false
}

/** Kafka's AclBindingFilter.matches: the pattern part and the entry part. */
export function bindingMatchesFilter(b: AclBinding, f: AclBindingFilter): boolean {
  if (!patternMatchesFilter(b, f)) return false
  if (f.principal !== null && f.principal !== b.principal) return false
  if (f.host !== null && f.host !== b.host) return false
  if (f.operation !== 'ANY' && f.operation !== b.operation) return false
  if (f.permissionType !== 'ANY' && f.permissionType !== b.permissionType) return false
  return true
}

/** True when the binding's pattern applies to the named resource (LITERAL, wildcard, PREFIXED). */
export function patternApplies(b: AclBinding, resourceType: ResourceTypeName, name: string): boolean {
  if (b.resourceType !== resourceType) return false
  if (b.patternType === 'LITERAL') return b.resourceName === name || b.resourceName === WILDCARD_RESOURCE
  if (b.patternType === 'PREFIXED') return name.startsWith(b.resourceName)
  return false
}

/**
 * Splits `Type:name` (Kafka's KafkaPrincipal string form). Returns null without a colon.
 */
export function parsePrincipal(text: string): { readonly type: string; readonly name: string } | null {
  const i = text.indexOf(':')
  if (i < 0) return null
  return { type: text.slice(0, i), name: text.slice(i + 1) }
}
