/**
 * bench/isolation: the heartbeat latency of streams groups while one other group's
 * topology-description plugin calls hang, against the same load without the hung calls.
 *
 * A real `topograph start` process with a plugin whose calls for chosen groups wait until released
 * (bench/isolation/hanging-plugin.ts) serves GROUPS streams groups of one member each. The load: every member
 * heartbeats in a loop (its steady heartbeat, one in flight per member), for PHASE_MS per phase;
 * the round trips are recorded. Phases alternate, ROUNDS times each:
 *   - baseline: nothing else happens;
 *   - hung: group `hung` has a push (setTopology), a describe with the description (getTopology)
 *     and a DeleteGroups (deleteTopology) waiting on plugin calls that never complete, each on a
 *     connection of its own, for the whole phase; they complete when the hang is lifted.
 * A first, uncounted phase warms the server up. Printed per phase: heartbeats answered, p50, p99; then the median p99 of each kind and their
 * ratio (the isolation target: hung / baseline ≤ 1.2).
 *
 * Run: npm run bench -- isolation   (GROUPS, PHASE_MS, ROUNDS override the defaults)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FAST_GROUPS, joinMember, push, wireDescription } from '../../test/helpers/kip1331.js'
import type { StreamsMember } from '../../test/helpers/streams-member.js'
import { startTopographProcess } from '../../test/helpers/topograph-process.js'
import { requestFrame, WireClient } from '../../test/server/wire-client.js'

const GROUPS = Number(process.env.GROUPS ?? 50)
const PHASE_MS = Number(process.env.PHASE_MS ?? 5000)
const ROUNDS = Number(process.env.ROUNDS ?? 5)

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN
}
/** A request whose answer waits on a hung plugin call: no timeout short of the whole run. */
async function hangingRequest(c: WireClient, apiKey: number, version: number, body: unknown): Promise<void> {
  c.write(requestFrame(apiKey, version, 1, body))
  if ((await c.nextFrame(600_000)) === null) throw new Error(`API ${apiKey}: connection closed`)
}
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const dataDir = mkdtempSync(join(tmpdir(), 'topograph-bench-isolation-'))
const hangFile = join(dataDir, 'hang.json')
const hang = (groups: string[]) => writeFileSync(hangFile, JSON.stringify(groups))
hang([])
const server = await startTopographProcess({
  'data.dir': dataDir,
  'coordinator.storage': 'sqlite',
  ...FAST_GROUPS,
  'group.streams.topology.description.plugin.class': 'bench/isolation/hanging-plugin.ts',
  'bench.hang.file': hangFile,
  // No member expires while a phase runs; no cleanup cycle meanwhile.
  'group.streams.session.timeout.ms': '60000',
  'group.streams.max.session.timeout.ms': '60000',
  'offsets.retention.check.interval.ms': '3600000',
  'offsets.topic.num.partitions': '10',
})
const members: StreamsMember[] = []
const extra: WireClient[] = []
try {
  for (let i = 0; i < GROUPS; i++) {
    const m = await joinMember(server.port, `iso-${i}`)
    await m.heartbeat()
    members.push(m)
  }
  const hung = await joinMember(server.port, 'hung')
  await hung.heartbeat()
  members.push(hung)
  // Every group's description stored once, so the steady heartbeats solicit nothing.
  const pusher = await WireClient.connect(server.port)
  extra.push(pusher)
  for (const m of members) await push(pusher, m.groupId, m.memberId, 0)

  const load = async (): Promise<number[]> => {
    const latencies: number[] = []
    const end = performance.now() + PHASE_MS
    await Promise.all(
      members
        .filter((m) => m.groupId !== 'hung')
        .map(async (m) => {
          while (performance.now() < end) {
            const t = performance.now()
            const r = await m.heartbeat()
            if (r.errorCode !== 0) throw new Error(`heartbeat of ${m.groupId}: error ${r.errorCode}`)
            latencies.push(performance.now() - t)
          }
        }),
    )
    return latencies.sort((a, b) => a - b)
  }

  // A first phase warms the server (JIT, caches) and is not counted.
  await load()
  const p99s: Record<'baseline' | 'hung', number[]> = { baseline: [], hung: [] }
  console.log(`${GROUPS} groups heartbeating, phases of ${PHASE_MS} ms, ${ROUNDS} rounds.\n`)
  console.log('| phase | heartbeats | p50 ms | p99 ms |')
  console.log('|---|---|---|---|')
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ['baseline', 'hung'] as const) {
      const pending: Promise<unknown>[] = []
      if (kind === 'hung') {
        hang(['hung'])
        const [a, b, c] = await Promise.all([0, 1, 2].map(() => WireClient.connect(server.port)))
        extra.push(a, b, c)
        pending.push(
          hangingRequest(a, 93, 0, {
            groupId: 'hung',
            memberId: hung.memberId,
            topologyEpoch: 0,
            topologyDescription: wireDescription(),
          }),
        )
        pending.push(
          hangingRequest(b, 89, 1, {
            groupIds: ['hung'],
            includeAuthorizedOperations: false,
            includeTopologyDescription: true,
          }),
        )
        // Let the push and describe reach the plugin before the load starts.
        await new Promise((r) => setTimeout(r, 200))
      }
      const latencies = await load()
      const p99 = percentile(latencies, 0.99)
      p99s[kind].push(p99)
      console.log(
        `| ${kind} ${round + 1} | ${latencies.length} | ${percentile(latencies, 0.5).toFixed(2)} | ${p99.toFixed(2)} |`,
      )
      if (kind === 'hung') {
        hang([])
        await Promise.all(pending)
      }
    }
  }
  // A DeleteGroups of the hung group last (it removes the group): its deleteTopology hangs while
  // one more load phase runs.
  hang(['hung'])
  const deleter = await WireClient.connect(server.port)
  extra.push(deleter)
  await hung.leave()
  const deleting = hangingRequest(deleter, 42, 3, { groupsNames: ['hung'] })
  await new Promise((r) => setTimeout(r, 200))
  const during = await load()
  console.log(
    `| hung DeleteGroups | ${during.length} | ${percentile(during, 0.5).toFixed(2)} | ${percentile(during, 0.99).toFixed(2)} |`,
  )
  hang([])
  await deleting
  const base = median(p99s.baseline)
  const withHang = median(p99s.hung)
  console.log(
    `\nmedian p99: baseline ${base.toFixed(2)} ms, with hung plugin calls ${withHang.toFixed(2)} ms, ratio ${(withHang / base).toFixed(2)}`,
  )
} finally {
  for (const m of members) m.close()
  for (const c of extra) c.close()
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
