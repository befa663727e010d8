// Classic groups over real TCP while the coordinator's record store fails every append for a while
// (a database that is down), then recovers: the joins made meanwhile are answered with the storage
// error, and the group does not stay wedged afterwards.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { RecordStore } from '../../src/coordinator/storage/types.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import { OpenClients, startTestServer, type TestServer } from '../server/harness.js'
import type { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

const enc = (s: string): Uint8Array => new TextEncoder().encode(s)

/** Every append fails while set (the fault being injected). */
let storeDown = false

/** Wraps the server's record store so that its appends fail while `storeDown` is set. */
function failWhileDown(store: RecordStore): void {
  const down = () => Promise.reject(new Error('the record store is down'))
  const append = store.append.bind(store)
  store.append = (shard, records) => (storeDown ? down() : append(shard, records))
  if (store.appendBatches !== undefined) {
    const appendBatches = store.appendBatches.bind(store)
    store.appendBatches = (batches) => (storeDown ? down() : appendBatches(batches))
  }
}

/** The request's answer, or a failure once `ms` passed without one (the client's request timeout). */
async function answered<T>(what: string, p: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} was not answered within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([p, timeout])
  } finally {
    clearTimeout(timer)
  }
}

describe('classic groups while the record store fails appends', { timeout: 60_000 }, () => {
  let ts: TestServer
  const clients = new OpenClients()
  const connect = () => clients.connect(ts.port)
  before(async () => {
    ts = await startTestServer(
      { 'group.initial.rebalance.delay.ms': '100', 'group.min.session.timeout.ms': '100' },
      {
        extensions: [
          {
            name: 'failing-store',
            async start(ctx) {
              failWhileDown(ctx.store)
              return { close: async () => {} }
            },
          },
        ],
      },
    )
  })
  after(async () => {
    storeDown = false
    clients.closeAll()
    await ts.stop()
  })

  const join = (c: WireClient, groupId: string, memberId: string, groupInstanceId: string | null) =>
    c
      .request<AnyBody>(11, 9, {
        groupId,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId,
        groupInstanceId,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: enc('sub') }],
        reason: null,
      })
      .then((r) => r.body)

  const describeGroup = async (c: WireClient, groupId: string): Promise<AnyBody> => {
    const { body } = await c.request<AnyBody>(15, 5, {
      groups: [groupId],
      includeAuthorizedOperations: false,
    })
    return body.groups[0]
  }

  test('a join that created the group while the store was down leaves nothing behind', async () => {
    const c = await connect()
    storeDown = true
    const failed = await answered('the JoinGroup', join(c, 'cg5', '', 'instance-1'))
    assert.notEqual(failed.errorCode, ErrorCode.NONE, 'the join could not be stored')
    // The member gives up and leaves (as a closing client does).
    const left = await answered(
      'the LeaveGroup',
      c.request<AnyBody>(13, 5, {
        groupId: 'cg5',
        members: [{ memberId: '', groupInstanceId: 'instance-1', reason: null }],
      }),
    )
    assert.ok(left.body !== undefined)
    storeDown = false

    // With the store healthy again, a new member forms the group.
    const d = await describeGroup(c, 'cg5')
    assert.ok(['Dead', 'Empty'].includes(d.groupState), `the group is ${d.groupState}`)
    const b = await connect()
    const first = await answered('the first JoinGroup', join(b, 'cg5', '', null))
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
    const joined = await answered('the JoinGroup', join(b, 'cg5', first.memberId, null))
    assert.deepEqual([joined.errorCode, joined.leader], [ErrorCode.NONE, first.memberId])
  })

  test('a static member that joined while the store was down is answered once it rejoins', async () => {
    const c = await connect()
    storeDown = true
    const failed = await answered('the JoinGroup', join(c, 'cg6', '', 'instance-1'))
    assert.notEqual(failed.errorCode, ErrorCode.NONE)
    storeDown = false
    const rejoined = await answered('the JoinGroup', join(c, 'cg6', '', 'instance-1'))
    assert.equal(rejoined.errorCode, ErrorCode.NONE)
    assert.equal(rejoined.leader, rejoined.memberId)
  })

  test('a dynamic member whose group was created while the store was down rejoins at once', async () => {
    const c = await connect()
    storeDown = true
    const failed = await answered('the JoinGroup', join(c, 'cg7', '', null))
    assert.notEqual(failed.errorCode, ErrorCode.NONE)
    storeDown = false
    const first = await answered('the first JoinGroup', join(c, 'cg7', '', null))
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
    const joined = await answered('the JoinGroup', join(c, 'cg7', first.memberId, null))
    assert.equal(joined.errorCode, ErrorCode.NONE)
    const synced = await answered(
      'the SyncGroup',
      c.request<AnyBody>(14, 5, {
        groupId: 'cg7',
        generationId: joined.generationId,
        memberId: first.memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId: first.memberId, assignment: enc('a') }],
      }),
    )
    assert.equal(synced.body.errorCode, ErrorCode.NONE)
    // A rejoin (the leader's, e.g. after a metadata change) completes at once: no member that never
    // came back holds the join phase open for a whole rebalance timeout.
    const again = await answered('the rejoin', join(c, 'cg7', first.memberId, null), 2000)
    assert.deepEqual([again.errorCode, again.generationId], [ErrorCode.NONE, joined.generationId + 1])
  })
})
