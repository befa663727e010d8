// A restarted server's steady StreamsGroupHeartbeats from its start, in a fresh process: what the
// compiler's warm-up costs against the state loading rebuilt. `prepare` joins 1,000 groups × 10
// members by requests on DIR (bench/streams/join.ts) and keeps the members beside it; `serve`
// starts a server on DIR in this fresh process (loading it by replay, as a restart does) and runs
// `windows` open-loop loads of `seconds` each at `rate` heartbeats a second back to back, printing
// the server's CPU time (this process's) per heartbeat and the p99 of each. With `warm`, the process
// first serves the same heartbeats to a scratch server of its own for `warmSeconds` (joined by
// requests, the same code path warmed), closes it, and only then starts the server on DIR. `live`
// joins the members on the empty DIR and runs the same windows against that server from the end
// of its joins (no restart). `sessionMs` sets the streams session timeout of the measured server
// (the benchmarks' 10 minutes by default; the product's is 45 s, whose timers then fire).
//
//   node --import tsx bench/streams/restart-heartbeat.ts prepare DIR
//   node --import tsx bench/streams/restart-heartbeat.ts serve|live DIR [cold|warm] [rate=4000] [seconds=3] [windows=40] [warmSeconds=30] [sessionMs=600000]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { requestFrame } from '../../test/server/wire-client.js'
import { heartbeatBody } from '../../test/helpers/streams-member.js'
import { shuffled } from '../server/heartbeat-bench.js'
import { runLoad, startLoadProcesses } from '../server/load.js'
import type { RunningServer } from '../server/target.js'
import { ERROR_CODE_AT, joinedServer, type Member, serverOn } from './join.js'

const [mode, dir] = process.argv.slice(2, 4)
if ((mode !== 'prepare' && mode !== 'serve' && mode !== 'live') || dir === undefined) {
  console.error(
    'usage: restart-heartbeat.ts prepare DIR | serve|live DIR [cold|warm] [rate] [seconds] [windows] [warmSeconds] [sessionMs]',
  )
  process.exit(2)
}
const membersFile = `${dir}.members.json`

if (mode === 'prepare') {
  const { server, members } = await joinedServer(dir)
  await server.close()
  writeFileSync(membersFile, JSON.stringify(members))
  console.log(`${members.length} members joined on ${dir}`)
} else {
  const warm = process.argv[4] === 'warm'
  const rate = Number(process.argv[5] ?? 4000)
  const seconds = Number(process.argv[6] ?? 3)
  const windows = Number(process.argv[7] ?? 40)
  const warmSeconds = Number(process.argv[8] ?? 30)
  const session = { 'group.streams.session.timeout.ms': process.argv[9] ?? '600000' }
  startLoadProcesses(1)
  const steady = (ms: readonly Member[]) =>
    shuffled(ms).map((m, i) => requestFrame(88, 1, i + 1, heartbeatBody(m)))
  const load = (port: number, frames: Buffer[], s: number) =>
    runLoad({
      port,
      frames,
      seconds: s,
      warmupSeconds: 0,
      connections: 4,
      depth: 16,
      rate,
      maxInFlight: 1000,
      errorCodeAt: ERROR_CODE_AT,
    }).then((r) => {
      if (r.errors > 0) throw new Error(`${r.errors} answers with an error code (first ${r.firstErrorCode})`)
      return r
    })
  if (warm) {
    const scratch = mkdtempSync(join(tmpdir(), 'topograph-restart-heartbeat-warm-'))
    const s = await joinedServer(scratch, 200)
    await load(s.server.address.port, steady(s.members), warmSeconds)
    await s.server.close()
    rmSync(scratch, { recursive: true, force: true })
  }
  const t0 = performance.now()
  let server: RunningServer
  let members: Member[]
  if (mode === 'live') ({ server, members } = await joinedServer(dir, undefined, session))
  else {
    server = await serverOn(dir, session)
    members = JSON.parse(readFileSync(membersFile, 'utf8')) as Member[]
  }
  const startMs = performance.now() - t0
  const frames = steady(members)
  const rows: string[] = []
  for (let w = 0; w < windows; w++) {
    const r = await load(server.address.port, frames, seconds)
    rows.push(
      `${((performance.now() - t0) / 1000).toFixed(0)}s ${r.cpuUsPerRequest.toFixed(1)}µs p99 ${r.p99.toFixed(2)}`,
    )
    console.log(`window ${w + 1}: ${rows[w]}`)
  }
  await server.close()
  console.log(
    `${mode === 'live' ? 'live server' : warm ? 'warm process' : 'cold process'}, ${mode === 'live' ? 'joined' : 'loaded'} in ${startMs.toFixed(0)} ms, ${rate}/s, windows of ${seconds} s: ${rows.join(' | ')}`,
  )
}
