// Steady StreamsGroupHeartbeats against two servers in this one process with the same members:
// one whose members joined by their own requests (live), and one started on a data directory whose
// members joined a server since closed, so its state is what loading rebuilt by replay (loaded), as
// a restarted server's. Both run the same compiled code in the same process, so what differs
// between them is the state, not the compiler's warm-up.
//
// 1,000 groups × 10 members (bench/streams/join.ts), coordinator.storage=sqlite, the benchmarks'
// session timeout of 10 minutes (no timer fires). Each round runs one open-loop load at `rate`
// heartbeats a second for `seconds` against each server, alternating which goes first; the server
// CPU time (this process's) per answered heartbeat and the load's p99 are printed per round, with
// the medians and the loaded server's ÷ the live one's.
//
//   node --import tsx bench/streams/loaded-heartbeat.ts [rate=4000] [seconds=5] [rounds=10]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { requestFrame } from '../../test/server/wire-client.js'
import { heartbeatBody } from '../../test/helpers/streams-member.js'
import { shuffled } from '../server/heartbeat-bench.js'
import { type Measured, median, runLoad, startLoadProcesses } from '../server/load.js'
import type { RunningServer } from '../server/target.js'
import { ERROR_CODE_AT, GROUPS, joinedServer, type Member, serverOn } from './join.js'

const rate = Number(process.argv[2] ?? 4000)
const seconds = Number(process.argv[3] ?? 5)
const rounds = Number(process.argv[4] ?? 10)
if (!(rate > 0) || !(seconds > 0) || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: loaded-heartbeat.ts [rate>0] [seconds>0] [rounds>=1]')
  process.exit(2)
}

startLoadProcesses(1)

const fresh = () => mkdtempSync(join(tmpdir(), 'topograph-loaded-heartbeat-'))
const live = await joinedServer(fresh())
const other = await joinedServer(fresh())
await other.server.close()
const loaded = { ...other, server: await serverOn(other.dataDir) }
// The same member ids, epochs and tasks on both (the joins are deterministic): the frames fit both.
const epochs = (ms: readonly Member[]) => new Map(ms.map((m) => [m.memberId, m.epoch]))
const liveEpochs = epochs(live.members)
for (const [id, e] of epochs(other.members))
  if (liveEpochs.get(id) !== e) throw new Error(`${id}: epoch ${e} against ${liveEpochs.get(id)}`)
const frames = shuffled(live.members).map((m, i) => requestFrame(88, 1, i + 1, heartbeatBody(m)))

async function measure(server: RunningServer): Promise<Measured> {
  const r = await runLoad({
    port: server.address.port,
    frames,
    seconds,
    warmupSeconds: 1,
    connections: 4,
    depth: 16,
    rate,
    maxInFlight: 1000,
    errorCodeAt: ERROR_CODE_AT,
  })
  if (r.errors > 0) throw new Error(`${r.errors} answers with an error code (first ${r.firstErrorCode})`)
  return r
}

// One unmeasured pass over each first: the loaded server's first heartbeat of each group
// configures its topology again (soft state loading does not rebuild).
await measure(live.server)
await measure(loaded.server)
const results: { live: Measured; loaded: Measured }[] = []
for (let r = 0; r < rounds; r++) {
  let a: Measured
  let b: Measured
  if (r % 2 === 0) {
    a = await measure(live.server)
    b = await measure(loaded.server)
  } else {
    b = await measure(loaded.server)
    a = await measure(live.server)
  }
  results.push({ live: a, loaded: b })
  console.log(
    `round ${r + 1}: CPU µs/heartbeat live ${a.cpuUsPerRequest.toFixed(1)}, loaded ${b.cpuUsPerRequest.toFixed(1)}; p99 ms live ${a.p99.toFixed(2)}, loaded ${b.p99.toFixed(2)}`,
  )
}
const m = (f: (x: { live: Measured; loaded: Measured }) => number) => median(results.map(f))
console.log(
  `${GROUPS * 10} members, ${rate}/s for ${seconds} s, ${rounds} rounds: CPU µs/heartbeat live ${m((x) => x.live.cpuUsPerRequest).toFixed(1)}, ` +
    `loaded ${m((x) => x.loaded.cpuUsPerRequest).toFixed(1)} (loaded ÷ live median ${m((x) => x.loaded.cpuUsPerRequest / x.live.cpuUsPerRequest).toFixed(3)}); ` +
    `p99 ms live ${m((x) => x.live.p99).toFixed(2)}, loaded ${m((x) => x.loaded.p99).toFixed(2)}; Node ${process.version}`,
)
await live.server.close()
await loaded.server.close()
rmSync(live.dataDir, { recursive: true, force: true })
rmSync(loaded.dataDir, { recursive: true, force: true })
