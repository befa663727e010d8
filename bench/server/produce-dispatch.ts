// The server's own CPU per Produce request, without the network: the router's dispatch (decoding,
// the handler, the log's validation and append into the file engine, the answer's encoding) of
// the Produce v12 request of bench/data (one partition, 16 records of 1 KiB), called in a loop in
// this process, next to the append ceiling's one positional writeSync of the same bytes into a
// file. User and system CPU (process.cpuUsage) per call, so what the server adds to the write is
// apart from the kernel's cost of the write itself.
//
//   node --import tsx bench/server/produce-dispatch.ts [calls=20000] [rounds=5]
//
// TOPOGRAPH_BENCH_BUILD=dist and TOPOGRAPH_BENCH_ROOT=<dir> as in dispatch.ts; BENCH_DATA_DIR puts
// the log elsewhere than the OS temp dir (/dev/shm keeps the disk's writeback out of the figures).
import { closeSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { produceRequest } from '../../test/helpers/data-plane.js'
import { requestFrame, WireClient } from '../../test/server/wire-client.js'
import { benchBatch, createTopic } from '../data/load.js'
import { at, buildName as build, root, startInProcess } from './in-process.js'

const calls = Number(process.argv[2] ?? 20_000)
const rounds = Number(process.argv[3] ?? 5)
const { ApiRouter } = await at('server/router.js')
const produce = await at('server/handlers/000-produce.js')

const TOPIC = 'bench-data'
const { server, dataDir } = await startInProcess(
  'topograph-produce-dispatch-',
  process.env.BENCH_DATA_DIR ?? tmpdir(),
)
const c = await WireClient.connect(server.address.port)
await createTopic(c, TOPIC, 1)
c.close()
const router = new ApiRouter()
router.register(produce.handler)
router.bind(server.context)
const conn = {
  listenerName: server.listeners[0].listenerName,
  principal: 'User:ANONYMOUS',
  remote: '127.0.0.1:1',
}
const { batch } = benchBatch()
const frameOf = (acks: number) =>
  requestFrame(0, 12, 1, produceRequest([{ topic: TOPIC, partition: 0, records: batch }], acks)).subarray(4)
// The log rewrites the batch in the frame (base offset, leader epoch, outside the CRC): both are set
// back before each call, as a fresh frame from a socket read has them.
const ceilingFile = join(dataDir, 'ceiling.bin')
const fd = openSync(ceilingFile, 'w')
let position = 0
const cpu = (d: NodeJS.CpuUsage) => ({ user: d.user / calls, system: d.system / calls })
const fmt = (x: { user: number; system: number }) =>
  `${(x.user + x.system).toFixed(1)} (user ${x.user.toFixed(1)}, sys ${x.system.toFixed(1)})`
console.log(`root ${root}, ${build}; ${calls.toLocaleString('en')} calls a round, ${rounds} rounds`)
for (let r = 0; r < rounds; r++) {
  for (const acks of [1, -1]) {
    const frame = frameOf(acks)
    const recordsAt = frame.indexOf(Buffer.from(batch))
    let bytes = 0
    const t0 = process.cpuUsage()
    for (let i = 0; i < calls; i++) {
      frame.fill(0, recordsAt, recordsAt + 8)
      frame.writeInt32BE(-1, recordsAt + 12)
      bytes += router.dispatch(frame, conn).bytes.length
    }
    const topo = cpu(process.cpuUsage(t0))
    const t1 = process.cpuUsage()
    for (let i = 0; i < calls; i++) position += writeSync(fd, batch, 0, batch.byteLength, position)
    const ceil = cpu(process.cpuUsage(t1))
    console.log(
      `round ${r + 1} acks=${acks}: Topograph ${fmt(topo)} µs/request; writeSync alone ${fmt(ceil)}; ${bytes > 0 ? 'answered' : 'no answer'}`,
    )
  }
}
closeSync(fd)
await server.close()
rmSync(dataDir, { recursive: true, force: true })
