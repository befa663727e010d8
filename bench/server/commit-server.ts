// The server and the OffsetCommit requests the server benchmarks share (requests.ts,
// commit-trace.ts, commit-cpu.ts): a Topograph server with ten 3-partition topics and a Streams
// application's 20-partition input topic, and the two commit shapes.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WireClient } from '../../test/server/wire-client.js'
import { createLogger, parseConfig, type RunningServer, startServer } from './target.js'

export interface BenchServer {
  readonly server: RunningServer
  readonly dataDir: string
  close(): Promise<void>
}

/** A server with `coordinator.storage=storage` in a fresh data.dir, its topics created. */
export async function startBenchServer(storage: 'sqlite' | 'memory'): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'topograph-bench-'))
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
  const topic = (name: string, numPartitions: number) => ({
    name,
    numPartitions,
    replicationFactor: 1,
    assignments: [],
    configs: [],
  })
  // Ten topics with three partitions each (so Metadata has something to list), and the input topic
  // of a Kafka Streams application with 20 tasks (one subtopology).
  await c.request(19, 7, {
    topics: [...Array.from({ length: 10 }, (_, i) => topic(`bench-${i}`, 3)), topic('bench-streams', 20)],
    timeoutMs: 1000,
  })
  c.close()
  return {
    server,
    dataDir,
    async close() {
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * A simple commit (generation -1, no member id, as an admin client or a manually assigned consumer
 * sends it) of 2 topics × 3 partitions; every request writes 6 offset records.
 */
export const offsetCommitBody = {
  groupId: 'bench-commit',
  generationIdOrMemberEpoch: -1,
  memberId: '',
  groupInstanceId: null,
  topics: [0, 1].map((t) => ({
    name: `bench-${t}`,
    partitions: [0, 1, 2].map((p) => ({
      partitionIndex: p,
      committedOffset: 1000n + BigInt(p),
      committedLeaderEpoch: -1,
      committedMetadata: '',
    })),
  })),
}

/**
 * The shape of a Kafka Streams commit: every task's input partition of one subtopology, 20 offsets
 * of one topic, each with the metadata Streams writes (the task's position encoded, here 32 bytes).
 */
export const streamsCommitBody = {
  ...offsetCommitBody,
  groupId: 'bench-streams-commit',
  topics: [
    {
      name: 'bench-streams',
      partitions: Array.from({ length: 20 }, (_, p) => ({
        partitionIndex: p,
        committedOffset: 5000n + BigInt(p),
        committedLeaderEpoch: -1,
        committedMetadata: 'AQAAAY_streams_task_position_x'.padEnd(32, '='),
      })),
    },
  ],
}
