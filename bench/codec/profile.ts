/**
 * A focused decode loop for profiling one message without the bench harness:
 *   node --cpu-prof --import tsx bench/codec/profile.ts metadata|join|join200 [seconds]
 * join200 is the JoinGroup response with 200-byte member metadata instead of 64 (bytes fields above
 * V8's 64-byte on-heap limit take the Reader's slab path).
 * Prints ops per second of this process's CPU time (steadier than wall time on a shared machine);
 * the .cpuprofile lands in the working directory.
 */
import * as p from '../../src/protocol/index.js'
import * as m from './messages.js'

const cases: Record<string, () => unknown> = {
  metadata: (
    (b) => () =>
      p.decodeMetadataResponse(b, 12)
  )(p.encodeMetadataResponse(m.metadataResponse, 12)),
  join: (
    (b) => () =>
      p.decodeJoinGroupResponse(b, 9)
  )(p.encodeJoinGroupResponse(m.joinGroupResponse, 9)),
  join200: (
    (b) => () =>
      p.decodeJoinGroupResponse(b, 9)
  )(
    p.encodeJoinGroupResponse(
      {
        ...m.joinGroupResponse,
        members: m.joinGroupResponse.members.map((x) => ({
          ...x,
          metadata: Uint8Array.from({ length: 200 }, (_, i) => i),
        })),
      },
      9,
    ),
  ),
}

const name = process.argv[2] ?? 'metadata'
const run = cases[name]
if (run === undefined) throw new Error(`unknown case ${name}; one of ${Object.keys(cases).join(', ')}`)
const ms = Number(process.argv[3] ?? 3) * 1000
const t0 = performance.now()
const c0 = process.cpuUsage()
let n = 0
while (performance.now() - t0 < ms) {
  for (let i = 0; i < 100; i++) run()
  n += 100
}
const c = process.cpuUsage(c0)
const cpuS = (c.user + c.system) / 1e6
console.log(`${name}: ${Math.round(n / cpuS).toLocaleString('en-US')} ops per CPU second`)
