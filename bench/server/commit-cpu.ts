// CPU time of the coordinator's OffsetCommit write path alone, without the network: the group
// coordinator of an in-process server (coordinator.storage=memory or sqlite) gets the requests
// requests.ts sends, 16 at a time in one turn as a pipelining connection hands them over, for
// `seconds`; prints µs of CPU per commit and per offset. With `--cpu-prof` on the node command line
// the profile shows only this path. With `request` as the fourth argument the whole request goes
// through the server's router instead: the request frame's decoding, the handler (authorization,
// the topics' check), the coordinator, and the answer's encoding into a frame; what is left of a
// request's CPU over sockets is the connection's (reads, framing, the socket writes).
//
//   node --import tsx bench/server/commit-cpu.ts [memory|sqlite] [one|streams] [seconds=3] [coordinator|request]
import { requestFrame } from '../../test/server/wire-client.js'
import { offsetCommitBody, startBenchServer, streamsCommitBody } from './commit-server.js'
import { serverModule } from './target.js'

const storage = process.argv[2] === 'sqlite' ? 'sqlite' : 'memory'
const shape = process.argv[3] ?? 'one'
const seconds = Number(process.argv[4] ?? 3)
const bench = await startBenchServer(storage)
const body = shape === 'streams' ? streamsCommitBody : offsetCommitBody
// The request as the handler hands it to the coordinator (topic ids resolved, none below v10).
const request = {
  ...body,
  retentionTimeMs: -1n,
  topics: body.topics.map((t) => ({ ...t, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' })),
}
const offsets = body.topics.reduce((a, t) => a + t.partitions.length, 0)
const stage = process.argv[5] === 'request' ? 'request' : 'coordinator'
const coordinator = bench.server.context.coordinator
// The whole request: a router with the OffsetCommit handler, bound to the running server's context.
const { ApiRouter } = await serverModule('router.js')
const router = new ApiRouter()
router.register((await serverModule('handlers/008-offset-commit.js')).handler)
router.bind(bench.server.context)
const conn = {
  listenerName: bench.server.listeners[0].listenerName,
  principal: 'User:ANONYMOUS',
  remote: '127.0.0.1:1',
}
const frame = requestFrame(8, 9, 1, body).subarray(4)
/** One request of the chosen stage; resolves to whether it succeeded. */
const commitOnce = async (): Promise<boolean> => {
  if (stage === 'coordinator')
    return (await coordinator.commitOffsets(9, request))[0].partitions[0].errorCode === 0
  const result = router.dispatch(frame, conn)
  const answered = result.kind === 'pending' ? await result.promise : result
  return answered.kind === 'response'
}
const run = async (ms: number): Promise<{ commits: number; cpuUs: number }> => {
  const cpu0 = process.cpuUsage()
  const end = performance.now() + ms
  let commits = 0
  while (performance.now() < end) {
    const answers = await Promise.all(Array.from({ length: 16 }, commitOnce))
    if (!answers.every(Boolean)) throw new Error('the commit failed')
    commits += 16
  }
  const cpu = process.cpuUsage(cpu0)
  return { commits, cpuUs: cpu.user + cpu.system }
}
await run(1000)
const { commits, cpuUs } = await run(seconds * 1000)
console.log(
  `${storage}, ${shape} (${offsets} offsets), ${stage}: ${Math.round(commits / seconds).toLocaleString('en')} commits/s, ${(cpuUs / commits).toFixed(1)} µs CPU/commit, ${(cpuUs / commits / offsets).toFixed(2)} µs CPU/offset`,
)
await bench.close()
