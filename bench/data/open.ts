// Opening 1,000 partitions after a clean shutdown: a topic of 1,000 partitions gets `batches`
// batches of 16 × 1 KiB records in each partition, the server stops cleanly, and then
// - the whole server starts again on that data.dir (time, and bytes read by the process from
//   /proc/self/io `rchar`, which counts every read system call, SQLite's included);
// - the log layer alone opens the same directory through a counting file layer: time, bytes read
//   by read calls and whole-file reads, set against the bytes of the logs. A log scan would read
//   every byte once; a clean start reads only the index files and each segment's tail after its
//   last index entry.
// - for contrast, the same after removing the clean-shutdown marker and the recovery-point
//   checkpoint: the recovery scan of every partition from its start.
//
//   node --import tsx bench/data/open.ts [partitions=1000] [batches=32]
import * as nodeFs from 'node:fs'
import { readFileSync, rmSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_LOG_MANAGER_CONFIG } from '../../src/log/config.js'
import { type FileLayer, FileLogStorage, NODE_FILE_LAYER } from '../../src/log/file.js'
import { createLogManager } from '../../src/log/manager.js'
import { produceRequest } from '../../test/helpers/data-plane.js'
import { requestFrame } from '../../test/server/wire-client.js'
import { benchBatch, createTopic, f1, loadAverage, mb, runLoad, startBench } from './load.js'

const partitions = Number(process.argv[2] ?? 1000)
const batches = Number(process.argv[3] ?? 32)
const TOPIC = 'bench-open'
const PER_REQUEST = 50

console.log(`load average ${loadAverage()}`)
const first = await startBench()
let t0 = performance.now()
await createTopic(first.client, TOPIC, partitions)
const createMs = performance.now() - t0
const { batch } = benchBatch()
const frames = Array.from({ length: Math.ceil(partitions / PER_REQUEST) }, (_, k) =>
  requestFrame(
    0,
    12,
    1,
    produceRequest(
      Array.from({ length: Math.min(PER_REQUEST, partitions - k * PER_REQUEST) }, (_, i) => ({
        topic: TOPIC,
        partition: k * PER_REQUEST + i,
        records: batch,
      })),
      1,
    ),
  ),
)
const r = await runLoad({
  mode: 'closed',
  port: first.server.address.port,
  frames,
  seconds: 3600,
  warmupSeconds: 0,
  connections: 4,
  depth: 2,
  maxRequests: frames.length * batches,
})
let logBytes = 0
for (let p = 0; p < partitions; p++)
  logBytes += first.server.context.data.logs.partition(TOPIC, p)?.sizeInBytes ?? 0
if (logBytes !== partitions * batches * batch.byteLength)
  throw new Error(`the logs hold ${logBytes} bytes after ${r.answered} requests`)
first.client.close()
await first.server.close()
const dataDir = first.dataDir
const logDir = join(dataDir, 'logs')
const topicId = /topic_id: (\S+)/.exec(
  readFileSync(join(logDir, `${TOPIC}-0`, 'partition.metadata'), 'utf8'),
)?.[1]
if (topicId === undefined) throw new Error('no partition.metadata')

const rchar = () => Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN)

// 1. The whole server.
const read0 = rchar()
t0 = performance.now()
const second = await startBench({}, dataDir)
const serverMs = performance.now() - t0
const serverRead = rchar() - read0
const opened = second.server.context.data.logs.partition(TOPIC, partitions - 1)?.logEndOffset
second.client.close()
await second.server.close()
if (opened !== batches * 16) throw new Error(`partition ${partitions - 1} reopened with end offset ${opened}`)

// 2. The log layer alone, through a file layer that counts what it reads.
interface Counted {
  ms: number
  bytes: number
  readCalls: number
  files: number
}
async function openLogs(): Promise<Counted> {
  const c = { bytes: 0, readCalls: 0, files: 0 }
  const fs: FileLayer = {
    ...(NODE_FILE_LAYER as FileLayer),
    readSync(fd, buffer, offset, length, position) {
      const n = nodeFs.readSync(fd, buffer, offset, length, position)
      c.bytes += n
      c.readCalls++
      return n
    },
    readFileSync(path) {
      const b = nodeFs.readFileSync(path)
      c.bytes += b.byteLength
      c.files++
      return b
    },
  }
  const m = createLogManager(
    { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [logDir] },
    { storage: new FileLogStorage([logDir], { fs }), noBackgroundJobs: true },
  )
  const start = performance.now()
  await m.open()
  await m.createPartitions(TOPIC, topicId as string, 0, partitions, {})
  const ms = performance.now() - start
  const end = m.partition(TOPIC, partitions - 1)?.logEndOffset
  await m.close()
  if (end !== batches * 16) throw new Error(`reopened with end offset ${end}`)
  return { ms, ...c }
}
const clean = await openLogs()
// No marker and no recovery-point checkpoint: every partition is scanned from its start.
unlinkSync(join(logDir, '.kafka_cleanshutdown'))
unlinkSync(join(logDir, 'recovery-point-offset-checkpoint'))
const recovered = await openLogs()

console.log(
  `created ${partitions} partitions in ${(createMs / 1000).toFixed(1)} s; ${batches} batches of ${batch.byteLength} B each: ${f1(mb(logBytes))} MB of logs\n`,
)
console.log('| Open after … | time ms | bytes read | of the log bytes | read calls | whole files read |')
console.log('| --- | ---: | ---: | ---: | ---: | ---: |')
console.log(
  `| clean shutdown, whole server (rchar) | ${serverMs.toFixed(0)} | ${serverRead.toLocaleString('en')} | ${f1((100 * serverRead) / logBytes)} % | — | — |`,
)
for (const [name, c] of [
  ['clean shutdown, log layer', clean],
  ['unclean shutdown, no recovery point (a full scan), log layer', recovered],
] as const)
  console.log(
    `| ${name} | ${c.ms.toFixed(0)} | ${c.bytes.toLocaleString('en')} | ${f1((100 * c.bytes) / logBytes)} % | ${c.readCalls} | ${c.files} |`,
  )
console.log(`\nload average ${loadAverage()}`)
rmSync(dataDir, { recursive: true, force: true })
