// The classic join's detection of an empty streams group that needs a cleanup before the conversion
// (KIP-1331 §7, Kafka's topologyCleanupHandled): only a group whose stored description epoch is not
// -1 defers; a join marked ready converts; a non-empty streams group is refused.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import type { CoordinatorRecord } from '../../../../src/protocol/generated/coordinator-records.js'
import { Harness } from './harness.js'

function streamsGroup(state: { exists: boolean; empty: boolean; stored: number }): Harness {
  const tombstone: CoordinatorRecord = { type: 'StreamsGroupMetadata', key: { groupId: 'g' }, value: null }
  return new Harness({
    otherGroups: {
      typeOf: (id) => (id === 'g' && state.exists ? 'streams' : undefined),
      isEmpty: () => state.empty,
      needsCleanupBeforeConversion: () => state.stored !== -1,
      deleteEmptyGroupRecords: () => {
        state.exists = false
        return [tombstone]
      },
    },
  })
}

describe('ClassicGroupManager: conversion detection', () => {
  for (const stored of [0, 5, -2]) {
    it(`defers an empty streams group with stored ${stored}: no records, no answer`, () => {
      const h = streamsGroup({ exists: true, empty: true, stored })
      const r = h.join({})
      assert.equal(r.result.response.conversionRequired, 'streams')
      assert.deepEqual([r.result.records, r.result.completions], [[], []])
      assert.equal(h.manager.hasGroup('g'), false)
    })
  }

  it('converts an empty streams group with stored -1 in the same join (nothing to clean up)', () => {
    const state = { exists: true, empty: true, stored: -1 }
    const h = streamsGroup(state)
    const r = h.join({})
    assert.equal(r.result.response.conversionRequired, null)
    assert.deepEqual(
      r.result.records.map((x) => x.type),
      ['StreamsGroupMetadata', 'GroupMetadata'],
    )
    assert.equal(h.joinResponse(r.token)!.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
    assert.equal(state.exists, false)
  })

  it('converts a deferred group once the service says the cleanup is done', () => {
    const h = streamsGroup({ exists: true, empty: true, stored: -2 })
    const r = h.join({}, { conversionReady: true })
    assert.equal(r.result.response.conversionRequired, null)
    assert.equal(r.result.records[0].type, 'StreamsGroupMetadata')
    assert.ok(h.manager.hasGroup('g'))
  })

  it('a streams group revived before the ready join is refused: INCONSISTENT_GROUP_PROTOCOL, empty member id', () => {
    const h = streamsGroup({ exists: true, empty: false, stored: -2 })
    for (const conversionReady of [false, true]) {
      const r = h.join({ memberId: 'm-1' }, { conversionReady })
      assert.equal(r.result.response.conversionRequired, null)
      assert.deepEqual(r.result.records, [])
      const answer = h.joinResponse(r.token)!
      assert.deepEqual([answer.errorCode, answer.memberId], [ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''])
    }
  })
})
