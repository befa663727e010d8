/**
 * Golden bytes for the data-plane messages (Produce, Fetch, DeleteRecords, OffsetForLeaderEpoch,
 * InitProducerId), written out by hand from schemas/messages, not produced by our encoder. Each
 * case checks both directions: decode(bytes) equals the object, and encode(object) equals the bytes.
 * The record batch is the one of the data-plane specification (§2.6): an idempotent producer's
 * batch (producer id 1000, epoch 5, sequence 0) with one record, key "k", value "v".
 *
 * Notation: `#` starts a comment to the end of the line; spaces and `|` are ignored. Flexible
 * versions: compact string/bytes = uvarint(len + 1) then bytes, compact array = uvarint(count + 1),
 * `00` = an empty tagged-field section.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { crc32c } from '@node-rs/crc32'
import * as p from '../../src/protocol/index.js'
import { golden, hex } from './golden-hex.js'

/** The batch as the producer sends it (base offset 0, leader epoch -1). */
const BATCH_SENT = `
  0000000000000000 0000003a ffffffff 02 6d0428ed   # baseOffset, batchLength 58, leader epoch -1, magic, crc
  0000 00000000 0000018bcfe56800 0000018bcfe56800   # attributes, lastOffsetDelta, base and max timestamp
  00000000000003e8 0005 00000000 00000001           # producer id 1000, epoch 5, base sequence 0, 1 record
  10 00 00 00 02 6b 02 76 00                        # record: length 8, attrs, ts delta, offset delta, key "k", value "v", no headers`
/** The same batch as stored at offset 7 under leader epoch 0: only fields outside the CRC change. */
const BATCH_STORED = `
  0000000000000007 0000003a 00000000 02 6d0428ed
  0000 00000000 0000018bcfe56800 0000018bcfe56800
  00000000000003e8 0005 00000000 00000001
  10 00 00 00 02 6b 02 76 00`

describe('the record batch of the examples', () => {
  it('is 70 bytes and its CRC-32C covers bytes 21 to the end', () => {
    for (const b of [hex(BATCH_SENT), hex(BATCH_STORED)]) {
      assert.equal(b.length, 70)
      assert.equal(b.readInt32BE(8), b.length - 12)
      assert.equal(crc32c(b.subarray(21)), b.readUInt32BE(17))
    }
  })
})

describe('golden: Produce', () => {
  it('v9 request: acks -1, one partition with one batch', () => {
    golden(
      p.encodeProduceRequest,
      p.decodeProduceRequest,
      9,
      p.createProduceRequest({
        transactionalId: null,
        acks: -1,
        timeoutMs: 30000,
        topicData: [
          p.createProduceRequestTopicProduceData({
            name: 't',
            partitionData: [
              p.createProduceRequestPartitionProduceData({
                index: 0,
                records: new Uint8Array(hex(BATCH_SENT)),
              }),
            ],
          }),
        ],
      }),
      `00                 # TransactionalId null (compact)
       ffff               # Acks -1
       00007530           # TimeoutMs 30000
       02 0274            # TopicData: [Name "t"
         02 00000000      #   PartitionData: [Index 0
           47 ${BATCH_SENT}
           00             #   ]
         00               # ]
       00`,
    )
  })

  it('v13 request: the topic is named by id', () => {
    const id = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex').toString('base64url')
    golden(
      p.encodeProduceRequest,
      p.decodeProduceRequest,
      13,
      p.createProduceRequest({
        transactionalId: null,
        acks: 1,
        timeoutMs: 1000,
        topicData: [
          p.createProduceRequestTopicProduceData({
            topicId: id,
            partitionData: [
              p.createProduceRequestPartitionProduceData({ index: 2, records: new Uint8Array(0) }),
            ],
          }),
        ],
      }),
      `00 0001 000003e8
       02 000102030405060708090a0b0c0d0e0f   # TopicData: [TopicId
         02 00000002 01 00                   #   PartitionData: [Index 2, Records empty]
         00
       00`,
    )
  })

  it('v9 response: an INVALID_RECORD with a record error', () => {
    golden(
      p.encodeProduceResponse,
      p.decodeProduceResponse,
      9,
      p.createProduceResponse({
        responses: [
          p.createProduceResponseTopicProduceResponse({
            name: 't',
            partitionResponses: [
              p.createProduceResponsePartitionProduceResponse({
                index: 0,
                errorCode: 87,
                baseOffset: -1n,
                logAppendTimeMs: -1n,
                logStartOffset: 0n,
                recordErrors: [
                  p.createProduceResponseBatchIndexAndErrorMessage({
                    batchIndex: 1,
                    batchIndexErrorMessage: 'x',
                  }),
                ],
                errorMessage: 'e',
              }),
            ],
          }),
        ],
      }),
      `02 0274                              # Responses: [Name "t"
         02 00000000 0057                  #   PartitionResponses: [Index 0, ErrorCode 87
           ffffffffffffffff                #     BaseOffset -1
           ffffffffffffffff                #     LogAppendTimeMs -1
           0000000000000000                #     LogStartOffset 0
           02 00000001 0278 00             #     RecordErrors: [BatchIndex 1, message "x"]
           0265                            #     ErrorMessage "e"
           00                              #   ]
         00                                # ]
       00000000                            # ThrottleTimeMs
       00`,
    )
  })

  it('v10 response: the CurrentLeader and NodeEndpoints tags', () => {
    golden(
      p.encodeProduceResponse,
      p.decodeProduceResponse,
      10,
      p.createProduceResponse({
        responses: [
          p.createProduceResponseTopicProduceResponse({
            name: 't',
            partitionResponses: [
              p.createProduceResponsePartitionProduceResponse({
                index: 0,
                errorCode: 6,
                baseOffset: -1n,
                currentLeader: { leaderId: 1, leaderEpoch: 3 },
              }),
            ],
          }),
        ],
        nodeEndpoints: [
          p.createProduceResponseNodeEndpoint({ nodeId: 1, host: 'h', port: 9092, rack: null }),
        ],
      }),
      `02 0274
         02 00000000 0006 ffffffffffffffff ffffffffffffffff ffffffffffffffff
           01 00                           #   RecordErrors [], ErrorMessage null
           01 00 09 00000001 00000003 00   #   tag 0 CurrentLeader (9 bytes): LeaderId 1, LeaderEpoch 3
         00
       00000000
       01 00 0d 02 00000001 0268 00002384 00 00   # tag 0 NodeEndpoints (13 bytes): [1, "h", 9092, rack null]`,
    )
  })

  it('a tagged struct is left out only when every field is at its default, its own tags included', () => {
    const partition = (currentLeader: p.ProduceResponseLeaderIdAndEpoch) =>
      p.createProduceResponse({
        responses: [
          p.createProduceResponseTopicProduceResponse({
            name: 't',
            partitionResponses: [
              p.createProduceResponsePartitionProduceResponse({ index: 0, currentLeader }),
            ],
          }),
        ],
      })
    const plain = p.encodeProduceResponse(partition({ leaderId: -1, leaderEpoch: -1 }), 10)
    const leaderOnly = p.encodeProduceResponse(partition({ leaderId: 1, leaderEpoch: -1 }), 10)
    const epochOnly = p.encodeProduceResponse(partition({ leaderId: -1, leaderEpoch: 0 }), 10)
    const ownTag = p.encodeProduceResponse(
      partition({
        leaderId: -1,
        leaderEpoch: -1,
        unknownTaggedFields: [{ tag: 9, data: new Uint8Array([7]) }],
      }),
      10,
    )
    const emptyTags = p.encodeProduceResponse(
      partition({ leaderId: -1, leaderEpoch: -1, unknownTaggedFields: [] }),
      10,
    )
    assert.deepEqual(emptyTags, plain, 'no tagged fields and an empty list are the same')
    for (const [name, bytes] of [
      ['leaderId', leaderOnly],
      ['leaderEpoch', epochOnly],
      ['its own tagged field', ownTag],
    ] as const) {
      assert.ok(bytes.length > plain.length, `${name} makes CurrentLeader written`)
      const back = p.decodeProduceResponse(bytes, 10).responses[0]!.partitionResponses[0]!.currentLeader
      assert.notDeepEqual(back, p.createProduceResponseLeaderIdAndEpoch(), name)
    }
    // v9 has no CurrentLeader: the default is dropped, any other value refused (not ignorable).
    assert.deepEqual(p.encodeProduceResponse(partition({ leaderId: -1, leaderEpoch: -1 }), 9), plain)
    assert.throws(
      () => p.encodeProduceResponse(partition({ leaderId: 1, leaderEpoch: 3 }), 9),
      p.UnsupportedVersionError,
    )
  })
})

describe('golden: Fetch', () => {
  it('v12 request: a consumer fetch without a session', () => {
    golden(
      p.encodeFetchRequest,
      p.decodeFetchRequest,
      12,
      p.createFetchRequest({
        replicaId: -1,
        maxWaitMs: 500,
        minBytes: 1,
        maxBytes: 52428800,
        isolationLevel: 1,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          p.createFetchRequestFetchTopic({
            topic: 't',
            partitions: [
              p.createFetchRequestFetchPartition({
                partition: 0,
                currentLeaderEpoch: 0,
                fetchOffset: 7n,
                lastFetchedEpoch: -1,
                logStartOffset: -1n,
                partitionMaxBytes: 1048576,
              }),
            ],
          }),
        ],
        forgottenTopicsData: [],
        rackId: '',
      }),
      `ffffffff 000001f4 00000001 03200000 01   # ReplicaId -1, MaxWaitMs 500, MinBytes 1, MaxBytes, read_committed
       00000000 ffffffff                        # SessionId 0, SessionEpoch -1
       02 0274                                  # Topics: [Topic "t"
         02 00000000 00000000                   #   Partitions: [Partition 0, CurrentLeaderEpoch 0
           0000000000000007 ffffffff            #     FetchOffset 7, LastFetchedEpoch -1
           ffffffffffffffff 00100000 00         #     LogStartOffset -1, PartitionMaxBytes 1 MiB]
         00
       01                                       # ForgottenTopicsData []
       01                                       # RackId ""
       00`,
    )
  })

  it('v12 response: one partition with the stored batch', () => {
    golden(
      p.encodeFetchResponse,
      p.decodeFetchResponse,
      12,
      p.createFetchResponse({
        responses: [
          p.createFetchResponseFetchableTopicResponse({
            topic: 't',
            partitions: [
              p.createFetchResponsePartitionData({
                partitionIndex: 0,
                errorCode: 0,
                highWatermark: 8n,
                lastStableOffset: 8n,
                logStartOffset: 0n,
                abortedTransactions: null,
                preferredReadReplica: -1,
                records: new Uint8Array(hex(BATCH_STORED)),
              }),
            ],
          }),
        ],
      }),
      `00000000 0000 00000000                   # ThrottleTimeMs, ErrorCode, SessionId 0
       02 0274                                  # Responses: [Topic "t"
         02 00000000 0000                       #   Partitions: [PartitionIndex 0, ErrorCode 0
           0000000000000008                     #     HighWatermark 8
           0000000000000008                     #     LastStableOffset 8
           0000000000000000                     #     LogStartOffset 0
           00                                   #     AbortedTransactions null
           ffffffff                             #     PreferredReadReplica -1
           47 ${BATCH_STORED}
           00                                   #   ]
         00
       00`,
    )
  })

  it('v13 response: the topic by id, read_committed with an aborted transaction', () => {
    const id = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex').toString('base64url')
    golden(
      p.encodeFetchResponse,
      p.decodeFetchResponse,
      13,
      p.createFetchResponse({
        responses: [
          p.createFetchResponseFetchableTopicResponse({
            topicId: id,
            partitions: [
              p.createFetchResponsePartitionData({
                partitionIndex: 1,
                errorCode: 1,
                highWatermark: -1n,
                lastStableOffset: -1n,
                logStartOffset: -1n,
                abortedTransactions: [
                  p.createFetchResponseAbortedTransaction({ producerId: 1000n, firstOffset: 3n }),
                ],
                preferredReadReplica: -1,
                records: new Uint8Array(0),
              }),
            ],
          }),
        ],
      }),
      `00000000 0000 00000000
       02 000102030405060708090a0b0c0d0e0f
         02 00000001 0001 ffffffffffffffff ffffffffffffffff ffffffffffffffff
           02 00000000000003e8 0000000000000003 00   # AbortedTransactions [1000 from 3]
           ffffffff 01 00                            # PreferredReadReplica -1, Records empty
         00
       00`,
    )
  })
})

describe('golden: the other data-plane APIs', () => {
  it('DeleteRecords v2', () => {
    golden(
      p.encodeDeleteRecordsRequest,
      p.decodeDeleteRecordsRequest,
      2,
      p.createDeleteRecordsRequest({
        topics: [
          p.createDeleteRecordsRequestDeleteRecordsTopic({
            name: 't',
            partitions: [
              p.createDeleteRecordsRequestDeleteRecordsPartition({ partitionIndex: 0, offset: -1n }),
            ],
          }),
        ],
        timeoutMs: 60000,
      }),
      `02 0274 02 00000000 ffffffffffffffff 00 00   # Topics: [t: [0 at -1]]
       0000ea60 00                               # TimeoutMs 60000`,
    )
  })

  it('OffsetForLeaderEpoch v4 response', () => {
    golden(
      p.encodeOffsetForLeaderEpochResponse,
      p.decodeOffsetForLeaderEpochResponse,
      4,
      p.createOffsetForLeaderEpochResponse({
        topics: [
          p.createOffsetForLeaderEpochResponseOffsetForLeaderTopicResult({
            topic: 't',
            partitions: [
              p.createOffsetForLeaderEpochResponseEpochEndOffset({
                errorCode: 0,
                partition: 0,
                leaderEpoch: 0,
                endOffset: 8n,
              }),
            ],
          }),
        ],
      }),
      `00000000                                 # ThrottleTimeMs
       02 0274 02 0000 00000000 00000000 0000000000000008 00 00
       00`,
    )
  })

  it('InitProducerId v4 request without a transactional id', () => {
    golden(
      p.encodeInitProducerIdRequest,
      p.decodeInitProducerIdRequest,
      4,
      p.createInitProducerIdRequest({
        transactionalId: null,
        transactionTimeoutMs: 2147483647,
        producerId: -1n,
        producerEpoch: -1,
      }),
      `00 7fffffff ffffffffffffffff ffff 00`,
    )
  })
})
