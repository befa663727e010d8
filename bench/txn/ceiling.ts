/**
 * The ceiling of the transactions benchmark: a bare Node TCP server written only for the benchmark
 * that answers every request a Java producer sends, with or without transactions, correctly and at
 * once, with no storage and no coordinator: ApiVersions (with `transaction.version` 2 finalized,
 * so the producer speaks transaction version 2 as it does against Topograph), Metadata (one node,
 * the benchmark's topic), FindCoordinator, InitProducerId, Produce (offsets counted per partition),
 * AddPartitionsToTxn (v0–3, for a producer on transaction version 1) and EndTxn (the epoch bumped,
 * as a version 2 EndTxn does). Requests go through the same generated codec as Topograph's and the
 * answers to one read leave in one write (cork), as Topograph's connection does; each request is
 * answered in the turn it arrives in. It advertises the version ranges Topograph's handlers serve,
 * so the producer sends the same versions to both.
 *
 * What the Java producer reaches against it is what it can reach against any server on this
 * machine: its rate here bounds its rate against Topograph.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type Server, type Socket } from 'node:net'
import { FrameDecoder } from '../../src/clients/network/framing.js'
import { readRequestHeader } from '../../src/protocol/generated/messages/RequestHeader.js'
import { writeResponseHeader } from '../../src/protocol/generated/messages/ResponseHeader.js'
import {
  API_DEFINITIONS,
  type ApiMessageTypes,
  requestHeaderVersion,
  responseHeaderVersion,
} from '../../src/protocol/generated/registry.js'
import { Reader } from '../../src/protocol/reader.js'
import { Writer } from '../../src/protocol/writer.js'
import { handler as produceHandler } from '../../src/server/handlers/000-produce.js'
import { handler as metadataHandler } from '../../src/server/handlers/003-metadata.js'
import { handler as findCoordinatorHandler } from '../../src/server/handlers/010-find-coordinator.js'
import { handler as apiVersionsHandler } from '../../src/server/handlers/018-api-versions.js'
import { handler as initProducerIdHandler } from '../../src/server/handlers/022-init-producer-id.js'
import { handler as addPartitionsHandler } from '../../src/server/handlers/024-add-partitions-to-txn.js'
import { handler as endTxnHandler } from '../../src/server/handlers/026-end-txn.js'

type Key = keyof ApiMessageTypes
type Req<K extends Key> = ApiMessageTypes[K]['request']
type Res<K extends Key> = ApiMessageTypes[K]['response']

const NODE_ID = 1
const UNSUPPORTED_VERSION = 35
const UNKNOWN_TOPIC_OR_PARTITION = 3
const UNKNOWN_TOPIC_ID = 100

/** The APIs answered, with the ranges Topograph's handlers advertise for them. */
const SERVED = [
  produceHandler,
  metadataHandler,
  findCoordinatorHandler,
  apiVersionsHandler,
  initProducerIdHandler,
  addPartitionsHandler,
  endTxnHandler,
].map((h) => ({
  apiKey: h.apiKey,
  minVersion: h.advertisedMinVersion ?? h.minVersion,
  maxVersion: h.maxVersion,
}))
const SERVED_BY_KEY = new Map(SERVED.map((a) => [a.apiKey, a]))

export interface TxnCeiling {
  readonly port: number
  readonly bootstrap: string
  close(): Promise<void>
}

/** The record count of every batch in a Produce partition's records (lastOffsetDelta + 1 each). */
function recordCount(records: Uint8Array | null): number {
  if (records === null) return 0
  const view = new DataView(records.buffer, records.byteOffset, records.byteLength)
  let n = 0
  for (let pos = 0; pos + 27 <= records.byteLength; ) {
    n += view.getInt32(pos + 23) + 1
    pos += 12 + view.getInt32(pos + 8)
  }
  return n
}

/**
 * Starts the ceiling on a loopback port, serving `topic` with `partitions` partitions.
 */
export async function startTxnCeiling(topic: string, partitions: number): Promise<TxnCeiling> {
  const topicId = randomBytes(16).toString('base64url')
  const offsets = new Array<number>(partitions).fill(0)
  /** Transactional id → its producer id and epoch. */
  const transactions = new Map<string, { producerId: bigint; producerEpoch: number }>()
  let nextProducerId = 1000n
  let port = 0
  const sockets = new Set<Socket>()

  const metadata = (req: Req<3>): Res<3> => {
    const ours = (): Res<3>['topics'][number] => ({
      errorCode: 0,
      name: topic,
      topicId,
      isInternal: false,
      partitions: offsets.map((_, i) => ({
        errorCode: 0,
        partitionIndex: i,
        leaderId: NODE_ID,
        leaderEpoch: 0,
        replicaNodes: [NODE_ID],
        isrNodes: [NODE_ID],
        offlineReplicas: [],
      })),
      topicAuthorizedOperations: -2147483648,
    })
    const topics =
      req.topics === null
        ? [ours()]
        : req.topics.map((t) =>
            t.name === topic || t.topicId === topicId
              ? ours()
              : {
                  ...ours(),
                  errorCode: UNKNOWN_TOPIC_OR_PARTITION,
                  name: t.name,
                  topicId: t.topicId,
                  partitions: [],
                },
          )
    return API_DEFINITIONS[3].createResponse({
      brokers: [{ nodeId: NODE_ID, host: '127.0.0.1', port, rack: null }],
      clusterId: 'txn-ceiling',
      controllerId: NODE_ID,
      topics,
    })
  }

  const produce = (req: Req<0>): Res<0> =>
    API_DEFINITIONS[0].createResponse({
      responses: req.topicData.map((t) => {
        const known = t.name === topic || t.topicId === topicId
        return {
          name: t.name,
          topicId: t.topicId,
          partitionResponses: t.partitionData.map((p) => {
            const ok = known && p.index >= 0 && p.index < partitions
            const baseOffset = ok ? offsets[p.index]! : -1
            if (ok) offsets[p.index]! += recordCount(p.records)
            return {
              index: p.index,
              errorCode: ok ? 0 : t.name === '' ? UNKNOWN_TOPIC_ID : UNKNOWN_TOPIC_OR_PARTITION,
              baseOffset: BigInt(baseOffset),
              logAppendTimeMs: -1n,
              logStartOffset: ok ? 0n : -1n,
              recordErrors: [],
              errorMessage: null,
              currentLeader: { leaderId: -1, leaderEpoch: -1 },
            }
          }),
        }
      }),
    })

  const initProducerId = (req: Req<22>): Res<22> => {
    if (req.transactionalId === null) {
      return API_DEFINITIONS[22].createResponse({ producerId: nextProducerId++, producerEpoch: 0 })
    }
    const known = transactions.get(req.transactionalId)
    const next = known === undefined ? { producerId: nextProducerId++, producerEpoch: 0 } : bumped(known)
    transactions.set(req.transactionalId, next)
    return API_DEFINITIONS[22].createResponse(next)
  }

  /**
   * The next epoch, as Kafka's coordinator gives it: a producer at epoch 32766 (the last one Kafka
   * hands out) gets a new producer id at epoch 0, so that a quick producer can run more than 32,767
   * transactions on one id.
   */
  const bumped = (t: { producerId: bigint; producerEpoch: number }) =>
    t.producerEpoch >= 32766
      ? { producerId: nextProducerId++, producerEpoch: 0 }
      : { producerId: t.producerId, producerEpoch: t.producerEpoch + 1 }

  const endTxn = (req: Req<26>, version: number): Res<26> => {
    const t = transactions.get(req.transactionalId)
    if (t === undefined) return API_DEFINITIONS[26].createResponse({ errorCode: 49 })
    // Version 5 (transaction version 2) bumps the epoch at every end; earlier versions keep it.
    if (version >= 5) Object.assign(t, bumped(t))
    return API_DEFINITIONS[26].createResponse(
      version >= 5 ? { producerId: t.producerId, producerEpoch: t.producerEpoch } : {},
    )
  }

  const answer = (apiKey: number, version: number, request: unknown): object => {
    switch (apiKey) {
      case 0:
        return produce(request as Req<0>)
      case 3:
        return metadata(request as Req<3>)
      case 10: {
        const req = request as Req<10>
        const at = { nodeId: NODE_ID, host: '127.0.0.1', port }
        return version < 4
          ? API_DEFINITIONS[10].createResponse(at)
          : API_DEFINITIONS[10].createResponse({
              coordinators: req.coordinatorKeys.map((key) => ({
                key,
                ...at,
                errorCode: 0,
                errorMessage: null,
              })),
            })
      }
      case 18:
        return API_DEFINITIONS[18].createResponse({
          apiKeys: SERVED,
          supportedFeatures:
            version >= 4 ? [{ name: 'transaction.version', minVersion: 0, maxVersion: 2 }] : [],
          finalizedFeaturesEpoch: 0n,
          finalizedFeatures: [{ name: 'transaction.version', minVersionLevel: 2, maxVersionLevel: 2 }],
        })
      case 22:
        return initProducerId(request as Req<22>)
      case 24: {
        const req = request as Req<24>
        return API_DEFINITIONS[24].createResponse({
          resultsByTopicV3AndBelow: req.v3AndBelowTopics.map((t) => ({
            name: t.name,
            resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: 0 })),
          })),
        })
      }
      case 26:
        return endTxn(request as Req<26>, version)
      default:
        throw new Error(`API ${apiKey} is not served`)
    }
  }

  const write = (socket: Socket, apiKey: number, version: number, correlationId: number, body: object) => {
    const w = new Writer()
    w.writeInt32(0)
    writeResponseHeader(w, { correlationId }, responseHeaderVersion(apiKey, version))
    ;(API_DEFINITIONS[apiKey as Key].writeResponse as (w: Writer, m: object, v: number) => void)(
      w,
      body,
      version,
    )
    const out = w.finish()
    out.writeInt32BE(out.length - 4, 0)
    socket.write(out)
  }

  const onFrame = (socket: Socket, frame: Buffer): void => {
    const r = new Reader(frame)
    const apiKey = r.readInt16()
    const version = r.readInt16()
    r.offset = 0
    const served = SERVED_BY_KEY.get(apiKey)
    if (served === undefined) throw new Error(`API ${apiKey} is not served`)
    if (apiKey === 18 && version > served.maxVersion) {
      // KIP-511: the v0 layout with UNSUPPORTED_VERSION and the ApiVersions range.
      const header = readRequestHeader(r, 1)
      write(socket, 18, 0, header.correlationId, {
        ...API_DEFINITIONS[18].createResponse(),
        errorCode: UNSUPPORTED_VERSION,
        apiKeys: [served],
      })
      return
    }
    const header = readRequestHeader(r, requestHeaderVersion(apiKey, version))
    const request = API_DEFINITIONS[apiKey as Key].readRequest(r, version)
    const body = answer(apiKey, version, request)
    // acks=0 Produce: no answer.
    if (apiKey === 0 && (request as Req<0>).acks === 0) return
    write(socket, apiKey, version, header.correlationId, body)
  }

  const server: Server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    const decoder = new FrameDecoder()
    socket.on('data', (chunk: Buffer) => {
      try {
        const frames = decoder.push(chunk)
        socket.cork()
        for (const f of frames) onFrame(socket, f)
        socket.uncork()
      } catch (err) {
        // A request this server cannot answer ends the run loudly rather than hanging the client.
        console.error(`txn ceiling: ${(err as Error).message}; closing the connection`)
        socket.destroy()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
  return {
    port,
    bootstrap: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
