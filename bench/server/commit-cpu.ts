// CPU time of the coordinator's OffsetCommit write path alone, without the network: the group
// coordinator of an in-process server (coordinator.storage=memory or sqlite) gets the requests
// requests.ts sends, 16 at a time in one turn as a pipelining connection hands them over, for
// `seconds`; prints µs of CPU per commit and per offset. With `--cpu-prof` on the node command line
// the profile shows only this path.
//
//   node --import tsx bench/server/commit-cpu.ts [memory|sqlite] [one|streams] [seconds=3]
import { offsetCommitBody, startBenchServer, streamsCommitBody } from './commit-server.js'

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
const coordinator = bench.server.context.coordinator
const run = async (ms: number): Promise<{ commits: number; cpuUs: number }> => {
  const cpu0 = process.cpuUsage()
  const end = performance.now() + ms
  let commits = 0
  while (performance.now() < end) {
    const answers = await Promise.all(Array.from({ length: 16 }, () => coordinator.commitOffsets(9, request)))
    if (answers[0][0].partitions[0].errorCode !== 0) throw new Error('the commit failed')
    commits += 16
  }
  const cpu = process.cpuUsage(cpu0)
  return { commits, cpuUs: cpu.user + cpu.system }
}
await run(1000)
const { commits, cpuUs } = await run(seconds * 1000)
console.log(
  `${storage}, ${shape} (${offsets} offsets): ${Math.round(commits / seconds).toLocaleString('en')} commits/s, ${(cpuUs / commits).toFixed(1)} µs CPU/commit, ${(cpuUs / commits / offsets).toFixed(2)} µs CPU/offset`,
)
await bench.close()
