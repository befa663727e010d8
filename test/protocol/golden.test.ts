/** Golden bytes, written by hand from the schemas and protocol.md (§4.6, §5.3, §7, §8.2). */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as p from '../../src/protocol/index.js'

const hex = (s: string) => Buffer.from(s.replace(/[\s|]/g, ''), 'hex')
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex')
function same(actual: Uint8Array, expected: string) {
  assert.equal(toHex(actual), toHex(hex(expected)))
}

describe('KIP-1331 golden bytes', () => {
  const hb = p.createStreamsGroupHeartbeatResponse({
    memberId: 'm',
    memberEpoch: 5,
    heartbeatIntervalMs: 5000,
    taskOffsetIntervalMs: 3,
    acceptableRecoveryLag: 1000n,
    status: null,
    topologyDescriptionRequired: true,
    endpointInformationEpoch: 4,
  })
  const head = '00000000 0000 00 026d 00000005 00001388'

  it('StreamsGroupHeartbeat v1 response: int64 AcceptableRecoveryLag and TopologyDescriptionRequired', () => {
    const bytes = p.encodeStreamsGroupHeartbeatResponse(hb, 1)
    same(bytes, `${head} 00000003 | 00000000000003e8 | 00 00 00 00 | 01 | 00000004 00 00`)
    assert.deepEqual(p.decodeStreamsGroupHeartbeatResponse(bytes, 1), hb)
  })

  it('StreamsGroupHeartbeat v0 response: legacy int32 lag; the ignorable int64 is dropped', () => {
    const v0 = { ...hb, topologyDescriptionRequired: false, acceptableRecoveryLagLegacy: 1000 }
    const bytes = p.encodeStreamsGroupHeartbeatResponse(v0, 0)
    same(bytes, `${head} 000003e8 | 00000003 | 00 00 00 00 | 00000004 00 00`)
    const back = p.decodeStreamsGroupHeartbeatResponse(bytes, 0)
    assert.equal(back.acceptableRecoveryLag, -1n)
    assert.equal(back.acceptableRecoveryLagLegacy, 1000)
  })

  it('StreamsGroupHeartbeat v0 response: TopologyDescriptionRequired=true is not ignorable', () => {
    assert.throws(
      () => p.encodeStreamsGroupHeartbeatResponse(hb, 0),
      (e: unknown) =>
        e instanceof p.UnsupportedVersionError &&
        e.field === 'TopologyDescriptionRequired' &&
        e.version === 0 &&
        /StreamsGroupHeartbeatResponse/.test(e.message),
    )
  })

  it('StreamsGroupHeartbeat v1 response: legacy field is rejected when non-default', () => {
    assert.throws(
      () => p.encodeStreamsGroupHeartbeatResponse({ ...hb, acceptableRecoveryLagLegacy: 7 }, 1),
      p.UnsupportedVersionError,
    )
  })

  it('StreamsGroupDescribe request v1 and v0 (protocol.md §4.6)', () => {
    const m = p.createStreamsGroupDescribeRequest({
      groupIds: ['g'],
      includeAuthorizedOperations: true,
      includeTopologyDescription: true,
    })
    same(p.encodeStreamsGroupDescribeRequest(m, 1), '02 02 67 01 01 00')
    assert.deepEqual(p.decodeStreamsGroupDescribeRequest(hex('02 02 67 01 01 00'), 1), m)
    same(
      p.encodeStreamsGroupDescribeRequest({ ...m, includeTopologyDescription: false }, 0),
      '02 02 67 01 00',
    )
    assert.throws(() => p.encodeStreamsGroupDescribeRequest(m, 0), p.UnsupportedVersionError)
  })

  it('StreamsGroupDescribe v1 response with a TopologyDescription', () => {
    const group = p.createStreamsGroupDescribeResponseDescribedGroup({
      groupId: 'g',
      groupState: 'Stable',
      groupEpoch: 1,
      assignmentEpoch: 1,
      topologyDescription: p.createStreamsGroupDescribeResponseTopologyDescription({
        subtopologies: [
          {
            subtopologyId: '0',
            nodes: [
              p.createStreamsGroupDescribeResponseTopologyDescriptionNode({
                name: 's',
                nodeType: 1,
                sourceTopics: ['t'],
              }),
            ],
          },
        ],
      }),
      topologyDescriptionStatus: 3,
    })
    const m = p.createStreamsGroupDescribeResponse({ groups: [group] })
    const expected = `00000000 02
      0000 00 0267 07537461626c65 00000001 00000001 ff 01 80000000
      01 02 0230 02 | 0273 01 020274 00 01 01 00 | 00 01 00
      03 00 00
      00`
    const bytes = p.encodeStreamsGroupDescribeResponse(m, 1)
    same(bytes, expected)
    assert.deepEqual(p.decodeStreamsGroupDescribeResponse(bytes, 1), m)
    // v0 cannot carry it
    assert.throws(() => p.encodeStreamsGroupDescribeResponse(m, 0), p.UnsupportedVersionError)
    // ignorable AssignorName is dropped at v0
    const plain = p.createStreamsGroupDescribeResponse({
      groups: [{ ...group, topologyDescription: null, topologyDescriptionStatus: 0, assignorName: 'sticky' }],
    })
    same(
      p.encodeStreamsGroupDescribeResponse(plain, 0),
      '00000000 02 0000 00 0267 07537461626c65 00000001 00000001 ff 01 80000000 00 00',
    )
  })

  it('DeleteGroups v3 response carries ErrorMessage; v2 drops it (ignorable)', () => {
    const m = p.createDeleteGroupsResponse({
      results: [{ groupId: 'g', errorCode: 134, errorMessage: 'boom' }],
    })
    same(p.encodeDeleteGroupsResponse(m, 3), '00000000 02 0267 0086 05626f6f6d 00 00')
    same(p.encodeDeleteGroupsResponse(m, 2), '00000000 02 0267 0086 00 00')
    same(p.encodeDeleteGroupsResponse(m, 1), '00000000 00000001 0001 67 0086')
    assert.equal(
      p.decodeDeleteGroupsResponse(hex('00000000 02 0267 0086 00 00'), 2).results[0]!.errorMessage,
      null,
    )
  })

  it('StreamsGroupTopologyDescriptionUpdate (key 93) request and response', () => {
    const rq = p.createStreamsGroupTopologyDescriptionUpdateRequest({
      groupId: 'g',
      memberId: 'm',
      topologyEpoch: 1,
    })
    same(p.encodeStreamsGroupTopologyDescriptionUpdateRequest(rq, 0), '0267 026d 00000001 01 01 00 00')
    const rs = p.createStreamsGroupTopologyDescriptionUpdateResponse({
      errorCode: 135,
      errorMessage: 'too large',
    })
    same(
      p.encodeStreamsGroupTopologyDescriptionUpdateResponse(rs, 0),
      '00000000 0087 0a746f6f206c61726765 00',
    )
    assert.equal(p.ApiKeys.StreamsGroupTopologyDescriptionUpdate, 93)
    assert.equal(p.requestHeaderVersion(93, 0), 2)
    assert.equal(p.responseHeaderVersion(93, 0), 1)
  })

  it('StreamsGroupMetadataValue trailers: an empty LastAssignmentConfigs is its default and is not written', () => {
    // Kafka's generator reads the schema's JSON null default as "no default": the array defaults to
    // empty, an empty list is left out and only null is written (as tag 1, size 1, null).
    const base = '00000001 0000000000000002'
    const stored4 = p.createStreamsGroupMetadataValue({
      epoch: 1,
      metadataHash: 2n,
      validatedTopologyEpoch: 4,
      lastAssignmentConfigs: [],
      storedDescriptionTopologyEpoch: 4,
    })
    same(p.encodeStreamsGroupMetadataValue(stored4, 0), `${base} 02 | 00 04 00000004 | 02 04 00000004`)
    const uncertain = { ...stored4, storedDescriptionTopologyEpoch: -2, failedDescriptionTopologyEpoch: 3 }
    same(
      p.encodeStreamsGroupMetadataValue(uncertain, 0),
      `${base} 03 | 00 04 00000004 | 02 04 fffffffe | 03 04 00000003`,
    )
    const withConfig = { ...stored4, lastAssignmentConfigs: [{ key: 'k', value: 'v' }] }
    same(
      p.encodeStreamsGroupMetadataValue(withConfig, 0),
      `${base} 03 | 00 04 00000004 | 01 06 02 026b 0276 00 | 02 04 00000004`,
    )
    same(
      p.encodeStreamsGroupMetadataValue({ ...stored4, lastAssignmentConfigs: null }, 0),
      `${base} 03 | 00 04 00000004 | 01 01 00 | 02 04 00000004`,
    )
    // an absent tag and an explicitly written empty list both read as the empty list
    const noTag1 = p.decodeStreamsGroupMetadataValue(hex(`${base} 02 00 04 00000004 02 04 00000004`), 0)
    assert.deepEqual(noTag1, stored4)
    const emptyTag1 = p.decodeStreamsGroupMetadataValue(
      hex(`${base} 03 00 04 00000004 01 01 01 02 04 00000004`),
      0,
    )
    assert.deepEqual(emptyTag1, stored4)
    // defaults are omitted
    same(
      p.encodeStreamsGroupMetadataValue(p.createStreamsGroupMetadataValue({ epoch: 1, metadataHash: 2n }), 0),
      `${base} 00`,
    )
  })

  it('StreamsGroupCurrentMemberAssignmentValue: empty AssignmentEpochs is the default and is not written', () => {
    const t = p.createStreamsGroupCurrentMemberAssignmentValueTaskIds({ subtopologyId: '', partitions: [] })
    assert.deepEqual(t.assignmentEpochs, [])
    const v = p.createStreamsGroupCurrentMemberAssignmentValue({ activeTasks: [t] })
    const bytes = p.encodeStreamsGroupCurrentMemberAssignmentValue(v, 0)
    const withNull = p.encodeStreamsGroupCurrentMemberAssignmentValue(
      { ...v, activeTasks: [{ ...t, assignmentEpochs: null }] },
      0,
    )
    // the null form carries the tag (tag 0, size 1, null); the empty form does not
    assert.equal(withNull.length, bytes.length + 3)
    assert.deepEqual(p.decodeStreamsGroupCurrentMemberAssignmentValue(bytes, 0), v)
  })
})

describe('golden bytes: other APIs', () => {
  it('ApiVersions v3 request and response (response header is always v0)', () => {
    const rq = p.createApiVersionsRequest({ clientSoftwareName: 'k', clientSoftwareVersion: '1' })
    same(p.encodeApiVersionsRequest(rq, 3), '026b 0231 00')
    same(p.encodeApiVersionsRequest(rq, 2), '')
    const rs = p.createApiVersionsResponse({ apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 5 }] })
    same(p.encodeApiVersionsResponse(rs, 3), '0000 02 0012 0000 0005 00 00000000 00')
    same(p.encodeResponseFrame(18, 3, 9, rs), '00000013 00000009 0000 02 0012 0000 0005 00 00000000 00')
  })

  it('Heartbeat v3 and v4', () => {
    const rq = p.createHeartbeatRequest({
      groupId: 'g',
      generationId: 2,
      memberId: 'm',
      groupInstanceId: 'i',
    })
    same(p.encodeHeartbeatRequest(rq, 3), '000167 00000002 00016d 000169')
    same(p.encodeHeartbeatRequest(rq, 4), '0267 00000002 026d 0269 00')
    assert.throws(() => p.encodeHeartbeatRequest(rq, 2), p.UnsupportedVersionError)
    same(
      p.encodeHeartbeatResponse(p.createHeartbeatResponse({ throttleTimeMs: 1, errorCode: 27 }), 0),
      '001b',
    )
    same(
      p.encodeHeartbeatResponse(p.createHeartbeatResponse({ throttleTimeMs: 1, errorCode: 27 }), 4),
      '00000001 001b 00',
    )
  })

  it('FindCoordinator v0 and v4', () => {
    same(p.encodeFindCoordinatorRequest(p.createFindCoordinatorRequest({ key: 'g' }), 0), '000167')
    same(
      p.encodeFindCoordinatorRequest(
        p.createFindCoordinatorRequest({ keyType: 0, coordinatorKeys: ['g'] }),
        4,
      ),
      '00 02 0267 00',
    )
    const rs = p.createFindCoordinatorResponse({
      coordinators: [{ key: 'g', nodeId: 1, host: 'h', port: 9092, errorCode: 0, errorMessage: null }],
    })
    same(p.encodeFindCoordinatorResponse(rs, 4), '00000000 02 0267 00000001 0268 00002384 0000 00 00 00')
  })

  it('request frame with header v2 keeps the int16 ClientId', () => {
    const body = p.createStreamsGroupDescribeRequest({ groupIds: ['g'], includeAuthorizedOperations: true })
    const frame = p.encodeRequestFrame(89, 0, 7, 'c', body)
    same(frame, '00000011 0059 0000 00000007 0001 63 00 | 02 02 67 01 00')
    const d = p.decodeRequest(frame.subarray(4))
    assert.equal(d.apiKey, 89)
    assert.equal(d.header.clientId, 'c')
    assert.equal(d.header.correlationId, 7)
    assert.deepEqual(d.body, body)
  })

  it('OffsetDelete v0 (not flexible): request header v1, response header v0', () => {
    assert.equal(p.requestHeaderVersion(47, 0), 1)
    assert.equal(p.responseHeaderVersion(47, 0), 0)
    assert.equal(p.responseHeaderVersion(18, 4), 0)
    assert.equal(p.responseHeaderVersion(88, 1), 1)
  })
  it('SaslHandshake v1 (never flexible)', () => {
    same(
      p.encodeSaslHandshakeRequest(p.createSaslHandshakeRequest({ mechanism: 'PLAIN' }), 1),
      '0005 504c41494e',
    )
    const rs = p.createSaslHandshakeResponse({ mechanisms: ['PLAIN'] })
    same(p.encodeSaslHandshakeResponse(rs, 1), '0000 00000001 0005504c41494e')
    assert.equal(p.requestHeaderVersion(17, 1), 1)
  })

  it('ListGroups v3 and v5 (ignorable GroupState/GroupType dropped at v3)', () => {
    same(p.encodeListGroupsRequest(p.createListGroupsRequest(), 3), '00')
    same(
      p.encodeListGroupsRequest(p.createListGroupsRequest({ typesFilter: ['streams'] }), 5),
      '01 02 0873747265616d73 00',
    )
    assert.throws(
      () => p.encodeListGroupsRequest(p.createListGroupsRequest({ typesFilter: ['streams'] }), 4),
      p.UnsupportedVersionError,
    )
    const rs = p.createListGroupsResponse({
      groups: [{ groupId: 'g', protocolType: 'streams', groupState: 'Stable', groupType: 'streams' }],
    })
    same(p.encodeListGroupsResponse(rs, 3), '00000000 0000 02 0267 0873747265616d73 00 00')
    same(
      p.encodeListGroupsResponse(rs, 5),
      '00000000 0000 02 0267 0873747265616d73 07537461626c65 0873747265616d73 00 00',
    )
    same(p.encodeListGroupsResponse(rs, 0), '0000 00000001 000167 000773747265616d73')
  })
})
