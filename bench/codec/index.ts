/**
 * Codec throughput: encode and decode ops/s of our generated codec next to KafkaJS and
 * @platformatic/kafka on the same logical content, in one run. Not part of the test gate.
 *
 * Run: npx tsx bench/codec/index.ts            (BENCH_TIME_MS=1000 for longer samples)
 * Prints a Markdown table: ops/s per implementation and ours ÷ the fastest peer. Rows at our
 * version compare with @platformatic/kafka at the same version and KafkaJS at its highest (older)
 * one; rows marked "(KafkaJS version)" run ours at KafkaJS's version, like for like.
 */
import assert from 'node:assert/strict'
import { arch, cpus, platform, release } from 'node:os'
import { Bench } from 'tinybench'
import * as p from '../../src/protocol/index.js'
import * as m from './messages.js'
import * as peers from './peers.js'

interface Row {
  readonly message: string
  readonly op: 'encode' | 'decode'
  readonly ours: () => unknown
  readonly peers?: peers.PeerOps
}

const bytes = {
  metadata: p.encodeMetadataResponse(m.metadataResponse, 12),
  joinReq: p.encodeJoinGroupRequest(m.joinGroupRequest, 9),
  joinRes: p.encodeJoinGroupResponse(m.joinGroupResponse, 9),
  commit: p.encodeOffsetCommitRequest(m.offsetCommitRequest, 9),
  delReq: p.encodeDeleteGroupsRequest(m.deleteGroupsRequest, 2),
  delRes: p.encodeDeleteGroupsResponse(m.deleteGroupsResponse, 2),
  shbReq: p.encodeStreamsGroupHeartbeatRequest(m.streamsHeartbeatRequest, 1),
  shbRes: p.encodeStreamsGroupHeartbeatResponse(m.streamsHeartbeatResponse, 1),
  sgd: p.encodeStreamsGroupDescribeResponse(m.streamsDescribeResponse, 1),
  // the same content at the versions KafkaJS speaks, for the like-for-like rows
  metadataV6: p.encodeMetadataResponse(m.metadataResponse, 6),
  joinResV5: p.encodeJoinGroupResponse(m.joinGroupResponse, 5),
  delResV1: p.encodeDeleteGroupsResponse(m.deleteGroupsResponse, 1),
}

/** KafkaJS alone: our codec at KafkaJS's (older) version on the same content, like for like. */
const kjsOnly = (ops: peers.PeerOps): peers.PeerOps => ({ kafkajs: ops.kafkajs! })

const rows: Row[] = [
  {
    message: 'Metadata v12 response, 100 topics',
    op: 'encode',
    ours: () => p.encodeMetadataResponse(m.metadataResponse, 12),
  },
  {
    message: 'Metadata v12 response, 100 topics',
    op: 'decode',
    ours: () => p.decodeMetadataResponse(bytes.metadata, 12),
    peers: peers.metadataResponseDecode,
  },
  {
    message: 'JoinGroup v9 request',
    op: 'encode',
    ours: () => p.encodeJoinGroupRequest(m.joinGroupRequest, 9),
    peers: peers.joinGroupRequestEncode,
  },
  { message: 'JoinGroup v9 request', op: 'decode', ours: () => p.decodeJoinGroupRequest(bytes.joinReq, 9) },
  {
    message: 'JoinGroup v9 response, 10 members',
    op: 'encode',
    ours: () => p.encodeJoinGroupResponse(m.joinGroupResponse, 9),
  },
  {
    message: 'JoinGroup v9 response, 10 members',
    op: 'decode',
    ours: () => p.decodeJoinGroupResponse(bytes.joinRes, 9),
    peers: peers.joinGroupResponseDecode,
  },
  {
    message: 'OffsetCommit v9 request, 50 partitions',
    op: 'encode',
    ours: () => p.encodeOffsetCommitRequest(m.offsetCommitRequest, 9),
    peers: peers.offsetCommitRequestEncode,
  },
  {
    message: 'OffsetCommit v9 request, 50 partitions',
    op: 'decode',
    ours: () => p.decodeOffsetCommitRequest(bytes.commit, 9),
  },
  {
    message: 'DeleteGroups v2 request, 10 groups',
    op: 'encode',
    ours: () => p.encodeDeleteGroupsRequest(m.deleteGroupsRequest, 2),
    peers: peers.deleteGroupsRequestEncode,
  },
  {
    message: 'DeleteGroups v2 request, 10 groups',
    op: 'decode',
    ours: () => p.decodeDeleteGroupsRequest(bytes.delReq, 2),
  },
  {
    message: 'DeleteGroups v2 response, 10 groups',
    op: 'encode',
    ours: () => p.encodeDeleteGroupsResponse(m.deleteGroupsResponse, 2),
  },
  {
    message: 'DeleteGroups v2 response, 10 groups',
    op: 'decode',
    ours: () => p.decodeDeleteGroupsResponse(bytes.delRes, 2),
    peers: peers.deleteGroupsResponseDecode,
  },
  {
    message: 'Metadata v6 response, 100 topics (KafkaJS version)',
    op: 'decode',
    ours: () => p.decodeMetadataResponse(bytes.metadataV6, 6),
    peers: kjsOnly(peers.metadataResponseDecode),
  },
  {
    message: 'JoinGroup v5 request (KafkaJS version)',
    op: 'encode',
    ours: () => p.encodeJoinGroupRequest(m.joinGroupRequest, 5),
    peers: kjsOnly(peers.joinGroupRequestEncode),
  },
  {
    message: 'JoinGroup v5 response, 10 members (KafkaJS version)',
    op: 'decode',
    ours: () => p.decodeJoinGroupResponse(bytes.joinResV5, 5),
    peers: kjsOnly(peers.joinGroupResponseDecode),
  },
  {
    message: 'OffsetCommit v5 request, 50 partitions (KafkaJS version)',
    op: 'encode',
    ours: () => p.encodeOffsetCommitRequest(m.offsetCommitRequest, 5),
    peers: kjsOnly(peers.offsetCommitRequestEncode),
  },
  {
    message: 'DeleteGroups v1 request, 10 groups (KafkaJS version)',
    op: 'encode',
    ours: () => p.encodeDeleteGroupsRequest(m.deleteGroupsRequest, 1),
    peers: kjsOnly(peers.deleteGroupsRequestEncode),
  },
  {
    message: 'DeleteGroups v1 response, 10 groups (KafkaJS version)',
    op: 'decode',
    ours: () => p.decodeDeleteGroupsResponse(bytes.delResV1, 1),
    peers: kjsOnly(peers.deleteGroupsResponseDecode),
  },
  {
    message: 'StreamsGroupHeartbeat v1 request',
    op: 'encode',
    ours: () => p.encodeStreamsGroupHeartbeatRequest(m.streamsHeartbeatRequest, 1),
  },
  {
    message: 'StreamsGroupHeartbeat v1 request',
    op: 'decode',
    ours: () => p.decodeStreamsGroupHeartbeatRequest(bytes.shbReq, 1),
  },
  {
    message: 'StreamsGroupHeartbeat v1 response',
    op: 'encode',
    ours: () => p.encodeStreamsGroupHeartbeatResponse(m.streamsHeartbeatResponse, 1),
  },
  {
    message: 'StreamsGroupHeartbeat v1 response',
    op: 'decode',
    ours: () => p.decodeStreamsGroupHeartbeatResponse(bytes.shbRes, 1),
  },
  {
    message: 'StreamsGroupDescribe v1 response, 200-node topology',
    op: 'encode',
    ours: () => p.encodeStreamsGroupDescribeResponse(m.streamsDescribeResponse, 1),
  },
  {
    message: 'StreamsGroupDescribe v1 response, 200-node topology',
    op: 'decode',
    ours: () => p.decodeStreamsGroupDescribeResponse(bytes.sgd, 1),
  },
]

/** The peers must produce our bytes and read our content, or the comparison means nothing. */
async function checkPeers(): Promise<void> {
  const same = (a: unknown, b: Uint8Array, what: string) =>
    assert.equal(Buffer.from(a as Uint8Array).toString('hex'), Buffer.from(b).toString('hex'), what)
  same(peers.joinGroupRequestEncode.platformatic!(), bytes.joinReq, 'platformatic JoinGroup v9 request')
  same(peers.offsetCommitRequestEncode.platformatic!(), bytes.commit, 'platformatic OffsetCommit v9 request')
  same(peers.deleteGroupsRequestEncode.platformatic!(), bytes.delReq, 'platformatic DeleteGroups v2 request')
  same(
    await peers.joinGroupRequestEncode.kafkajs!(),
    p.encodeJoinGroupRequest(m.joinGroupRequest, 5),
    'kafkajs JoinGroup v5 request',
  )
  same(
    await peers.offsetCommitRequestEncode.kafkajs!(),
    p.encodeOffsetCommitRequest(m.offsetCommitRequest, 5),
    'kafkajs OffsetCommit v5 request',
  )
  same(
    await peers.deleteGroupsRequestEncode.kafkajs!(),
    p.encodeDeleteGroupsRequest(m.deleteGroupsRequest, 1),
    'kafkajs DeleteGroups v1 request',
  )
  const md = peers.metadataResponseDecode.platformatic!() as { topics: { partitions: unknown[] }[] }
  assert.equal(md.topics.length, 100)
  assert.equal(md.topics[99]!.partitions.length, 3)
  const mk = (await peers.metadataResponseDecode.kafkajs!()) as { topicMetadata: unknown[] }
  assert.equal(mk.topicMetadata.length, 100)
  const jp = peers.joinGroupResponseDecode.platformatic!() as { members: unknown[] }
  const jk = (await peers.joinGroupResponseDecode.kafkajs!()) as { members: unknown[] }
  assert.equal(jp.members.length, 10)
  assert.equal(jk.members.length, 10)
  const dp = peers.deleteGroupsResponseDecode.platformatic!() as { results: unknown[] }
  const dk = (await peers.deleteGroupsResponseDecode.kafkajs!()) as { results: unknown[] }
  assert.equal(dp.results.length, 10)
  assert.equal(dk.results.length, 10)
}

const PEERS = ['platformatic', 'kafkajs'] as const
const label = { ours: 'topograph', platformatic: '@platformatic/kafka', kafkajs: 'kafkajs' }

export async function main(): Promise<void> {
  await checkPeers()
  const time = Number(process.env.BENCH_TIME_MS ?? 500)
  const bench = new Bench({ time, warmup: true, warmupTime: Math.min(200, time) })
  const key = (r: Row, who: string) => `${r.message} | ${r.op} | ${who}`
  for (const r of rows) {
    bench.add(key(r, 'ours'), r.ours)
    for (const who of PEERS) {
      const fn = r.peers?.[who]
      if (fn !== undefined) bench.add(key(r, who), fn)
    }
  }
  await bench.run()
  const hz = new Map<string, number>()
  for (const t of bench.tasks) {
    const res = t.result
    if (res.state !== 'completed') throw new Error(`${t.name}: ${res.state}`)
    hz.set(t.name, res.throughput.mean)
  }
  const fmt = (n: number | undefined) => (n === undefined ? '—' : Math.round(n).toLocaleString('en-US'))
  const out: string[] = [
    `| Message | Op | ${label.ours} ops/s | ${label.platformatic} ops/s | ${label.kafkajs} ops/s | ours ÷ fastest peer |`,
    '| --- | --- | ---: | ---: | ---: | ---: |',
  ]
  for (const r of rows) {
    const ours = hz.get(key(r, 'ours'))!
    const peerHz = PEERS.map((w) => hz.get(key(r, w)))
    const best = Math.max(...peerHz.map((x) => x ?? 0))
    const ratio = best > 0 ? `${(ours / best).toFixed(2)}×` : 'no peer'
    out.push(`| ${r.message} | ${r.op} | ${fmt(ours)} | ${fmt(peerHz[0])} | ${fmt(peerHz[1])} | ${ratio} |`)
  }
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  console.log(
    `Node ${process.version}, ${platform()} ${release()} ${arch()}, ${cpu} (${cpus().length} cores)`,
  )
  console.log(`tinybench, ${time} ms per task\n`)
  console.log(out.join('\n'))
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
