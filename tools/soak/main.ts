/**
 * The soak: a real `topograph start` process under streams members, a consumer group and idempotent
 * producers for a long run, with churn, a plugin outage and a restart.
 *
 *   npm run soak -- [--minutes 30] [--members 10000] [--groups 1000] [--minute-seconds 60]
 *                   [--connections 4] [--load-threads 2] [--producers 2] [--consumers 2] [--churn-percent 1] [--outage-at 10]
 *                   [--outage-minutes 2] [--restart-at 20] [--flat-from 5] [--ceiling-members 2000] [--spread-sends]
 *                   [--override key=value]...
 *                   [--server-log FILE]
 *
 * Defaults are the reliability criteria's: 10,000 members for 30 minutes, 1 % of the members
 * replaced a minute, a 2-minute plugin outage, one clean restart. `--minute-seconds` compresses a
 * "minute" (the churn, the outage and the restart follow it); `--override` sets a server setting.
 * `--load-threads N` spreads the streams members over N worker threads of this process, each an
 * application instance with its own connections (`--connections` is shared out over them, at least
 * one each) and groups; 0 keeps every member on the main thread. `--ceiling-members N` heartbeats a
 * bare server in a process of its own from N members on the same threads, for each row's ceiling
 * (tools/soak/ceiling.ts); 0 runs none. `--spread-sends` moves each phase a load thread keeps by at most
 * a few ms onto the least-taken milliseconds of the interval (tools/soak/send-slots.ts).
 * Prints one row per minute and a verdict per criterion; exits 1 when a criterion other than the
 * flatness ones fails (those depend on the machine and are reported, not enforced). Stopped by
 * SIGINT or SIGTERM, it sends its server SIGTERM and exits 130 or 143.
 */
import { parseArgs } from 'node:util'
import { signalLiveTopographProcesses } from '../../test/helpers/topograph-process.js'
import { formatRow, HEADER, ISSUE_DEFAULTS, runSoak } from './soak.js'

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: String(ISSUE_DEFAULTS.minutes) },
    members: { type: 'string', default: String(ISSUE_DEFAULTS.members) },
    groups: { type: 'string', default: String(ISSUE_DEFAULTS.groups) },
    'minute-seconds': { type: 'string', default: String(ISSUE_DEFAULTS.minuteMs / 1000) },
    connections: { type: 'string', default: String(ISSUE_DEFAULTS.connections) },
    'load-threads': { type: 'string', default: String(ISSUE_DEFAULTS.loadThreads) },
    producers: { type: 'string', default: String(ISSUE_DEFAULTS.producers) },
    consumers: { type: 'string', default: String(ISSUE_DEFAULTS.consumers) },
    'churn-percent': { type: 'string', default: String(ISSUE_DEFAULTS.churnPercent) },
    'outage-at': { type: 'string', default: String(ISSUE_DEFAULTS.outageAt) },
    'outage-minutes': { type: 'string', default: String(ISSUE_DEFAULTS.outageMinutes) },
    'restart-at': { type: 'string', default: String(ISSUE_DEFAULTS.restartAt) },
    'flat-from': { type: 'string', default: String(ISSUE_DEFAULTS.flatFrom) },
    'ceiling-members': { type: 'string', default: String(ISSUE_DEFAULTS.ceilingMembers) },
    'spread-sends': { type: 'boolean', default: false },
    override: { type: 'string', multiple: true, default: [] },
    'server-log': { type: 'string' },
  },
})

const int = (name: keyof typeof values, min: number): number => {
  const n = Number(values[name])
  if (!Number.isFinite(n) || n < min) {
    console.error(`--${name} must be a number ≥ ${min}, got ${values[name]}`)
    process.exit(2)
  }
  return n
}
const server: Record<string, string> = {}
for (const kv of values.override ?? []) {
  const at = kv.indexOf('=')
  if (at <= 0) {
    console.error(`--override takes key=value, got ${kv}`)
    process.exit(2)
  }
  server[kv.slice(0, at)] = kv.slice(at + 1)
}

const options = {
  minutes: int('minutes', 1),
  members: int('members', 1),
  groups: int('groups', 1),
  minuteMs: int('minute-seconds', 1) * 1000,
  connections: int('connections', 1),
  loadThreads: int('load-threads', 0),
  producers: int('producers', 0),
  consumers: int('consumers', 0),
  churnPercent: int('churn-percent', 0),
  outageAt: int('outage-at', 0),
  outageMinutes: int('outage-minutes', 0),
  restartAt: int('restart-at', 0),
  flatFrom: int('flat-from', 0),
  ceilingMembers: int('ceiling-members', 0),
  spreadSends: values['spread-sends'] === true,
  server,
  log: (line: string) => console.log(line),
  serverLogFile: values['server-log'],
}
if (options.groups > options.members) {
  console.error('--groups must not exceed --members')
  process.exit(2)
}
if (options.loadThreads > options.groups) {
  console.error('--load-threads must not exceed --groups')
  process.exit(2)
}
console.log(
  `soak: ${options.members} streams members in ${options.groups} groups on ${options.loadThreads} load thread${options.loadThreads === 1 ? '' : 's'}, ${options.producers} idempotent producers, ` +
    `${options.consumers} consumers; ${options.ceilingMembers} ceiling members${options.spreadSends ? ', sends spread' : ''}; ${options.minutes} minutes of ${options.minuteMs / 1000} s; plugin outage at minute ` +
    `${options.outageAt} for ${options.outageMinutes}; restart at minute ${options.restartAt}; server overrides ${JSON.stringify(server)}`,
)
// Stopped by a signal (a Ctrl-C reaches the whole process group, a `kill` only this process): the
// server gets SIGTERM too instead of being left running (the ceiling's process exits when this one
// does, its IPC channel closed).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    const n = signalLiveTopographProcesses('SIGTERM')
    console.error(`soak: ${signal}: stopping ${n} server process${n === 1 ? '' : 'es'}`)
    process.exit(signal === 'SIGINT' ? 130 : 143)
  })
}
const t0 = performance.now()
const result = await runSoak(options)
console.log(`\n${HEADER}`)
for (const r of result.rows) console.log(formatRow(r))
console.log('\n| Criterion | Verdict | Detail |\n| --- | --- | --- |')
for (const v of result.verdicts) console.log(`| ${v.criterion} | ${v.pass ? 'PASS' : 'FAIL'} | ${v.detail} |`)
console.log(`\ntotals: ${JSON.stringify(result.totals)}`)
console.log(`wall time ${((performance.now() - t0) / 1000).toFixed(0)} s; ${result.pass ? 'PASS' : 'FAIL'}`)
process.exit(result.pass ? 0 : 1)
