/**
 * The peers' codec entry points, called as their clients call them, on the content of messages.ts.
 *
 * - @platformatic/kafka 1.x: `<api>V<n>.createRequest(...)` returns a Writer; its client sends
 *   `writer.buffer` (one contiguous Buffer), so encode = createRequest + `.buffer`. Decode =
 *   `parseResponse(correlationId, apiKey, version, new Reader(...))` over the response body.
 * - KafkaJS 2.x: `requests/<api>/v<n>/request.js` gives `{ encode: async () => Encoder }`, the
 *   client sends `encoder.buffer`; `response.js` gives `decode: async (Buffer) => object`. Both are
 *   async functions, so every KafkaJS call also pays one promise. KafkaJS stops at older versions
 *   (Metadata v6, JoinGroup v5, OffsetCommit v5, DeleteGroups v1): it runs on the same content at its
 *   highest version, so its byte counts differ slightly (no tagged fields, no topic ids).
 *
 * Both peers only encode requests and decode responses (they are clients), so only those
 * operations have a peer.
 */
import { createRequire } from 'node:module'
import { deleteGroupsV2, joinGroupV9, metadataV12, offsetCommitV9, Reader } from '@platformatic/kafka'
import * as p from '../../src/protocol/index.js'
import * as m from './messages.js'

const require = createRequire(import.meta.url)

interface KjsEncoder {
  readonly buffer: Buffer
}
type KjsRequest<A> = (args: A) => { encode(): Promise<KjsEncoder> }
interface KjsResponse {
  decode(raw: Buffer): Promise<unknown>
}
const kjs = <T>(path: string): T => require(`kafkajs/src/protocol/requests/${path}`) as T

export type Op = () => unknown

export interface PeerOps {
  readonly platformatic?: Op
  readonly kafkajs?: Op
}

const buf = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength)
const platformaticDecode =
  (
    api: { parseResponse: (c: number, k: number, v: number, r: Reader) => unknown },
    key: number,
    v: number,
    bytes: Uint8Array,
  ): Op =>
  () =>
    api.parseResponse(0, key, v, Reader.from(buf(bytes)))

// ---- Metadata response (decode only: clients never encode it) --------------------------------

const kjsMetadataV6 = kjs<KjsResponse>('metadata/v6/response.js')
const metadataV6Bytes = buf(p.encodeMetadataResponse(m.metadataResponse, 6))

export const metadataResponseDecode: PeerOps = {
  platformatic: platformaticDecode(metadataV12, 3, 12, p.encodeMetadataResponse(m.metadataResponse, 12)),
  kafkajs: () => kjsMetadataV6.decode(metadataV6Bytes),
}

// ---- JoinGroup ----------------------------------------------------------------------------------

const jg = m.joinGroupRequest
const jgProtocols = jg.protocols.map((x) => ({ name: x.name, metadata: buf(x.metadata) }))
const kjsJoinGroupV5 =
  kjs<
    KjsRequest<{
      groupId: string
      sessionTimeout: number
      rebalanceTimeout: number
      memberId: string
      groupInstanceId: string | null
      protocolType: string
      groupProtocols: { name: string; metadata: Buffer }[]
    }>
  >('joinGroup/v5/request.js')
const kjsJoinGroupV5Response = kjs<KjsResponse>('joinGroup/v5/response.js')

export const joinGroupRequestEncode: PeerOps = {
  platformatic: () =>
    joinGroupV9.createRequest(
      jg.groupId,
      jg.sessionTimeoutMs,
      jg.rebalanceTimeoutMs,
      jg.memberId,
      jg.groupInstanceId as string,
      jg.protocolType,
      jgProtocols,
      jg.reason as string,
    ).buffer,
  kafkajs: async () =>
    (
      await kjsJoinGroupV5({
        groupId: jg.groupId,
        sessionTimeout: jg.sessionTimeoutMs,
        rebalanceTimeout: jg.rebalanceTimeoutMs,
        memberId: jg.memberId,
        groupInstanceId: jg.groupInstanceId,
        protocolType: jg.protocolType,
        groupProtocols: jgProtocols,
      }).encode()
    ).buffer,
}

const joinGroupV5Bytes = buf(p.encodeJoinGroupResponse(m.joinGroupResponse, 5))
export const joinGroupResponseDecode: PeerOps = {
  platformatic: platformaticDecode(joinGroupV9, 11, 9, p.encodeJoinGroupResponse(m.joinGroupResponse, 9)),
  kafkajs: () => kjsJoinGroupV5Response.decode(joinGroupV5Bytes),
}

// ---- OffsetCommit request -----------------------------------------------------------------------

const oc = m.offsetCommitRequest
const kjsOffsetCommitV5 = kjs<
  KjsRequest<{
    groupId: string
    groupGenerationId: number
    memberId: string
    topics: { topic: string; partitions: { partition: number; offset: string; metadata: string | null }[] }[]
  }>
>('offsetCommit/v5/request.js')

export const offsetCommitRequestEncode: PeerOps = {
  platformatic: () =>
    offsetCommitV9.createRequest(
      oc.groupId,
      oc.generationIdOrMemberEpoch,
      oc.memberId,
      oc.groupInstanceId as string,
      oc.topics,
    ).buffer,
  // KafkaJS carries offsets as decimal strings
  kafkajs: async () =>
    (
      await kjsOffsetCommitV5({
        groupId: oc.groupId,
        groupGenerationId: oc.generationIdOrMemberEpoch,
        memberId: oc.memberId,
        topics: oc.topics.map((t) => ({
          topic: t.name,
          partitions: t.partitions.map((x) => ({
            partition: x.partitionIndex,
            offset: String(x.committedOffset),
            metadata: x.committedMetadata,
          })),
        })),
      }).encode()
    ).buffer,
}

// ---- DeleteGroups -------------------------------------------------------------------------------

const kjsDeleteGroupsV1 = kjs<KjsRequest<string[]>>('deleteGroups/v1/request.js')
const kjsDeleteGroupsV1Response = kjs<KjsResponse>('deleteGroups/v1/response.js')
const deleteGroupsV1Bytes = buf(p.encodeDeleteGroupsResponse(m.deleteGroupsResponse, 1))

export const deleteGroupsRequestEncode: PeerOps = {
  platformatic: () => deleteGroupsV2.createRequest(m.deleteGroupsRequest.groupsNames).buffer,
  kafkajs: async () => (await kjsDeleteGroupsV1(m.deleteGroupsRequest.groupsNames).encode()).buffer,
}
export const deleteGroupsResponseDecode: PeerOps = {
  platformatic: platformaticDecode(
    deleteGroupsV2,
    42,
    2,
    p.encodeDeleteGroupsResponse(m.deleteGroupsResponse, 2),
  ),
  kafkajs: () => kjsDeleteGroupsV1Response.decode(deleteGroupsV1Bytes),
}
