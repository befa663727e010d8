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
//
// BENCH_ALLOCATIONS=1 also prints the bytes allocated per commit and the functions that allocated
// them most (V8's sampling heap profiler, one sample per 4 KiB, objects the GC has taken counted
// too): unlike CPU time, the machine's load does not change them.
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
interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: ProfileNode[]
}
/** Runs `work` under the sampling heap profiler when BENCH_ALLOCATIONS=1 and prints what it allocated. */
async function allocationsOf<T extends { commits: number }>(work: () => Promise<T>): Promise<T> {
  if (process.env.BENCH_ALLOCATIONS !== '1') return work()
  const { Session } = await import('node:inspector/promises')
  const session = new Session()
  session.connect()
  await session.post('HeapProfiler.enable')
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never)
  const result = await work()
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: ProfileNode }
  }
  session.disconnect()
  const bySite = new Map<string, number>()
  let total = 0
  const walk = (n: ProfileNode) => {
    const url = n.callFrame.url.replace(/^.*\/(src|node_modules|bench)\//, '$1/')
    const site = `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`
    bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize)
    total += n.selfSize
    for (const c of n.children) walk(c)
  }
  walk(profile.head)
  console.log(`${(total / result.commits).toFixed(0)} bytes allocated per commit (sampled); most by:`)
  for (const [site, bytes] of [...bySite]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(process.env.BENCH_ALLOCATIONS_TOP ?? 12)))
    console.log(`  ${(bytes / result.commits).toFixed(0).padStart(6)} B  ${site}`)
  return result
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
const { commits, cpuUs } = await allocationsOf(() => run(seconds * 1000))
console.log(
  `${storage}, ${shape} (${offsets} offsets), ${stage}: ${Math.round(commits / seconds).toLocaleString('en')} commits/s, ${(cpuUs / commits).toFixed(1)} µs CPU/commit, ${(cpuUs / commits / offsets).toFixed(2)} µs CPU/offset`,
)
await bench.close()
