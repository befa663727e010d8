// The server's own CPU per request, without the network: the router's dispatch (header and body
// decoding, the handler, the answer's encoding) of Metadata v12 (10 topics × 3 partitions, all
// topics) and ApiVersions v3, called in a loop in this process, CPU time (process.cpuUsage) per
// call. The figure the sockets' figures in requests.ts sit on, and one a loaded machine moves far
// less than requests per second.
//
//   node --import tsx bench/server/dispatch.ts [calls=500000] [rounds=3]
//
// TOPOGRAPH_BENCH_BUILD=dist uses the compiled server in dist/ (after `npm run build`);
// TOPOGRAPH_BENCH_ROOT=<dir> takes src/ or dist/ from another checkout of the repository instead of
// this one (a build before a change, for a before/after in one sitting).
import { rmSync } from 'node:fs'
import { requestFrame, WireClient } from '../../test/server/wire-client.js'
import { at, buildName as build, root, startInProcess } from './in-process.js'

const calls = Number(process.argv[2] ?? 500_000)
const rounds = Number(process.argv[3] ?? 3)
const { ApiRouter } = await at('server/router.js')
const metadata = await at('server/handlers/003-metadata.js')
const apiVersions = await at('server/handlers/018-api-versions.js')

const { server, dataDir } = await startInProcess('topograph-dispatch-')
const c = await WireClient.connect(server.address.port)
await c.request(19, 7, {
  topics: Array.from({ length: 10 }, (_, i) => ({
    name: `bench-${i}`,
    numPartitions: 3,
    replicationFactor: 1,
    assignments: [],
    configs: [],
  })),
  timeoutMs: 1000,
})
c.close()
// A router with the two handlers, bound to the running server's context.
const router = new ApiRouter()
router.register(metadata.handler)
router.register(apiVersions.handler)
router.bind(server.context)
const conn = {
  listenerName: server.listeners[0].listenerName,
  principal: 'User:ANONYMOUS',
  remote: '127.0.0.1:1',
}
const frames: [string, Buffer][] = [
  ['Metadata v12 (10 topics × 3 partitions)', requestFrame(3, 12, 1, { topics: null }).subarray(4)],
  [
    'ApiVersions v3',
    requestFrame(18, 3, 1, { clientSoftwareName: 'bench', clientSoftwareVersion: '1' }).subarray(4),
  ],
]
console.log(`root ${root}, ${build}; ${calls.toLocaleString('en')} calls a round, ${rounds} rounds`)
for (const [name, frame] of frames) {
  let bytes = 0
  const perCall: number[] = []
  for (let i = 0; i < calls / 4; i++) bytes += router.dispatch(frame, conn).bytes.length
  for (let r = 0; r < rounds; r++) {
    const t0 = process.cpuUsage()
    for (let i = 0; i < calls; i++) bytes += router.dispatch(frame, conn).bytes.length
    const d = process.cpuUsage(t0)
    perCall.push((d.user + d.system) / calls)
  }
  const sorted = [...perCall].sort((a, b) => a - b)
  console.log(
    `${name}: ${sorted[Math.floor(rounds / 2)].toFixed(2)} µs CPU per dispatch (median; rounds ${perCall.map((x) => x.toFixed(2)).join(', ')}), ${bytes > 0 ? 'answered' : ''}`,
  )
}
await server.close()
rmSync(dataDir, { recursive: true, force: true })
