// OffsetCommit and OffsetFetch pipelined on one connection, over real TCP against a server process
// of the test harness: a client that sends many commits back to back gets every answer, in the
// order it sent the requests, and the offsets end as the last commit left them; any other request
// waits for the answers before it; a refused frame ends the connection with nothing after it done.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestServer, type TestServer } from '../server/harness.js'
import { decodeResponse, rawFrame, requestFrame, WireClient } from '../server/wire-client.js'

let ts: TestServer

before(async () => {
  ts = await startTestServer({})
  const c = await WireClient.connect(ts.port)
  await c.request(19, 7, {
    topics: [{ name: 'piped', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 5000,
  })
  c.close()
})

after(async () => {
  await ts.stop()
})

function commit(groupId: string, correlationId: number, offset: bigint): Buffer {
  return requestFrame(8, 9, correlationId, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [
      {
        name: 'piped',
        partitions: [0, 1].map((p) => ({
          partitionIndex: p,
          committedOffset: offset + BigInt(p),
          committedLeaderEpoch: -1,
          committedMetadata: `c${correlationId}`,
        })),
      },
    ],
  })
}

function fetchFrame(groupId: string, correlationId: number): Buffer {
  return requestFrame(9, 9, correlationId, {
    groups: [
      { groupId, memberId: null, memberEpoch: -1, topics: [{ name: 'piped', partitionIndexes: [0, 1] }] },
    ],
    requireStable: false,
  })
}

interface CommitBody {
  topics: { partitions: { partitionIndex: number; errorCode: number }[] }[]
}
interface FetchBody {
  groups: {
    errorCode: number
    topics: { partitions: { partitionIndex: number; committedOffset: bigint; metadata: string | null }[] }[]
  }[]
}

async function committed(groupId: string): Promise<bigint[]> {
  const c = await WireClient.connect(ts.port)
  try {
    c.write(fetchFrame(groupId, 1))
    const f = (await c.nextFrame()) as Buffer
    const { body } = decodeResponse<FetchBody>(9, 9, f)
    return body.groups[0].topics[0].partitions.map((p) => p.committedOffset)
  } finally {
    c.close()
  }
}

test('pipelined commits and fetches are all answered, in order, and the last commit wins', async () => {
  const c = await WireClient.connect(ts.port)
  try {
    // 40 commits, a fetch in the middle and one at the end, two groups interleaved, in one write.
    const frames: Buffer[] = []
    for (let i = 1; i <= 40; i++) {
      frames.push(commit(i % 2 === 0 ? 'piped-a' : 'piped-b', i, BigInt(i * 100)))
      if (i === 20) frames.push(fetchFrame('piped-a', 1000))
    }
    frames.push(fetchFrame('piped-a', 1001))
    c.write(Buffer.concat(frames))
    const seen: number[] = []
    for (let i = 0; i < frames.length; i++) {
      const f = (await c.nextFrame()) as Buffer
      assert.ok(f !== null, `answer ${i + 1} of ${frames.length}`)
      const id = f.readInt32BE(0)
      seen.push(id)
      if (id >= 1000) {
        const { body } = decodeResponse<FetchBody>(9, 9, f)
        const offsets = body.groups[0].topics[0].partitions.map((p) => p.committedOffset)
        // The fetch sees every commit sent before it on this connection, and none after it.
        assert.deepEqual(offsets, id === 1000 ? [2000n, 2001n] : [4000n, 4001n])
      } else {
        const { body } = decodeResponse<CommitBody>(8, 9, f)
        assert.deepEqual(
          body.topics[0].partitions.map((p) => p.errorCode),
          [0, 0],
        )
      }
    }
    const expected = [...Array.from({ length: 20 }, (_, i) => i + 1), 1000]
    for (let i = 21; i <= 40; i++) expected.push(i)
    expected.push(1001)
    assert.deepEqual(seen, expected, 'answers in the order of the requests')
    assert.deepEqual(await committed('piped-b'), [3900n, 3901n])
  } finally {
    c.close()
  }
})

test('a request that is not pipelined waits for the answers before it and keeps its place', async () => {
  const c = await WireClient.connect(ts.port)
  try {
    const frames = [
      commit('piped-c', 1, 10n),
      commit('piped-c', 2, 20n),
      requestFrame(3, 12, 3, {
        topics: null,
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: false,
      }),
      commit('piped-c', 4, 40n),
      requestFrame(18, 3, 5, { clientSoftwareName: 'test', clientSoftwareVersion: '1' }),
      fetchFrame('piped-c', 6),
    ]
    c.write(Buffer.concat(frames))
    const ids: number[] = []
    for (let i = 0; i < frames.length; i++) ids.push(((await c.nextFrame()) as Buffer).readInt32BE(0))
    assert.deepEqual(ids, [1, 2, 3, 4, 5, 6])
    assert.deepEqual(await committed('piped-c'), [40n, 41n])
  } finally {
    c.close()
  }
})

test('a refused frame among pipelined commits: those before it are answered, nothing after it runs', async () => {
  const c = await WireClient.connect(ts.port)
  try {
    const frames = [
      commit('piped-d', 1, 10n),
      commit('piped-d', 2, 20n),
      // OffsetCommit v99: a version this server does not serve ends the connection.
      rawFrame(8, 99, 3, new Uint8Array(8)),
      commit('piped-d', 4, 40n),
    ]
    c.write(Buffer.concat(frames))
    const ids: number[] = []
    for (;;) {
      const f = await c.nextFrame()
      if (f === null) break
      ids.push(f.readInt32BE(0))
    }
    assert.deepEqual(ids.slice(0, 2), [1, 2], 'the commits before the refused frame are answered')
    assert.ok(!ids.includes(4), 'nothing after the refused frame is answered')
    assert.ok(await c.closedWithin(5000), 'the connection is closed')
    assert.deepEqual(await committed('piped-d'), [20n, 21n], 'the commit after it was not applied')
  } finally {
    c.close()
  }
})
