// CPU of the stages of a Kafka Streams-shaped commit's 20 OffsetCommit records, each stage alone in
// a loop of this process (process.cpuUsage, 3 rounds, median): encoding the records
// (`encodeCoordinatorRecords`), the memory engine's append and the SQLite engine's append (16
// commits a write, as a pipelining connection's batch arrives; SQLite's figure includes its
// checkpoint worker's CPU, and it runs a tenth as many commits), and replaying the records into an
// offsets manager and into a group coordinator shard (its simple-group bookkeeping too). Every
// commit has its own group, topic and metadata strings, as decoding a request gives them.
//
//   node --import tsx bench/server/commit-stages.ts [commits=100000]
//
// TOPOGRAPH_BENCH_BUILD=dist takes the compiled modules from dist/ (after `npm run build`);
// TOPOGRAPH_BENCH_ROOT=<dir> takes them from another checkout (a build before a change).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { at, buildName, cpuRounds, root, streamsCommitRecords } from './in-process.js'

const n = Number(process.argv[2] ?? 100_000)
const { MemoryRecordStore } = await at('coordinator/storage/memory.js')
const { SqliteRecordStore } = await at('coordinator/storage/sqlite.js')
const { encodeCoordinatorRecords, releaseEncodedRecords } = await at('protocol/records.js')
const { OffsetMetadataManager } = await at('coordinator/shard/offsets/offset-metadata-manager.js')
const { GroupCoordinatorShard } = await at('coordinator/shard/index.js')

// 256 commits of the Streams shape, as the handler builds them.
const commits = streamsCommitRecords(256)

/** Runs `step(i)` for i < count, 3 rounds; prints µs of CPU per commit. */
async function time(name: string, step: (i: number) => unknown, count = n): Promise<void> {
  const rounds = await cpuRounds(step, count)
  console.log(
    `${name}: ${rounds[1].toFixed(2)} µs CPU per commit (rounds ${rounds.map((x) => x.toFixed(2)).join(', ')})`,
  )
}

console.log(`root ${root}, ${buildName}; ${n.toLocaleString('en')} commits of 20 records a round`)
await time('encode the records', (i) => releaseEncodedRecords(encodeCoordinatorRecords(commits[i & 255])))
// One write of 16 commits every 16th step: the figure is per commit.
const batch = commits.slice(0, 16).flatMap((c) => encodeCoordinatorRecords(c))
const memory = new MemoryRecordStore()
await memory.open()
await time('memory engine append', (i) => ((i & 15) === 0 ? memory.append(0, batch) : undefined))
await memory.close()
const dir = mkdtempSync(join(tmpdir(), 'topograph-commit-stages-'))
const sqlite = new SqliteRecordStore(dir)
await sqlite.open()
// A tenth as many: the file grows by about 2.5 KB a commit.
await time('sqlite engine append', (i) => ((i & 15) === 0 ? sqlite.append(0, batch) : undefined), n / 10)
await sqlite.close()
rmSync(dir, { recursive: true, force: true })
const offsets = new OffsetMetadataManager()
await time('replay into the offsets', (i) => {
  const c = commits[i & 255]
  for (let j = 0; j < 20; j++) offsets.replay(c[j])
})
// No topics and no assignor: offsets of a group with no group protocol (a simple group) need neither.
const shard = new GroupCoordinatorShard({
  topics: { topic: () => undefined, topicById: () => undefined },
  assignors: { select: () => undefined },
})
await time('replay into a shard', (i) => {
  const c = commits[i & 255]
  for (let j = 0; j < 20; j++) shard.replay(c[j])
})
