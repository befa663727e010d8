import { LocalError } from '../../errors.js'
import type { CoordinatorRecord, RecordStore } from '../../coordinator/storage/types.js'
import {
  type AclBinding,
  AclOperation,
  AclPermissionType,
  bindingKey,
  operationName,
  PatternType,
  patternTypeName,
  permissionTypeName,
  ResourceType,
  resourceTypeName,
} from './acl.js'

/**
 * ACLs are kept in their own log of the coordinator record store, beside the topic catalog
 * (2147483647) and the group shards (0 … offsets.topic.num.partitions-1).
 *
 * One record per ACL. Key: int16 record type 0x7f02, then int8 resource type, int8 pattern type,
 * resource name, principal, host (each int16 length + UTF-8), int8 operation, int8 permission type
 * (Kafka's codes). Value: int16 version 0 and nothing else. Deleting an ACL appends a tombstone
 * (null value) with the same key. Loading is replaying the log in order.
 */
export const ACL_LOG_ID = 2147483646
export const ACL_RECORD_TYPE = 0x7f02
const VALUE_V0 = Uint8Array.of(0, 0)

export function encodeAclKey(b: AclBinding): Uint8Array {
  const strings = [b.resourceName, b.principal, b.host].map((s) => Buffer.from(s, 'utf8'))
  for (const s of strings)
    if (s.length > 0x7fff) throw new LocalError('ACL_RECORD_INVALID', 'ACL field longer than 32767 bytes')
  const out = Buffer.alloc(2 + 2 + strings.reduce((n, s) => n + 2 + s.length, 0) + 2)
  let o = out.writeInt16BE(ACL_RECORD_TYPE, 0)
  o = out.writeInt8(ResourceType[b.resourceType], o)
  o = out.writeInt8(PatternType[b.patternType], o)
  for (const s of strings) {
    o = out.writeInt16BE(s.length, o)
    o += s.copy(out, o)
  }
  o = out.writeInt8(AclOperation[b.operation], o)
  out.writeInt8(AclPermissionType[b.permissionType], o)
  return out
}

export function decodeAclKey(key: Uint8Array): AclBinding {
  const buf = Buffer.from(key.buffer, key.byteOffset, key.byteLength)
  let o = 0
  const need = (n: number) => {
    if (o + n > buf.length)
      throw new LocalError('ACL_RECORD_INVALID', `ACL record key truncated at byte ${o}`)
  }
  need(4)
  const type = buf.readInt16BE(0)
  if (type !== ACL_RECORD_TYPE)
    throw new LocalError('ACL_RECORD_INVALID', `unexpected record type ${type} in the ACL log`)
  const resourceType = resourceTypeName(buf.readInt8(2))
  const patternType = patternTypeName(buf.readInt8(3))
  o = 4
  const str = () => {
    need(2)
    const n = buf.readInt16BE(o)
    o += 2
    need(n)
    const s = buf.toString('utf8', o, o + n)
    o += n
    return s
  }
  const resourceName = str()
  const principal = str()
  const host = str()
  need(2)
  const operation = operationName(buf.readInt8(o))
  const permissionType = permissionTypeName(buf.readInt8(o + 1))
  return { resourceType, patternType, resourceName, principal, host, operation, permissionType }
}

/** Replays the ACL log into the live set. */
export async function loadAcls(store: RecordStore): Promise<Map<string, AclBinding>> {
  const acls = new Map<string, AclBinding>()
  for (const r of await store.load(ACL_LOG_ID)) {
    const b = decodeAclKey(r.key)
    if (r.value === null) acls.delete(bindingKey(b))
    else acls.set(bindingKey(b), b)
  }
  return acls
}

export function aclRecord(b: AclBinding, live: boolean): CoordinatorRecord {
  return { key: encodeAclKey(b), value: live ? VALUE_V0 : null }
}
