/**
 * Golden bytes for the group, metadata and admin APIs, written out by hand from schemas/messages
 * (field order, versions, nullable and flexible versions), not produced by our encoder. Every case
 * checks both directions: decode(bytes) equals the object, and encode(object) equals the bytes.
 *
 * Notation: `#` starts a comment to the end of the line; spaces and `|` are ignored. Flexible
 * versions: compact string = uvarint(len + 1) then bytes, compact array = uvarint(count + 1), and
 * `00` = empty tagged-field section.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as p from '../../src/protocol/index.js'

function hex(s: string): Buffer {
  const clean = s
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join('')
    .replace(/[\s|]/g, '')
  return Buffer.from(clean, 'hex')
}

/** decode(golden) deep-equals `obj`, and encode(obj) is byte-identical to golden. */
function golden<T>(
  encode: (m: T, v: number) => Uint8Array,
  decode: (b: Uint8Array, v: number) => T,
  version: number,
  obj: T,
  bytes: string,
): void {
  const g = hex(bytes)
  assert.deepStrictEqual(decode(g, version), obj, `decode at v${version}`)
  assert.equal(Buffer.from(encode(obj, version)).toString('hex'), g.toString('hex'), `encode at v${version}`)
}

// uuid 000102…0f, in the codec's base64url form
const UUID = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex').toString('base64url')
const UUID_HEX = '000102030405060708090a0b0c0d0e0f'
const consumer = '0008 636f6e73756d6572' // "consumer", int16 length
const cConsumer = '09 636f6e73756d6572' // "consumer", compact
const range = '0005 72616e6765' // "range"
const cRange = '06 72616e6765'
const u8 = (...b: number[]) => Uint8Array.from(b)

describe('golden: Metadata', () => {
  const broker = p.createMetadataResponseMetadataResponseBroker({ nodeId: 1, host: 'h', port: 9092 })
  const partition = (leaderEpoch: number) =>
    p.createMetadataResponseMetadataResponsePartition({
      partitionIndex: 0,
      leaderId: 1,
      leaderEpoch,
      replicaNodes: [1],
      isrNodes: [1],
    })

  it('v0 request and response', () => {
    golden(
      p.encodeMetadataRequest,
      p.decodeMetadataRequest,
      0,
      p.createMetadataRequest({ topics: [p.createMetadataRequestMetadataRequestTopic({ name: 't' })] }),
      `00000001 # Topics: 1
       0001 74  # Name "t"`,
    )
    golden(
      p.encodeMetadataResponse,
      p.decodeMetadataResponse,
      0,
      p.createMetadataResponse({
        brokers: [broker],
        topics: [p.createMetadataResponseMetadataResponseTopic({ name: 't', partitions: [partition(-1)] })],
      }),
      `00000001                 # Brokers: 1
         00000001 0001 68 00002384 # NodeId 1, Host "h", Port 9092
       00000001                 # Topics: 1
         0000 0001 74           # ErrorCode 0, Name "t"
         00000001               # Partitions: 1
           0000 00000000 00000001 # ErrorCode, PartitionIndex 0, LeaderId 1
           00000001 00000001    # ReplicaNodes [1]
           00000001 00000001    # IsrNodes [1]`,
    )
  })

  it('v9 (first flexible) request and response', () => {
    golden(
      p.encodeMetadataRequest,
      p.decodeMetadataRequest,
      9,
      p.createMetadataRequest({ topics: [p.createMetadataRequestMetadataRequestTopic({ name: 't' })] }),
      `02 0274 00 # Topics: [Name "t", no tags]
       01         # AllowAutoTopicCreation true
       00 00      # IncludeClusterAuthorizedOperations, IncludeTopicAuthorizedOperations
       00         # tags`,
    )
    golden(
      p.encodeMetadataResponse,
      p.decodeMetadataResponse,
      9,
      p.createMetadataResponse({
        brokers: [broker],
        clusterId: 'c',
        controllerId: 1,
        topics: [p.createMetadataResponseMetadataResponseTopic({ name: 't', partitions: [partition(5)] })],
      }),
      `00000000                         # ThrottleTimeMs
       02 00000001 0268 00002384 00 00  # Brokers: [1, "h", 9092, Rack null, tags]
       0263                             # ClusterId "c"
       00000001                         # ControllerId 1
       02                               # Topics: 1
         0000 0274 00                   # ErrorCode, Name "t", IsInternal false
         02                             # Partitions: 1
           0000 00000000 00000001 00000005 # ErrorCode, PartitionIndex, LeaderId 1, LeaderEpoch 5
           02 00000001 02 00000001 01   # ReplicaNodes [1], IsrNodes [1], OfflineReplicas []
           00                           # partition tags
         80000000 00                    # TopicAuthorizedOperations (unset), topic tags
       80000000                         # ClusterAuthorizedOperations (unset; v8-10 only)
       00                               # tags`,
    )
  })

  it('v12 request by topic id (null name) and response carrying the topic id', () => {
    golden(
      p.encodeMetadataRequest,
      p.decodeMetadataRequest,
      12,
      p.createMetadataRequest({
        topics: [p.createMetadataRequestMetadataRequestTopic({ topicId: UUID, name: null })],
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: true,
      }),
      `02 ${UUID_HEX} 00 00 # Topics: [TopicId, Name null, tags]
       00 01               # AllowAutoTopicCreation false, IncludeTopicAuthorizedOperations true
       00`,
    )
    golden(
      p.encodeMetadataResponse,
      p.decodeMetadataResponse,
      12,
      p.createMetadataResponse({
        brokers: [{ ...broker, rack: 'r' }],
        controllerId: 1,
        topics: [
          p.createMetadataResponseMetadataResponseTopic({
            name: 't',
            topicId: UUID,
            partitions: [partition(5)],
          }),
        ],
      }),
      `00000000
       02 00000001 0268 00002384 0272 00 # Brokers: [1, "h", 9092, Rack "r", tags]
       00                                # ClusterId null
       00000001                          # ControllerId
       02 0000 0274 ${UUID_HEX} 00       # Topics: [ErrorCode, Name "t", TopicId, IsInternal]
         02 0000 00000000 00000001 00000005 02 00000001 02 00000001 01 00
         80000000 00
       00                                # no ClusterAuthorizedOperations after v10`,
    )
  })

  it('v13: all topics (null array) and the top-level ErrorCode', () => {
    golden(
      p.encodeMetadataRequest,
      p.decodeMetadataRequest,
      13,
      p.createMetadataRequest({ topics: null }),
      '00 01 00 00 # Topics null, AllowAutoTopicCreation true, IncludeTopicAuthorizedOperations false, tags',
    )
    golden(
      p.encodeMetadataResponse,
      p.decodeMetadataResponse,
      13,
      p.createMetadataResponse({ errorCode: p.ErrorCode.REBOOTSTRAP_REQUIRED }),
      `00000000 01 00 ffffffff 01 # ThrottleTimeMs, Brokers [], ClusterId null, ControllerId -1, Topics []
       0081                       # ErrorCode 129 REBOOTSTRAP_REQUIRED
       00`,
    )
  })
})

describe('golden: JoinGroup', () => {
  it('v0', () => {
    golden(
      p.encodeJoinGroupRequest,
      p.decodeJoinGroupRequest,
      0,
      p.createJoinGroupRequest({
        groupId: 'g',
        sessionTimeoutMs: 30000,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: u8(1, 2) }],
      }),
      `0001 67 00007530 # GroupId "g", SessionTimeoutMs 30000 (no RebalanceTimeoutMs before v1)
       0000             # MemberId ""
       ${consumer}      # ProtocolType
       00000001 ${range} 00000002 0102 # Protocols: [Name, Metadata]`,
    )
    golden(
      p.encodeJoinGroupResponse,
      p.decodeJoinGroupResponse,
      0,
      p.createJoinGroupResponse({
        generationId: 1,
        protocolName: 'range',
        leader: 'm',
        memberId: 'm',
        members: [{ memberId: 'm', groupInstanceId: null, metadata: u8(1) }],
      }),
      `0000 00000001 ${range} # ErrorCode, GenerationId 1, ProtocolName
       00016d 00016d          # Leader "m", MemberId "m"
       00000001 00016d 00000001 01 # Members: [MemberId, Metadata]`,
    )
  })

  it('v5: RebalanceTimeoutMs and GroupInstanceId', () => {
    golden(
      p.encodeJoinGroupRequest,
      p.decodeJoinGroupRequest,
      5,
      p.createJoinGroupRequest({
        groupId: 'g',
        sessionTimeoutMs: 30000,
        rebalanceTimeoutMs: 60000,
        memberId: 'm',
        groupInstanceId: 'i',
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: u8() }],
      }),
      `000167 00007530 0000ea60 # GroupId, SessionTimeoutMs, RebalanceTimeoutMs 60000
       00016d 000169            # MemberId "m", GroupInstanceId "i"
       ${consumer} 00000001 ${range} 00000000`,
    )
    golden(
      p.encodeJoinGroupResponse,
      p.decodeJoinGroupResponse,
      5,
      p.createJoinGroupResponse({
        generationId: 1,
        protocolName: 'range',
        leader: 'm',
        memberId: 'm',
        members: [{ memberId: 'm', groupInstanceId: 'i', metadata: u8() }],
      }),
      `00000000 0000 00000001 ${range} 00016d 00016d # ThrottleTimeMs, ErrorCode, GenerationId, …
       00000001 00016d 000169 00000000 # Members: [MemberId, GroupInstanceId "i", Metadata empty]`,
    )
  })

  it('v6 (first flexible)', () => {
    golden(
      p.encodeJoinGroupRequest,
      p.decodeJoinGroupRequest,
      6,
      p.createJoinGroupRequest({
        groupId: 'g',
        sessionTimeoutMs: 30000,
        rebalanceTimeoutMs: 60000,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: u8(1, 2) }],
      }),
      `0267 00007530 0000ea60 # GroupId, SessionTimeoutMs, RebalanceTimeoutMs
       01 00                  # MemberId "", GroupInstanceId null
       ${cConsumer}
       02 ${cRange} 03 0102 00 # Protocols: [Name, Metadata (compact bytes), tags]
       00`,
    )
    golden(
      p.encodeJoinGroupResponse,
      p.decodeJoinGroupResponse,
      6,
      p.createJoinGroupResponse({
        generationId: 1,
        protocolName: 'range',
        leader: 'm',
        memberId: 'm',
        members: [{ memberId: 'm', groupInstanceId: null, metadata: u8() }],
      }),
      `00000000 0000 00000001 ${cRange} 026d 026d
       02 026d 00 01 00 # Members: [MemberId, GroupInstanceId null, Metadata empty, tags]
       00`,
    )
  })

  it('v9: Reason, ProtocolType and SkipAssignment', () => {
    golden(
      p.encodeJoinGroupRequest,
      p.decodeJoinGroupRequest,
      9,
      p.createJoinGroupRequest({
        groupId: 'g',
        sessionTimeoutMs: 30000,
        rebalanceTimeoutMs: 60000,
        memberId: 'm',
        protocolType: 'consumer',
        protocols: [],
        reason: 'r',
      }),
      `0267 00007530 0000ea60 026d 00 ${cConsumer}
       01     # Protocols []
       0272   # Reason "r"
       00`,
    )
    golden(
      p.encodeJoinGroupResponse,
      p.decodeJoinGroupResponse,
      9,
      p.createJoinGroupResponse({
        generationId: 1,
        protocolType: 'consumer',
        protocolName: 'range',
        leader: 'm',
        skipAssignment: true,
        memberId: 'm',
      }),
      `00000000 0000 00000001     # ThrottleTimeMs, ErrorCode, GenerationId
       ${cConsumer} ${cRange}     # ProtocolType, ProtocolName
       026d 01 026d               # Leader, SkipAssignment true, MemberId
       01 00                      # Members [], tags`,
    )
  })
})

describe('golden: SyncGroup', () => {
  it('v0', () => {
    golden(
      p.encodeSyncGroupRequest,
      p.decodeSyncGroupRequest,
      0,
      p.createSyncGroupRequest({
        groupId: 'g',
        generationId: 1,
        memberId: 'm',
        assignments: [{ memberId: 'm', assignment: u8(1) }],
      }),
      '000167 00000001 00016d | 00000001 00016d 00000001 01 # Assignments: [MemberId, Assignment]',
    )
    golden(
      p.encodeSyncGroupResponse,
      p.decodeSyncGroupResponse,
      0,
      p.createSyncGroupResponse({ errorCode: 0, assignment: u8(1) }),
      '0000 00000001 01 # ErrorCode, Assignment',
    )
  })

  it('v5 (flexible, ProtocolType and ProtocolName)', () => {
    golden(
      p.encodeSyncGroupRequest,
      p.decodeSyncGroupRequest,
      5,
      p.createSyncGroupRequest({
        groupId: 'g',
        generationId: 1,
        memberId: 'm',
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId: 'm', assignment: u8(1) }],
      }),
      `0267 00000001 026d 00      # GroupId, GenerationId, MemberId, GroupInstanceId null
       ${cConsumer} ${cRange}
       02 026d 02 01 00 | 00      # Assignments: [MemberId, Assignment, tags], tags`,
    )
    golden(
      p.encodeSyncGroupResponse,
      p.decodeSyncGroupResponse,
      5,
      p.createSyncGroupResponse({ protocolType: 'consumer', protocolName: 'range', assignment: u8(1) }),
      `00000000 0000 ${cConsumer} ${cRange} 02 01 00`,
    )
  })
})

describe('golden: LeaveGroup', () => {
  it('v0: one MemberId', () => {
    golden(
      p.encodeLeaveGroupRequest,
      p.decodeLeaveGroupRequest,
      0,
      p.createLeaveGroupRequest({ groupId: 'g', memberId: 'm' }),
      '000167 00016d',
    )
    golden(
      p.encodeLeaveGroupResponse,
      p.decodeLeaveGroupResponse,
      0,
      p.createLeaveGroupResponse({ errorCode: 25 }),
      '0019 # UNKNOWN_MEMBER_ID',
    )
  })

  it('v3: a batch of members', () => {
    golden(
      p.encodeLeaveGroupRequest,
      p.decodeLeaveGroupRequest,
      3,
      p.createLeaveGroupRequest({
        groupId: 'g',
        members: [
          { memberId: 'm', groupInstanceId: 'i', reason: null },
          { memberId: '', groupInstanceId: null, reason: null },
        ],
      }),
      `000167 00000002            # GroupId, Members: 2
         00016d 000169            # MemberId "m", GroupInstanceId "i"
         0000 ffff                # MemberId "", GroupInstanceId null`,
    )
    golden(
      p.encodeLeaveGroupResponse,
      p.decodeLeaveGroupResponse,
      3,
      p.createLeaveGroupResponse({ members: [{ memberId: 'm', groupInstanceId: 'i', errorCode: 25 }] }),
      '00000000 0000 | 00000001 00016d 000169 0019',
    )
  })

  it('v5: flexible, with Reason', () => {
    golden(
      p.encodeLeaveGroupRequest,
      p.decodeLeaveGroupRequest,
      5,
      p.createLeaveGroupRequest({
        groupId: 'g',
        members: [{ memberId: 'm', groupInstanceId: 'i', reason: 'r' }],
      }),
      '0267 | 02 026d 0269 0272 00 | 00 # Members: [MemberId, GroupInstanceId, Reason, tags]',
    )
    golden(
      p.encodeLeaveGroupResponse,
      p.decodeLeaveGroupResponse,
      5,
      p.createLeaveGroupResponse({ members: [{ memberId: 'm', groupInstanceId: null, errorCode: 0 }] }),
      '00000000 0000 | 02 026d 00 0000 00 | 00',
    )
  })
})

describe('golden: OffsetCommit', () => {
  const part = (committedLeaderEpoch: number, committedMetadata: string | null) =>
    p.createOffsetCommitRequestOffsetCommitRequestPartition({
      partitionIndex: 0,
      committedOffset: 10n,
      committedLeaderEpoch,
      committedMetadata,
    })

  it('v2: RetentionTimeMs, null metadata', () => {
    golden(
      p.encodeOffsetCommitRequest,
      p.decodeOffsetCommitRequest,
      2,
      p.createOffsetCommitRequest({
        groupId: 'g',
        generationIdOrMemberEpoch: 1,
        memberId: 'm',
        topics: [
          {
            name: 't',
            topicId: p.createOffsetCommitRequestOffsetCommitRequestTopic().topicId,
            partitions: [part(-1, null)],
          },
        ],
      }),
      `000167 00000001 00016d     # GroupId, GenerationIdOrMemberEpoch, MemberId
       ffffffffffffffff           # RetentionTimeMs -1 (v2-4)
       00000001 000174            # Topics: [Name "t"
         00000001 00000000 000000000000000a ffff # Partitions: [0, offset 10, metadata null]]`,
    )
    golden(
      p.encodeOffsetCommitResponse,
      p.decodeOffsetCommitResponse,
      2,
      p.createOffsetCommitResponse({
        topics: [
          p.createOffsetCommitResponseOffsetCommitResponseTopic({
            name: 't',
            partitions: [{ partitionIndex: 0, errorCode: 0 }],
          }),
        ],
      }),
      '00000001 000174 00000001 00000000 0000',
    )
  })

  it('v8 (first flexible) and v9 (member epoch, same layout)', () => {
    const rq = (epoch: number, instance: string | null) =>
      p.createOffsetCommitRequest({
        groupId: 'g',
        generationIdOrMemberEpoch: epoch,
        memberId: 'm',
        groupInstanceId: instance,
        retentionTimeMs: -1n,
        topics: [
          p.createOffsetCommitRequestOffsetCommitRequestTopic({ name: 't', partitions: [part(3, '')] }),
        ],
      })
    const body = `02 0274 | 02 00000000 000000000000000a 00000003 01 00 | 00 | 00`
    golden(
      p.encodeOffsetCommitRequest,
      p.decodeOffsetCommitRequest,
      8,
      rq(1, null),
      `0267 00000001 026d 00 ${body}`,
    )
    golden(
      p.encodeOffsetCommitRequest,
      p.decodeOffsetCommitRequest,
      9,
      rq(5, 'i'),
      `0267 00000005 026d 0269 ${body}`,
    )
    const rs = p.createOffsetCommitResponse({
      topics: [
        p.createOffsetCommitResponseOffsetCommitResponseTopic({
          name: 't',
          partitions: [{ partitionIndex: 0, errorCode: 0 }],
        }),
      ],
    })
    for (const v of [8, 9])
      golden(
        p.encodeOffsetCommitResponse,
        p.decodeOffsetCommitResponse,
        v,
        rs,
        '00000000 02 0274 02 00000000 0000 00 00 00',
      )
  })

  it('v10: topics by id, no names', () => {
    golden(
      p.encodeOffsetCommitRequest,
      p.decodeOffsetCommitRequest,
      10,
      p.createOffsetCommitRequest({
        groupId: 'g',
        generationIdOrMemberEpoch: 5,
        memberId: 'm',
        topics: [
          p.createOffsetCommitRequestOffsetCommitRequestTopic({ topicId: UUID, partitions: [part(3, '')] }),
        ],
      }),
      `0267 00000005 026d 00
       02 ${UUID_HEX}           # Topics: [TopicId
         02 00000000 000000000000000a 00000003 01 00 # Partitions]
         00
       00`,
    )
    golden(
      p.encodeOffsetCommitResponse,
      p.decodeOffsetCommitResponse,
      10,
      p.createOffsetCommitResponse({
        topics: [
          p.createOffsetCommitResponseOffsetCommitResponseTopic({
            topicId: UUID,
            partitions: [{ partitionIndex: 0, errorCode: 0 }],
          }),
        ],
      }),
      `00000000 02 ${UUID_HEX} 02 00000000 0000 00 00 00`,
    )
  })
})
