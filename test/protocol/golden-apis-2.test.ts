/**
 * Golden bytes for the offset, topic admin, ACL, cluster, group-describe, consumer-group (KIP-848),
 * SASL and ApiVersions APIs, written out by hand from schemas/messages (field order, versions,
 * nullable, tagged and flexible versions), not produced by our encoder. Every case checks both
 * directions: decode(bytes) equals the object, and encode(object) equals the bytes.
 *
 * Notation: `#` starts a comment to the end of the line; spaces and `|` are ignored. Flexible
 * versions: compact string = uvarint(len + 1) then bytes, compact array = uvarint(count + 1), and
 * `00` = empty tagged-field section. Nullable structs carry an int8 marker (ff null, 01 present).
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
const stable = '0006 537461626c65' // "Stable"
const cStable = '07 537461626c65'
const userA = '0006 557365723a61' // "User:a"
const cUserA = '07 557365723a61'
const u8 = (...b: number[]) => Uint8Array.from(b)

describe('golden: OffsetFetch', () => {
  it('v1: one group, topics with partition indexes', () => {
    golden(
      p.encodeOffsetFetchRequest,
      p.decodeOffsetFetchRequest,
      1,
      p.createOffsetFetchRequest({
        groupId: 'g',
        topics: [p.createOffsetFetchRequestOffsetFetchRequestTopic({ name: 't', partitionIndexes: [0] })],
      }),
      `000167                     # GroupId "g"
       00000001 000174            # Topics: [Name "t"
         00000001 00000000        #   PartitionIndexes [0]]`,
    )
    golden(
      p.encodeOffsetFetchResponse,
      p.decodeOffsetFetchResponse,
      1,
      p.createOffsetFetchResponse({
        topics: [
          p.createOffsetFetchResponseOffsetFetchResponseTopic({
            name: 't',
            partitions: [
              p.createOffsetFetchResponseOffsetFetchResponsePartition({
                partitionIndex: 0,
                committedOffset: 10n,
                metadata: null,
              }),
            ],
          }),
        ],
      }),
      `00000001 000174            # no ThrottleTimeMs before v3; Topics: [Name "t"
         00000001 00000000        #   Partitions: [PartitionIndex 0
         000000000000000a         #     CommittedOffset 10 (no leader epoch before v5)
         ffff 0000                #     Metadata null, ErrorCode 0]]
                                  # no top-level ErrorCode before v2`,
    )
  })

  it('v7 (flexible, RequireStable, CommittedLeaderEpoch)', () => {
    golden(
      p.encodeOffsetFetchRequest,
      p.decodeOffsetFetchRequest,
      7,
      p.createOffsetFetchRequest({
        groupId: 'g',
        topics: [p.createOffsetFetchRequestOffsetFetchRequestTopic({ name: 't', partitionIndexes: [0] })],
        requireStable: true,
      }),
      `0267                       # GroupId "g"
       02 0274 02 00000000 00     # Topics: [Name "t", PartitionIndexes [0], tags]
       01                         # RequireStable true
       00`,
    )
    golden(
      p.encodeOffsetFetchRequest,
      p.decodeOffsetFetchRequest,
      7,
      p.createOffsetFetchRequest({ groupId: 'g', topics: null }),
      '0267 00 00 00 # GroupId, Topics null (all), RequireStable false, tags',
    )
    golden(
      p.encodeOffsetFetchResponse,
      p.decodeOffsetFetchResponse,
      7,
      p.createOffsetFetchResponse({
        throttleTimeMs: 1,
        topics: [
          p.createOffsetFetchResponseOffsetFetchResponseTopic({
            name: 't',
            partitions: [
              p.createOffsetFetchResponseOffsetFetchResponsePartition({
                partitionIndex: 0,
                committedOffset: 10n,
                committedLeaderEpoch: 3,
                metadata: '',
              }),
            ],
          }),
        ],
        errorCode: 0,
      }),
      `00000001                   # ThrottleTimeMs 1
       02 0274                    # Topics: [Name "t"
         02 00000000              #   Partitions: [PartitionIndex 0
           000000000000000a       #     CommittedOffset 10
           00000003               #     CommittedLeaderEpoch 3
           01 0000 00             #     Metadata "", ErrorCode 0, tags]
         00                       #   topic tags]
       0000                       # ErrorCode 0
       00`,
    )
  })

  it('v8: several groups in one request', () => {
    golden(
      p.encodeOffsetFetchRequest,
      p.decodeOffsetFetchRequest,
      8,
      p.createOffsetFetchRequest({
        groups: [
          p.createOffsetFetchRequestOffsetFetchRequestGroup({
            groupId: 'g',
            topics: [
              p.createOffsetFetchRequestOffsetFetchRequestTopics({ name: 't', partitionIndexes: [0] }),
            ],
          }),
          p.createOffsetFetchRequestOffsetFetchRequestGroup({ groupId: 'h', topics: null }),
        ],
      }),
      `03                         # Groups: 2 (no top-level GroupId or Topics after v7)
         0267                     #   GroupId "g" (no MemberId before v9)
         02 0274 02 00000000 00   #   Topics: [Name "t", PartitionIndexes [0], tags]
         00                       #   group tags
         0268 00 00               #   GroupId "h", Topics null (all), tags
       00                         # RequireStable false
       00`,
    )
    golden(
      p.encodeOffsetFetchResponse,
      p.decodeOffsetFetchResponse,
      8,
      p.createOffsetFetchResponse({
        groups: [
          p.createOffsetFetchResponseOffsetFetchResponseGroup({
            groupId: 'g',
            topics: [
              p.createOffsetFetchResponseOffsetFetchResponseTopics({
                name: 't',
                partitions: [
                  p.createOffsetFetchResponseOffsetFetchResponsePartitions({
                    partitionIndex: 0,
                    committedOffset: 10n,
                    metadata: null,
                  }),
                ],
              }),
            ],
          }),
          p.createOffsetFetchResponseOffsetFetchResponseGroup({ groupId: 'h', errorCode: 16 }),
        ],
      }),
      `00000000                   # ThrottleTimeMs
       03                         # Groups: 2
         0267                     #   GroupId "g"
         02 0274                  #   Topics: [Name "t"
           02 00000000 000000000000000a ffffffff # Partitions: [0, offset 10, leader epoch -1
           00 0000 00             #       Metadata null, ErrorCode 0, tags]
           00                     #     topic tags]
         0000 00                  #   ErrorCode 0, group tags
         0268 01 0010 00          #   GroupId "h", Topics [], ErrorCode 16 NOT_COORDINATOR, tags
       00`,
    )
  })

  it('v10: topics by id, MemberId and MemberEpoch', () => {
    golden(
      p.encodeOffsetFetchRequest,
      p.decodeOffsetFetchRequest,
      10,
      p.createOffsetFetchRequest({
        groups: [
          p.createOffsetFetchRequestOffsetFetchRequestGroup({
            groupId: 'g',
            memberId: 'm',
            memberEpoch: 5,
            topics: [
              p.createOffsetFetchRequestOffsetFetchRequestTopics({ topicId: UUID, partitionIndexes: [0] }),
            ],
          }),
        ],
        requireStable: true,
      }),
      `02 0267                    # Groups: [GroupId "g"
         026d 00000005            #   MemberId "m", MemberEpoch 5
         02 ${UUID_HEX}           #   Topics: [TopicId (no Name after v9)
           02 00000000 00         #     PartitionIndexes [0], tags]
         00                       #   group tags]
       01 00                      # RequireStable true, tags`,
    )
    golden(
      p.encodeOffsetFetchResponse,
      p.decodeOffsetFetchResponse,
      10,
      p.createOffsetFetchResponse({
        groups: [
          p.createOffsetFetchResponseOffsetFetchResponseGroup({
            groupId: 'g',
            topics: [
              p.createOffsetFetchResponseOffsetFetchResponseTopics({
                topicId: UUID,
                partitions: [
                  p.createOffsetFetchResponseOffsetFetchResponsePartitions({
                    partitionIndex: 0,
                    committedOffset: 10n,
                    committedLeaderEpoch: 3,
                    metadata: '',
                  }),
                ],
              }),
            ],
          }),
        ],
      }),
      `00000000 02 0267           # ThrottleTimeMs, Groups: [GroupId "g"
         02 ${UUID_HEX}           #   Topics: [TopicId
           02 00000000 000000000000000a 00000003 01 0000 00 # Partitions: [0, 10, epoch 3, "", 0]
           00                     #   topic tags]
         0000 00                  #   ErrorCode, group tags]
       00`,
    )
  })
})

describe('golden: CreateTopics', () => {
  const request = p.createCreateTopicsRequest({
    topics: [
      p.createCreateTopicsRequestCreatableTopic({
        name: 't',
        numPartitions: -1,
        replicationFactor: -1,
        assignments: [
          p.createCreateTopicsRequestCreatableReplicaAssignment({ partitionIndex: 0, brokerIds: [1] }),
        ],
        configs: [
          p.createCreateTopicsRequestCreatableTopicConfig({ name: 'c', value: 'd' }),
          p.createCreateTopicsRequestCreatableTopicConfig({ name: 'e', value: null }),
        ],
      }),
    ],
    timeoutMs: 30000,
    validateOnly: true,
  })

  it('v2 request and response', () => {
    golden(
      p.encodeCreateTopicsRequest,
      p.decodeCreateTopicsRequest,
      2,
      request,
      `00000001 000174            # Topics: [Name "t"
         ffffffff ffff            #   NumPartitions -1, ReplicationFactor -1 (explicit assignments)
         00000001 00000000        #   Assignments: [PartitionIndex 0
           00000001 00000001      #     BrokerIds [1]]
         00000002                 #   Configs: 2
           000163 000164          #     Name "c", Value "d"
           000165 ffff            #     Name "e", Value null]
       00007530                   # timeoutMs 30000
       01                         # validateOnly true`,
    )
    golden(
      p.encodeCreateTopicsResponse,
      p.decodeCreateTopicsResponse,
      2,
      p.createCreateTopicsResponse({
        throttleTimeMs: 5,
        topics: [
          p.createCreateTopicsResponseCreatableTopicResult({ name: 't', errorCode: 0, errorMessage: null }),
          p.createCreateTopicsResponseCreatableTopicResult({ name: 'u', errorCode: 36, errorMessage: 'x' }),
        ],
      }),
      `00000005                   # ThrottleTimeMs 5
       00000002                   # Topics: 2
         000174 0000 ffff         #   Name "t", ErrorCode 0, ErrorMessage null
         000175 0024 000178       #   Name "u", ErrorCode 36 TOPIC_ALREADY_EXISTS, ErrorMessage "x"`,
    )
  })

  it('v5 (flexible): response with configs and the TopicConfigErrorCode tag', () => {
    golden(
      p.encodeCreateTopicsRequest,
      p.decodeCreateTopicsRequest,
      5,
      request,
      `02 0274                    # Topics: [Name "t"
         ffffffff ffff            #   NumPartitions -1, ReplicationFactor -1
         02 00000000 02 00000001 00 # Assignments: [PartitionIndex 0, BrokerIds [1], tags]
         03 0263 0264 00          #   Configs: [Name "c", Value "d", tags
            0265 00 00            #             Name "e", Value null, tags]
         00                       #   topic tags]
       00007530 01                # timeoutMs 30000, validateOnly true
       00`,
    )
    golden(
      p.encodeCreateTopicsResponse,
      p.decodeCreateTopicsResponse,
      5,
      p.createCreateTopicsResponse({
        topics: [
          p.createCreateTopicsResponseCreatableTopicResult({
            name: 't',
            errorCode: 0,
            errorMessage: null,
            topicConfigErrorCode: 29,
            numPartitions: 3,
            replicationFactor: 1,
            configs: [
              p.createCreateTopicsResponseCreatableTopicConfigs({
                name: 'c',
                value: 'd',
                readOnly: false,
                configSource: 5,
                isSensitive: false,
              }),
              p.createCreateTopicsResponseCreatableTopicConfigs({
                name: 'e',
                value: null,
                readOnly: true,
                configSource: 4,
                isSensitive: true,
              }),
            ],
          }),
          p.createCreateTopicsResponseCreatableTopicResult({
            name: 'u',
            errorCode: 36,
            errorMessage: 'x',
            configs: null,
          }),
        ],
      }),
      `00000000                   # ThrottleTimeMs
       03                         # Topics: 2
         0274 0000 00             #   Name "t", ErrorCode 0, ErrorMessage null (no TopicId before v7)
         00000003 0001            #   NumPartitions 3, ReplicationFactor 1
         03                       #   Configs: 2
           0263 0264 00 05 00 00  #     "c" = "d", ReadOnly false, ConfigSource 5 DEFAULT_CONFIG, IsSensitive false, tags
           0265 00   01 04 01 00  #     "e" = null, ReadOnly true, ConfigSource 4 STATIC_BROKER_CONFIG, IsSensitive true, tags
         01 00 02 001d            #   tags: 1, tag 0 TopicConfigErrorCode (2 bytes) = 29
         0275 0024 0278           #   Name "u", ErrorCode 36, ErrorMessage "x"
         ffffffff ffff 00 00      #   NumPartitions -1, ReplicationFactor -1, Configs null, tags
       00`,
    )
  })
})

describe('golden: DeleteTopics', () => {
  it('v1: by name', () => {
    golden(
      p.encodeDeleteTopicsRequest,
      p.decodeDeleteTopicsRequest,
      1,
      p.createDeleteTopicsRequest({ topicNames: ['t'], timeoutMs: 30000 }),
      `00000001 000174            # TopicNames ["t"]
       00007530                   # TimeoutMs 30000`,
    )
    golden(
      p.encodeDeleteTopicsResponse,
      p.decodeDeleteTopicsResponse,
      1,
      p.createDeleteTopicsResponse({
        responses: [p.createDeleteTopicsResponseDeletableTopicResult({ name: 't', errorCode: 3 })],
      }),
      `00000000                   # ThrottleTimeMs
       00000001 000174 0003       # Responses: [Name "t", ErrorCode 3 UNKNOWN_TOPIC_OR_PARTITION]`,
    )
  })

  it('v6: by topic id (null name)', () => {
    golden(
      p.encodeDeleteTopicsRequest,
      p.decodeDeleteTopicsRequest,
      6,
      p.createDeleteTopicsRequest({
        topics: [p.createDeleteTopicsRequestDeleteTopicState({ name: null, topicId: UUID })],
        timeoutMs: 30000,
      }),
      `02 00 ${UUID_HEX} 00       # Topics: [Name null, TopicId, tags] (no TopicNames after v5)
       00007530 00                # TimeoutMs 30000, tags`,
    )
    golden(
      p.encodeDeleteTopicsResponse,
      p.decodeDeleteTopicsResponse,
      6,
      p.createDeleteTopicsResponse({
        responses: [
          p.createDeleteTopicsResponseDeletableTopicResult({
            name: null,
            topicId: UUID,
            errorCode: 100,
            errorMessage: 'x',
          }),
        ],
      }),
      `00000000                   # ThrottleTimeMs
       02 00 ${UUID_HEX}          # Responses: [Name null, TopicId
         0064 0278 00             #   ErrorCode 100 UNKNOWN_TOPIC_ID, ErrorMessage "x", tags]
       00`,
    )
  })
})

describe('golden: ACLs', () => {
  // resource type 2 TOPIC, pattern 3 LITERAL, operation 3 READ, permission 3 ALLOW
  it('CreateAcls v1 and v2 (flexible)', () => {
    const rq = p.createCreateAclsRequest({
      creations: [
        p.createCreateAclsRequestAclCreation({
          resourceType: 2,
          resourceName: 't',
          resourcePatternType: 3,
          principal: 'User:a',
          host: '*',
          operation: 3,
          permissionType: 3,
        }),
      ],
    })
    golden(
      p.encodeCreateAclsRequest,
      p.decodeCreateAclsRequest,
      1,
      rq,
      `00000001                   # Creations: 1
         02 000174 03             #   ResourceType TOPIC, ResourceName "t", ResourcePatternType LITERAL
         ${userA} 00012a          #   Principal "User:a", Host "*"
         03 03                    #   Operation READ, PermissionType ALLOW`,
    )
    golden(
      p.encodeCreateAclsRequest,
      p.decodeCreateAclsRequest,
      2,
      rq,
      '02 | 02 0274 03 | 07557365723a61 022a | 03 03 00 | 00 # same creation, compact, tags',
    )
    golden(
      p.encodeCreateAclsResponse,
      p.decodeCreateAclsResponse,
      1,
      p.createCreateAclsResponse({
        results: [p.createCreateAclsResponseAclCreationResult({ errorCode: 0, errorMessage: null })],
      }),
      '00000000 | 00000001 0000 ffff # ThrottleTimeMs, Results: [ErrorCode 0, ErrorMessage null]',
    )
    golden(
      p.encodeCreateAclsResponse,
      p.decodeCreateAclsResponse,
      2,
      p.createCreateAclsResponse({
        throttleTimeMs: 2,
        results: [p.createCreateAclsResponseAclCreationResult({ errorCode: 54, errorMessage: 'x' })],
      }),
      '00000002 | 02 0036 0278 00 | 00 # Results: [ErrorCode 54 SECURITY_DISABLED, ErrorMessage "x", tags]',
    )
  })

  it('DescribeAcls v1 and v3 (flexible)', () => {
    golden(
      p.encodeDescribeAclsRequest,
      p.decodeDescribeAclsRequest,
      1,
      p.createDescribeAclsRequest({
        resourceTypeFilter: 1,
        resourceNameFilter: null,
        patternTypeFilter: 1,
        principalFilter: null,
        hostFilter: null,
        operation: 1,
        permissionType: 1,
      }),
      `01 ffff 01                 # ResourceTypeFilter ANY, ResourceNameFilter null, PatternTypeFilter ANY
       ffff ffff                  # PrincipalFilter null, HostFilter null
       01 01                      # Operation ANY, PermissionType ANY`,
    )
    golden(
      p.encodeDescribeAclsRequest,
      p.decodeDescribeAclsRequest,
      3,
      p.createDescribeAclsRequest({
        resourceTypeFilter: 2,
        resourceNameFilter: 't',
        patternTypeFilter: 4,
        principalFilter: 'User:a',
        hostFilter: null,
        operation: 2,
        permissionType: 3,
      }),
      `02 0274 04                 # TOPIC, "t", PatternTypeFilter MATCH
       ${cUserA} 00               # PrincipalFilter "User:a", HostFilter null
       02 03 00                   # Operation ALL, PermissionType ALLOW, tags`,
    )
    const rs = p.createDescribeAclsResponse({
      errorCode: 0,
      errorMessage: null,
      resources: [
        p.createDescribeAclsResponseDescribeAclsResource({
          resourceType: 2,
          resourceName: 't',
          patternType: 3,
          acls: [
            p.createDescribeAclsResponseAclDescription({
              principal: 'User:a',
              host: '*',
              operation: 3,
              permissionType: 3,
            }),
          ],
        }),
      ],
    })
    golden(
      p.encodeDescribeAclsResponse,
      p.decodeDescribeAclsResponse,
      1,
      rs,
      `00000000 0000 ffff         # ThrottleTimeMs, ErrorCode, ErrorMessage null
       00000001 02 000174 03      # Resources: [TOPIC, "t", PatternType LITERAL
         00000001 ${userA} 00012a 03 03 # Acls: [Principal, Host "*", READ, ALLOW]]`,
    )
    golden(
      p.encodeDescribeAclsResponse,
      p.decodeDescribeAclsResponse,
      3,
      rs,
      `00000000 0000 00           # ThrottleTimeMs, ErrorCode, ErrorMessage null
       02 02 0274 03              # Resources: [TOPIC, "t", LITERAL
         02 ${cUserA} 022a 03 03 00 # Acls: [Principal, Host "*", READ, ALLOW, tags]
         00                       #   resource tags]
       00`,
    )
  })

  it('DeleteAcls v1 and v2 (flexible)', () => {
    const rq = p.createDeleteAclsRequest({
      filters: [
        p.createDeleteAclsRequestDeleteAclsFilter({
          resourceTypeFilter: 2,
          resourceNameFilter: 't',
          patternTypeFilter: 3,
          principalFilter: null,
          hostFilter: null,
          operation: 1,
          permissionType: 1,
        }),
      ],
    })
    golden(
      p.encodeDeleteAclsRequest,
      p.decodeDeleteAclsRequest,
      1,
      rq,
      `00000001                   # Filters: 1
         02 000174 03             #   TOPIC, "t", LITERAL
         ffff ffff 01 01          #   PrincipalFilter null, HostFilter null, Operation ANY, PermissionType ANY`,
    )
    golden(p.encodeDeleteAclsRequest, p.decodeDeleteAclsRequest, 2, rq, '02 | 02 0274 03 00 00 01 01 00 | 00')
    const rs = p.createDeleteAclsResponse({
      filterResults: [
        p.createDeleteAclsResponseDeleteAclsFilterResult({
          errorCode: 0,
          errorMessage: null,
          matchingAcls: [
            p.createDeleteAclsResponseDeleteAclsMatchingAcl({
              errorCode: 0,
              errorMessage: null,
              resourceType: 2,
              resourceName: 't',
              patternType: 3,
              principal: 'User:a',
              host: '*',
              operation: 3,
              permissionType: 3,
            }),
          ],
        }),
      ],
    })
    golden(
      p.encodeDeleteAclsResponse,
      p.decodeDeleteAclsResponse,
      1,
      rs,
      `00000000                   # ThrottleTimeMs
       00000001 0000 ffff         # FilterResults: [ErrorCode 0, ErrorMessage null
         00000001 0000 ffff       #   MatchingAcls: [ErrorCode 0, ErrorMessage null
           02 000174 03           #     TOPIC, "t", LITERAL
           ${userA} 00012a 03 03  #     Principal, Host "*", READ, ALLOW]]`,
    )
    golden(
      p.encodeDeleteAclsResponse,
      p.decodeDeleteAclsResponse,
      2,
      rs,
      `00000000
       02 0000 00                 # FilterResults: [ErrorCode, ErrorMessage null
         02 0000 00 02 0274 03 ${cUserA} 022a 03 03 00 # MatchingAcls: [..., tags]
         00                       #   filter result tags]
       00`,
    )
  })
})

describe('golden: DescribeCluster', () => {
  it('v0 (flexible from the start)', () => {
    golden(
      p.encodeDescribeClusterRequest,
      p.decodeDescribeClusterRequest,
      0,
      p.createDescribeClusterRequest({ includeClusterAuthorizedOperations: true }),
      '01 00 # IncludeClusterAuthorizedOperations true, tags (no EndpointType before v1)',
    )
    golden(
      p.encodeDescribeClusterResponse,
      p.decodeDescribeClusterResponse,
      0,
      p.createDescribeClusterResponse({
        clusterId: 'c',
        controllerId: 1,
        brokers: [
          p.createDescribeClusterResponseDescribeClusterBroker({ brokerId: 1, host: 'h', port: 9092 }),
        ],
        clusterAuthorizedOperations: 0x0df8,
      }),
      `00000000 0000 00           # ThrottleTimeMs, ErrorCode, ErrorMessage null
       0263 00000001              # ClusterId "c", ControllerId 1
       02 00000001 0268 00002384 00 00 # Brokers: [BrokerId 1, Host "h", Port 9092, Rack null, tags]
       00000df8                   # ClusterAuthorizedOperations
       00`,
    )
  })

  it('v1: EndpointType', () => {
    golden(
      p.encodeDescribeClusterRequest,
      p.decodeDescribeClusterRequest,
      1,
      p.createDescribeClusterRequest({ includeClusterAuthorizedOperations: false, endpointType: 2 }),
      '00 02 00 # IncludeClusterAuthorizedOperations false, EndpointType 2 (controller), tags',
    )
    golden(
      p.encodeDescribeClusterResponse,
      p.decodeDescribeClusterResponse,
      1,
      p.createDescribeClusterResponse({
        endpointType: 2,
        clusterId: 'c',
        controllerId: 1,
        brokers: [
          p.createDescribeClusterResponseDescribeClusterBroker({
            brokerId: 1,
            host: 'h',
            port: 9093,
            rack: 'r',
          }),
        ],
      }),
      `00000000 0000 00           # ThrottleTimeMs, ErrorCode, ErrorMessage null
       02                         # EndpointType 2
       0263 00000001              # ClusterId "c", ControllerId 1
       02 00000001 0268 00002385 0272 00 # Brokers: [1, "h", 9093, Rack "r", tags] (no IsFenced before v2)
       80000000                   # ClusterAuthorizedOperations (unset)
       00`,
    )
  })
})

describe('golden: DescribeGroups', () => {
  it('v0', () => {
    golden(
      p.encodeDescribeGroupsRequest,
      p.decodeDescribeGroupsRequest,
      0,
      p.createDescribeGroupsRequest({ groups: ['g'] }),
      '00000001 000167 # Groups ["g"]',
    )
    golden(
      p.encodeDescribeGroupsResponse,
      p.decodeDescribeGroupsResponse,
      0,
      p.createDescribeGroupsResponse({
        groups: [
          p.createDescribeGroupsResponseDescribedGroup({
            groupId: 'g',
            groupState: 'Stable',
            protocolType: 'consumer',
            protocolData: 'range',
            members: [
              p.createDescribeGroupsResponseDescribedGroupMember({
                memberId: 'm',
                clientId: 'c',
                clientHost: 'h',
                memberMetadata: u8(1),
                memberAssignment: u8(2, 3),
              }),
            ],
          }),
        ],
      }),
      `00000001                   # no ThrottleTimeMs before v1; Groups: 1
         0000 000167 ${stable}    #   ErrorCode, GroupId "g", GroupState "Stable"
         ${consumer} ${range}     #   ProtocolType, ProtocolData
         00000001                 #   Members: 1
           00016d 000163 000168   #     MemberId "m", ClientId "c", ClientHost "h"
           00000001 01            #     MemberMetadata
           00000002 0203          #     MemberAssignment`,
    )
  })

  it('v5 (flexible, GroupInstanceId and AuthorizedOperations)', () => {
    golden(
      p.encodeDescribeGroupsRequest,
      p.decodeDescribeGroupsRequest,
      5,
      p.createDescribeGroupsRequest({ groups: ['g'], includeAuthorizedOperations: true }),
      '02 0267 | 01 | 00 # Groups ["g"], IncludeAuthorizedOperations true, tags',
    )
    golden(
      p.encodeDescribeGroupsResponse,
      p.decodeDescribeGroupsResponse,
      5,
      p.createDescribeGroupsResponse({
        groups: [
          p.createDescribeGroupsResponseDescribedGroup({
            groupId: 'g',
            groupState: 'Stable',
            protocolType: 'consumer',
            protocolData: 'range',
            members: [
              p.createDescribeGroupsResponseDescribedGroupMember({
                memberId: 'm',
                groupInstanceId: 'i',
                clientId: 'c',
                clientHost: 'h',
                memberMetadata: u8(1),
                memberAssignment: u8(2, 3),
              }),
            ],
            authorizedOperations: 8,
          }),
        ],
      }),
      `00000000                   # ThrottleTimeMs
       02                         # Groups: 1
         0000 0267 ${cStable}     #   ErrorCode, GroupId, GroupState (no ErrorMessage before v6)
         ${cConsumer} ${cRange}   #   ProtocolType, ProtocolData
         02                       #   Members: 1
           026d 0269 0263 0268    #     MemberId, GroupInstanceId "i", ClientId, ClientHost
           02 01 03 0203 00       #     MemberMetadata, MemberAssignment (compact bytes), tags
         00000008 00              #   AuthorizedOperations 8, group tags
       00`,
    )
  })

  it('v6: ErrorMessage', () => {
    golden(
      p.encodeDescribeGroupsRequest,
      p.decodeDescribeGroupsRequest,
      6,
      p.createDescribeGroupsRequest({ groups: ['g', 'h'] }),
      '03 0267 0268 | 00 | 00 # Groups ["g", "h"], IncludeAuthorizedOperations false, tags',
    )
    golden(
      p.encodeDescribeGroupsResponse,
      p.decodeDescribeGroupsResponse,
      6,
      p.createDescribeGroupsResponse({
        groups: [
          p.createDescribeGroupsResponseDescribedGroup({
            errorCode: 69,
            errorMessage: 'x',
            groupId: 'g',
            groupState: 'Dead',
          }),
        ],
      }),
      `00000000 02                # ThrottleTimeMs, Groups: 1
         0045 0278 0267           #   ErrorCode 69 GROUP_ID_NOT_FOUND, ErrorMessage "x", GroupId "g"
         05 44656164 01 01        #   GroupState "Dead", ProtocolType "", ProtocolData ""
         01 80000000 00           #   Members [], AuthorizedOperations (unset), tags
       00`,
    )
  })
})

describe('golden: ConsumerGroupHeartbeat (KIP-848)', () => {
  it('v0 request (joining) and v1 request (SubscribedTopicRegex, owned partitions)', () => {
    golden(
      p.encodeConsumerGroupHeartbeatRequest,
      p.decodeConsumerGroupHeartbeatRequest,
      0,
      p.createConsumerGroupHeartbeatRequest({
        groupId: 'g',
        memberId: 'm',
        memberEpoch: 0,
        rackId: 'r',
        rebalanceTimeoutMs: 300000,
        subscribedTopicNames: ['t'],
        serverAssignor: 'u',
        topicPartitions: [],
      }),
      `0267 026d 00000000         # GroupId "g", MemberId "m", MemberEpoch 0
       00 0272                    # InstanceId null, RackId "r"
       000493e0                   # RebalanceTimeoutMs 300000
       02 0274                    # SubscribedTopicNames ["t"]
       0275                       # ServerAssignor "u"
       01                         # TopicPartitions []
       00`,
    )
    golden(
      p.encodeConsumerGroupHeartbeatRequest,
      p.decodeConsumerGroupHeartbeatRequest,
      1,
      p.createConsumerGroupHeartbeatRequest({
        groupId: 'g',
        memberId: 'm',
        memberEpoch: 5,
        subscribedTopicRegex: 'x',
        topicPartitions: [
          p.createConsumerGroupHeartbeatRequestTopicPartitions({ topicId: UUID, partitions: [0, 1] }),
        ],
      }),
      `0267 026d 00000005         # GroupId, MemberId, MemberEpoch 5
       00 00 ffffffff             # InstanceId null, RackId null, RebalanceTimeoutMs -1
       00 0278                    # SubscribedTopicNames null, SubscribedTopicRegex "x"
       00                         # ServerAssignor null
       02 ${UUID_HEX}             # TopicPartitions: [TopicId
         03 00000000 00000001 00  #   Partitions [0, 1], tags]
       00`,
    )
  })

  it('v0 and v1 responses: with and without an assignment (nullable struct)', () => {
    const withAssignment = p.createConsumerGroupHeartbeatResponse({
      memberId: 'm',
      memberEpoch: 5,
      heartbeatIntervalMs: 5000,
      assignment: p.createConsumerGroupHeartbeatResponseAssignment({
        topicPartitions: [
          p.createConsumerGroupHeartbeatResponseTopicPartitions({ topicId: UUID, partitions: [0] }),
        ],
      }),
    })
    for (const v of [0, 1])
      golden(
        p.encodeConsumerGroupHeartbeatResponse,
        p.decodeConsumerGroupHeartbeatResponse,
        v,
        withAssignment,
        `00000000 0000 00          # ThrottleTimeMs, ErrorCode, ErrorMessage null
         026d 00000005 00001388   # MemberId "m", MemberEpoch 5, HeartbeatIntervalMs 5000
         01                       # Assignment present
           02 ${UUID_HEX} 02 00000000 00 # TopicPartitions: [TopicId, Partitions [0], tags]
           00                     #   assignment tags
         00`,
      )
    golden(
      p.encodeConsumerGroupHeartbeatResponse,
      p.decodeConsumerGroupHeartbeatResponse,
      1,
      p.createConsumerGroupHeartbeatResponse({
        errorCode: 25,
        errorMessage: 'x',
        memberEpoch: -1,
        heartbeatIntervalMs: 0,
      }),
      `00000000 0019 0278         # ThrottleTimeMs, ErrorCode 25 UNKNOWN_MEMBER_ID, ErrorMessage "x"
       00 ffffffff 00000000       # MemberId null, MemberEpoch -1, HeartbeatIntervalMs 0
       ff                         # Assignment null
       00`,
    )
  })
})

describe('golden: ConsumerGroupDescribe (KIP-848)', () => {
  const member = (memberType: number) =>
    p.createConsumerGroupDescribeResponseMember({
      memberId: 'm',
      memberEpoch: 5,
      clientId: 'c',
      clientHost: 'h',
      subscribedTopicNames: ['t'],
      assignment: p.createConsumerGroupDescribeResponseAssignment({
        topicPartitions: [
          p.createConsumerGroupDescribeResponseTopicPartitions({
            topicId: UUID,
            topicName: 't',
            partitions: [0],
          }),
        ],
      }),
      targetAssignment: p.createConsumerGroupDescribeResponseAssignment(),
      memberType,
    })
  const response = (memberType: number) =>
    p.createConsumerGroupDescribeResponse({
      groups: [
        p.createConsumerGroupDescribeResponseDescribedGroup({
          groupId: 'g',
          groupState: 'Stable',
          groupEpoch: 5,
          assignmentEpoch: 5,
          assignorName: 'uniform',
          members: [member(memberType)],
        }),
      ],
    })
  const head = `00000000 02                # ThrottleTimeMs, Groups: 1
         0000 00 0267 ${cStable}  #   ErrorCode, ErrorMessage null, GroupId "g", GroupState "Stable"
         00000005 00000005        #   GroupEpoch 5, AssignmentEpoch 5
         08 756e69666f726d        #   AssignorName "uniform"
         02                       #   Members: 1
           026d 00 00 00000005    #     MemberId "m", InstanceId null, RackId null, MemberEpoch 5
           0263 0268              #     ClientId "c", ClientHost "h"
           02 0274 00             #     SubscribedTopicNames ["t"], SubscribedTopicRegex null
           02 ${UUID_HEX} 0274 02 00000000 00 00 # Assignment: [TopicId, TopicName "t", Partitions [0], tags], tags
           01 00                  #     TargetAssignment: [], tags`

  it('v0', () => {
    golden(
      p.encodeConsumerGroupDescribeRequest,
      p.decodeConsumerGroupDescribeRequest,
      0,
      p.createConsumerGroupDescribeRequest({ groupIds: ['g'], includeAuthorizedOperations: true }),
      '02 0267 | 01 | 00 # GroupIds ["g"], IncludeAuthorizedOperations true, tags',
    )
    golden(
      p.encodeConsumerGroupDescribeResponse,
      p.decodeConsumerGroupDescribeResponse,
      0,
      response(-1),
      `${head}
           00                     #     member tags (no MemberType before v1)
         80000000 00              #   AuthorizedOperations (unset), group tags
       00`,
    )
  })

  it('v1: MemberType', () => {
    golden(
      p.encodeConsumerGroupDescribeRequest,
      p.decodeConsumerGroupDescribeRequest,
      1,
      p.createConsumerGroupDescribeRequest({ groupIds: ['g', 'h'] }),
      '03 0267 0268 | 00 | 00',
    )
    golden(
      p.encodeConsumerGroupDescribeResponse,
      p.decodeConsumerGroupDescribeResponse,
      1,
      response(1),
      `${head}
           01 00                  #     MemberType 1, member tags
         80000000 00
       00`,
    )
  })
})

describe('golden: SaslAuthenticate', () => {
  it('v0 (int32-length bytes, no SessionLifetimeMs)', () => {
    golden(
      p.encodeSaslAuthenticateRequest,
      p.decodeSaslAuthenticateRequest,
      0,
      p.createSaslAuthenticateRequest({ authBytes: u8(0, 0x75, 0, 0x70) }),
      '00000004 00750070 # AuthBytes "\\0u\\0p" (PLAIN)',
    )
    golden(
      p.encodeSaslAuthenticateResponse,
      p.decodeSaslAuthenticateResponse,
      0,
      p.createSaslAuthenticateResponse({ errorCode: 58, errorMessage: 'bad', authBytes: u8() }),
      `003a 0003 626164           # ErrorCode 58 SASL_AUTHENTICATION_FAILED, ErrorMessage "bad"
       00000000                   # AuthBytes empty`,
    )
  })

  it('v2 (flexible, SessionLifetimeMs)', () => {
    golden(
      p.encodeSaslAuthenticateRequest,
      p.decodeSaslAuthenticateRequest,
      2,
      p.createSaslAuthenticateRequest({ authBytes: u8(0, 0x75, 0, 0x70) }),
      '05 00750070 | 00 # AuthBytes (compact), tags',
    )
    golden(
      p.encodeSaslAuthenticateResponse,
      p.decodeSaslAuthenticateResponse,
      2,
      p.createSaslAuthenticateResponse({
        errorCode: 0,
        errorMessage: null,
        authBytes: u8(1),
        sessionLifetimeMs: 3600000n,
      }),
      `0000 00 02 01              # ErrorCode, ErrorMessage null, AuthBytes [1]
       000000000036ee80           # SessionLifetimeMs 3600000
       00`,
    )
  })
})

describe('golden: ApiVersions', () => {
  it('v5 request with ClusterId and NodeId', () => {
    golden(
      p.encodeApiVersionsRequest,
      p.decodeApiVersionsRequest,
      5,
      p.createApiVersionsRequest({
        clientSoftwareName: 'k',
        clientSoftwareVersion: '1',
        clusterId: 'c',
        nodeId: 1,
      }),
      `026b 0231                  # ClientSoftwareName "k", ClientSoftwareVersion "1"
       0263 00000001              # ClusterId "c", NodeId 1
       00`,
    )
    golden(
      p.encodeApiVersionsResponse,
      p.decodeApiVersionsResponse,
      5,
      p.createApiVersionsResponse({
        apiKeys: [p.createApiVersionsResponseApiVersion({ apiKey: 18, maxVersion: 5 })],
      }),
      '0000 | 02 0012 0000 0005 00 | 00000000 | 00 # ErrorCode, ApiKeys [18: 0-5], ThrottleTimeMs, no tags',
    )
  })

  it('v3 response with every tagged field', () => {
    golden(
      p.encodeApiVersionsRequest,
      p.decodeApiVersionsRequest,
      3,
      p.createApiVersionsRequest({ clientSoftwareName: 'k', clientSoftwareVersion: '1' }),
      '026b 0231 00 # no ClusterId or NodeId before v5',
    )
    golden(
      p.encodeApiVersionsResponse,
      p.decodeApiVersionsResponse,
      3,
      p.createApiVersionsResponse({
        apiKeys: [p.createApiVersionsResponseApiVersion({ apiKey: 18, minVersion: 0, maxVersion: 4 })],
        throttleTimeMs: 0,
        supportedFeatures: [
          p.createApiVersionsResponseSupportedFeatureKey({ name: 'f', minVersion: 1, maxVersion: 2 }),
        ],
        finalizedFeaturesEpoch: 7n,
        finalizedFeatures: [
          p.createApiVersionsResponseFinalizedFeatureKey({
            name: 'f',
            maxVersionLevel: 2,
            minVersionLevel: 1,
          }),
        ],
        zkMigrationReady: true,
      }),
      `0000                       # ErrorCode
       02 0012 0000 0004 00       # ApiKeys: [18, 0, 4, tags]
       00000000                   # ThrottleTimeMs
       04                         # tags: 4
         00 08 02 0266 0001 0002 00 # tag 0 SupportedFeatures (8 bytes): [Name "f", 1, 2, tags]
         01 08 0000000000000007   # tag 1 FinalizedFeaturesEpoch (8 bytes) = 7
         02 08 02 0266 0002 0001 00 # tag 2 FinalizedFeatures (8 bytes): [Name "f", MaxVersionLevel 2, MinVersionLevel 1, tags]
         03 01 01                 # tag 3 ZkMigrationReady (1 byte) = true`,
    )
  })
})

describe('golden: OffsetDelete and Heartbeat', () => {
  it('OffsetDelete v0 (never flexible)', () => {
    golden(
      p.encodeOffsetDeleteRequest,
      p.decodeOffsetDeleteRequest,
      0,
      p.createOffsetDeleteRequest({
        groupId: 'g',
        topics: [
          p.createOffsetDeleteRequestOffsetDeleteRequestTopic({
            name: 't',
            partitions: [p.createOffsetDeleteRequestOffsetDeleteRequestPartition({ partitionIndex: 0 })],
          }),
        ],
      }),
      `000167                     # GroupId "g"
       00000001 000174            # Topics: [Name "t"
         00000001 00000000        #   Partitions: [PartitionIndex 0]]`,
    )
    golden(
      p.encodeOffsetDeleteResponse,
      p.decodeOffsetDeleteResponse,
      0,
      p.createOffsetDeleteResponse({
        errorCode: 0,
        throttleTimeMs: 0,
        topics: [
          p.createOffsetDeleteResponseOffsetDeleteResponseTopic({
            name: 't',
            partitions: [
              p.createOffsetDeleteResponseOffsetDeleteResponsePartition({ partitionIndex: 0, errorCode: 86 }),
            ],
          }),
        ],
      }),
      `0000 00000000              # ErrorCode (first), ThrottleTimeMs
       00000001 000174            # Topics: [Name "t"
         00000001 00000000 0056   #   Partitions: [0, ErrorCode 86 GROUP_SUBSCRIBED_TO_TOPIC]]`,
    )
  })

  it('Heartbeat v4 (flexible)', () => {
    golden(
      p.encodeHeartbeatRequest,
      p.decodeHeartbeatRequest,
      4,
      p.createHeartbeatRequest({ groupId: 'g', generationId: 2, memberId: 'm', groupInstanceId: 'i' }),
      '0267 00000002 026d 0269 00 # GroupId, GenerationId 2, MemberId, GroupInstanceId "i", tags',
    )
    golden(
      p.encodeHeartbeatResponse,
      p.decodeHeartbeatResponse,
      4,
      p.createHeartbeatResponse({ throttleTimeMs: 1, errorCode: 27 }),
      '00000001 001b 00 # ThrottleTimeMs 1, ErrorCode 27 REBALANCE_IN_PROGRESS, tags',
    )
  })
})
