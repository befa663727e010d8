// A soak member whose heartbeat failed sends its owned tasks again, as the Java client does: its
// `StreamsGroupHeartbeatRequestManager` resets what it remembers having sent on every failed
// heartbeat (`HeartbeatState.reset()` in `onFailure` and `onErrorResponse`). A heartbeat lost with
// its connection may have been taken by the coordinator, which moved the member's epoch on in the
// lost answer; the retry carries the epoch before, which the coordinator accepts only with the owned
// tasks in it. A member that left them out was fenced (FENCED_MEMBER_EPOCH) where the Java client is
// not. The coordinator here is a stand-in that answers the protocol and drops one answer.
import assert from 'node:assert/strict'
import { createServer, type Server, type Socket } from 'node:net'
import { test } from 'node:test'
import { decodeRequest, encodeResponseFrame } from '../../src/protocol/frames.js'
import * as p from '../../src/protocol/index.js'
import { MemberLoad } from '../../tools/soak/members.js'

interface Seen {
  readonly memberEpoch: number
  readonly activeTasks: readonly { subtopologyId: string; partitions: readonly number[] }[] | null
}

/**
 * A coordinator stand-in: FindCoordinator names itself; the join gets epoch 1 and task 0_0; the
 * member's next heartbeat (reporting the task) is answered; the one after it, a steady heartbeat
 * without tasks, is taken with a new epoch, 2, and its answer lost with the connection
 * (`dropAnswer`), or answered with an error and not taken (`answerError`). Every heartbeat after
 * that is answered when it carries the current epoch, or the one before with its owned tasks, and
 * FENCED_MEMBER_EPOCH otherwise, as the coordinator's epoch check does.
 */
function coordinator(fault: { dropAnswer: true } | { answerError: number }) {
  const seen: Seen[] = []
  const sockets: Socket[] = []
  let epoch = 0
  const tasks = [{ subtopologyId: '0', partitions: [0] }]
  const server: Server = createServer((s) => {
    sockets.push(s)
    s.on('error', () => undefined)
    let buf = Buffer.alloc(0)
    s.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const frame = buf.subarray(4, 4 + buf.readInt32BE(0))
        buf = buf.subarray(4 + frame.length)
        const req = decodeRequest(frame)
        const id = req.header.correlationId
        if (req.apiKey === 10) {
          const port = (server.address() as { port: number }).port
          s.write(
            encodeResponseFrame(
              10,
              req.apiVersion,
              id,
              p.createFindCoordinatorResponse({
                coordinators: [
                  p.createFindCoordinatorResponseCoordinator({
                    key: req.body.coordinatorKeys[0],
                    nodeId: 1,
                    host: '127.0.0.1',
                    port,
                  }),
                ],
              }),
            ),
          )
          continue
        }
        if (req.apiKey !== 88) continue
        const body = req.body
        seen.push({ memberEpoch: body.memberEpoch, activeTasks: body.activeTasks })
        const answer = (fields: Partial<p.StreamsGroupHeartbeatResponse>) =>
          s.write(
            encodeResponseFrame(
              88,
              req.apiVersion,
              id,
              p.createStreamsGroupHeartbeatResponse({
                memberId: body.memberId,
                memberEpoch: epoch,
                heartbeatIntervalMs: 50,
                ...fields,
              }),
            ),
          )
        if (seen.length === 1) {
          epoch = 1
          answer({ activeTasks: tasks, standbyTasks: [], warmupTasks: [] })
        } else if (seen.length === 2) {
          answer({})
        } else if (seen.length === 3) {
          if ('dropAnswer' in fault) {
            epoch = 2
            s.destroy()
          } else answer({ errorCode: fault.answerError })
        } else if (
          body.memberEpoch === epoch ||
          (body.memberEpoch === epoch - 1 && body.activeTasks !== null)
        ) {
          answer({})
        } else {
          answer({ errorCode: p.ErrorCode.FENCED_MEMBER_EPOCH, memberEpoch: body.memberEpoch })
        }
      }
    })
  })
  return { server, seen, sockets }
}

async function run(fault: { dropAnswer: true } | { answerError: number }): Promise<Seen[]> {
  const c = coordinator(fault)
  await new Promise<void>((resolve) => c.server.listen(0, '127.0.0.1', resolve))
  const port = (c.server.address() as { port: number }).port
  const load = new MemberLoad(
    {
      port,
      index: 0,
      groups: [0],
      connections: 1,
      members: 1,
      totalGroups: 1,
      sessionTimeoutMs: 45_000,
      ceilingMembers: 0,
      ceilingIntervalMs: 50,
    },
    () => undefined,
  )
  try {
    await load.join()
    const deadline = Date.now() + 20_000
    while (c.seen.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    return c.seen
  } finally {
    load.stop()
    for (const s of c.sockets) s.destroy()
    await new Promise((r) => c.server.close(r))
  }
}

test('a heartbeat whose answer was lost with its connection: the retry carries the owned tasks', {
  timeout: 30_000,
}, async () => {
  const seen = await run({ dropAnswer: true })
  assert.ok(seen.length >= 6, `only ${seen.length} heartbeats`)
  // The join, the heartbeat reporting the task, a steady one (its answer lost), then the retry.
  assert.equal(seen[2].activeTasks, null)
  assert.equal(seen[3].memberEpoch, 1)
  assert.deepEqual(seen[3].activeTasks, [{ subtopologyId: '0', partitions: [0] }])
  // Taken with its tasks, the retry kept the member: it never went back to epoch 0 (a rejoin).
  assert.ok(
    seen.slice(1).every((h) => h.memberEpoch > 0),
    `epochs sent: ${seen.map((h) => h.memberEpoch).join(', ')}`,
  )
})

test('a heartbeat answered with a retriable error: the next one carries the owned tasks', {
  timeout: 30_000,
}, async () => {
  const seen = await run({ answerError: p.ErrorCode.COORDINATOR_LOAD_IN_PROGRESS })
  assert.ok(seen.length >= 6, `only ${seen.length} heartbeats`)
  assert.equal(seen[2].activeTasks, null)
  assert.deepEqual(seen[3].activeTasks, [{ subtopologyId: '0', partitions: [0] }])
  // Answered without an error, the heartbeat after it reports nothing new.
  assert.equal(seen[4].activeTasks, null)
})
