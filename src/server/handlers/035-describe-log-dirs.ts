// DescribeLogDirs (key 35): serves v1–v5 (data-plane.md §10.3).
//   1. No DESCRIBE on the cluster: CLUSTER_AUTHORIZATION_FAILED at the top (v3+; before v3 there is
//      no top-level error and the answer is simply empty), no results.
//   2. One result per log directory: its absolute path, KAFKA_STORAGE_ERROR when it is offline,
//      the partitions asked (Topics null = every partition) that live there with their sizes
//      (OffsetLag 0: the log end is the high watermark on one node; IsFutureKey false), topics
//      without such a partition left out; from v4 the volume's total and usable bytes (-1 where
//      the engine keeps no files), from v5 IsCordoned false.
import { ErrorCode } from '../../protocol/errors.js'
import {
  createDescribeLogDirsResponse,
  type DescribeLogDirsResponseDescribeLogDirsTopic,
} from '../../protocol/generated/messages/DescribeLogDirsResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { toBigInt } from '../data/requests.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 35,
  minVersion: 1,
  maxVersion: 5,
  async handle(request, ctx) {
    // 1.
    if (!ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'CLUSTER', CLUSTER_NAME)) {
      return createDescribeLogDirsResponse({
        errorCode: ctx.apiVersion >= 3 ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED : ErrorCode.NONE,
        results: [],
      })
    }
    // 2.
    let wanted: Map<string, Set<number>> | null = null
    if (request.topics !== null) {
      wanted = new Map()
      for (const t of request.topics) {
        let set = wanted.get(t.topic)
        if (set === undefined) wanted.set(t.topic, (set = new Set()))
        for (const p of t.partitions) set.add(p)
      }
    }
    const dirs = await ctx.server.data.logs.logDirs()
    return createDescribeLogDirsResponse({
      errorCode: ErrorCode.NONE,
      results: dirs.map((d) => {
        const topics = new Map<string, DescribeLogDirsResponseDescribeLogDirsTopic>()
        for (const p of d.partitions) {
          if (wanted !== null && !wanted.get(p.topic)?.has(p.partition)) continue
          let t = topics.get(p.topic)
          if (t === undefined) topics.set(p.topic, (t = { name: p.topic, partitions: [] }))
          t.partitions.push({
            partitionIndex: p.partition,
            partitionSize: toBigInt(p.size),
            offsetLag: 0n,
            isFutureKey: false,
          })
        }
        return {
          errorCode: d.errorCode,
          logDir: d.path,
          topics: [...topics.values()],
          totalBytes: toBigInt(d.totalBytes),
          usableBytes: toBigInt(d.usableBytes),
          isCordoned: false,
        }
      }),
    })
  },
  errorResponse(_request, errorCode, ctx) {
    return createDescribeLogDirsResponse({
      errorCode: ctx.apiVersion >= 3 ? errorCode : ErrorCode.NONE,
      results: [],
    })
  },
})
