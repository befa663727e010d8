import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clientHostOf, pipelinedRequest, type RequestContext } from '../../src/server/router.js'
import { produceRequest } from '../helpers/data-plane.js'
import { requestFrame } from './wire-client.js'

const at = (remote: string) => clientHostOf({ remote } as RequestContext)

test('clientHostOf: Kafka\'s "/address" without the port, IPv4-mapped IPv6 as IPv4, the same answer on every call', () => {
  for (let round = 0; round < 2; round++) {
    assert.equal(at('127.0.0.1:50123'), '/127.0.0.1')
    assert.equal(at('::1:50123'), '/::1')
    assert.equal(at('[::1]:50123'), '/::1')
    assert.equal(at('::ffff:10.0.0.7:9092'), '/10.0.0.7')
    assert.equal(at('undefined'), '')
    assert.equal(at(''), '')
  }
  // More remotes than are kept: answers stay right after the cache is cleared.
  for (let port = 0; port < 3000; port++) assert.equal(at(`10.1.2.3:${port}`), '/10.1.2.3')
  assert.equal(at('127.0.0.1:50123'), '/127.0.0.1')
})

test('pipelinedRequest: OffsetCommit, OffsetFetch and Produce without a transactional id, in every header layout', () => {
  // requestFrame's bytes carry the size prefix; the connection asks with the frame after it.
  const body = (f: Uint8Array) => f.subarray(4)
  const produce = (version: number, transactionalId: string | null, clientId = 'c') =>
    body(requestFrame(0, version, 7, produceRequest([], 1, transactionalId), clientId))
  for (const version of [3, 8, 9, 12, 13]) {
    assert.equal(pipelinedRequest(produce(version, null)), true, `v${version} without`)
    assert.equal(pipelinedRequest(produce(version, 'tx')), false, `v${version} with`)
    assert.equal(pipelinedRequest(produce(version, '')), false, `v${version} with an empty id`)
    assert.equal(
      pipelinedRequest(produce(version, null, 'x'.repeat(300))),
      true,
      `v${version}, long client id`,
    )
  }
  // Tagged fields in a flexible header are skipped (one tag, 5, of two bytes).
  const tagged = (transactionalId: string | null) => {
    const f = produce(9, transactionalId)
    const at = 2 + 2 + 4 + 2 + 1
    return Buffer.concat([f.subarray(0, at), Buffer.from([1, 5, 2, 0xaa, 0xbb]), f.subarray(at + 1)])
  }
  assert.equal(pipelinedRequest(tagged(null)), true)
  assert.equal(pipelinedRequest(tagged('tx')), false)
  // A truncated frame is not pipelined.
  assert.equal(pipelinedRequest(produce(9, null).subarray(0, 12)), false)
  const other = (apiKey: number, version: number) => body(requestFrame(apiKey, version, 1, {}))
  assert.equal(pipelinedRequest(other(8, 9)), true)
  assert.equal(pipelinedRequest(other(9, 9)), true)
  assert.equal(pipelinedRequest(other(1, 12)), false)
})
