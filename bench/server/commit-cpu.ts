// CPU time of the coordinator's OffsetCommit write path alone, without the network: the group
// coordinator of an in-process server (coordinator.storage=memory or sqlite) gets the requests
// requests.ts sends, 16 at a time in one turn as a pipelining connection hands them over, for
// `seconds`; prints µs of CPU per commit and per offset. With `--cpu-prof` on the node command line
// the profile shows only this path.
//
//   node --import tsx bench/server/commit-cpu.ts [memory|sqlite] [one|streams] [seconds=3]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WireClient } from '../../test/server/wire-client.js'
import { createLogger, parseConfig, startServer } from './target.js'

const storage = process.argv[2] ?? 'memory'
const shape = process.argv[3] ?? 'one'
const seconds = Number(process.argv[4] ?? 3)
const dataDir = mkdtempSync(join(tmpdir(), 'topograph-commit-cpu-'))
const server = await startServer(
  parseConfig({
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'data.dir': dataDir,
    'coordinator.storage': storage,
    'console.listener': 'none',
  }),
  { logger: createLogger({ level: 'silent' }) },
)
const c = await WireClient.connect(server.address.port)
await c.request(19, 7, {
  topics: [
    ...[0, 1].map((i) => ({
      name: `bench-${i}`,
      numPartitions: 3,
      replicationFactor: 1,
      assignments: [],
      configs: [],
    })),
    { name: 'bench-streams', numPartitions: 20, replicationFactor: 1, assignments: [], configs: [] },
  ],
  timeoutMs: 1000,
})
c.close()
const topics =
  shape === 'streams'
    ? [{ name: 'bench-streams', partitions: 20, metadata: 'AQAAAY_streams_task_position_x'.padEnd(32, '=') }]
    : [0, 1].map((t) => ({ name: `bench-${t}`, partitions: 3, metadata: '' }))
const request = {
  groupId: shape === 'streams' ? 'bench-streams-commit' : 'bench-commit',
  generationIdOrMemberEpoch: -1,
  memberId: '',
  groupInstanceId: null,
  retentionTimeMs: -1n,
  topics: topics.map((t) => ({
    name: t.name,
    topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
    partitions: Array.from({ length: t.partitions }, (_, p) => ({
      partitionIndex: p,
      committedOffset: 1000n + BigInt(p),
      committedLeaderEpoch: -1,
      committedMetadata: t.metadata,
    })),
  })),
}
const offsets = topics.reduce((a, t) => a + t.partitions, 0)
const coordinator = server.context.coordinator
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
await server.close()
rmSync(dataDir, { recursive: true, force: true })
