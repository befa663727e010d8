// ApiVersions (key 18): serves v0–v5, and answers any other version with the KIP-511 fallback
// (v0 layout, UNSUPPORTED_VERSION, the ApiVersions range in ApiKeys).
import { ErrorCode } from '../../protocol/errors.js'
import type { ApiVersionsResponse } from '../../protocol/generated/messages/ApiVersionsResponse.js'
import { createApiVersionsResponse } from '../../protocol/generated/messages/ApiVersionsResponse.js'
import { defineHandler, type ServerContext } from '../router.js'

/** Kafka's pattern for ClientSoftwareName and ClientSoftwareVersion (v3+). */
const SOFTWARE_NAME_VERSION = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/

/**
 * The full answer depends only on the registered handlers, the finalized features and the request
 * version (v3 leaves out supported features whose minimum is 0, as Kafka does since KAFKA-17492),
 * so it is built once per server and version class.
 */
const cache = new WeakMap<ServerContext, Map<boolean, ApiVersionsResponse>>()

/**
 * The features epoch: Kafka's is the metadata offset of the last feature change. Topograph's
 * features change only with the configuration, so a constant non-negative epoch never decreases
 * (the Java producer reads the features only from an epoch above -1).
 */
export const FINALIZED_FEATURES_EPOCH = 0n

function fullResponse(server: ServerContext, apiVersion: number): ApiVersionsResponse {
  let byVersion = cache.get(server)
  if (byVersion === undefined) {
    byVersion = new Map()
    cache.set(server, byVersion)
  }
  const listMinZero = apiVersion >= 4
  let res = byVersion.get(listMinZero)
  if (res === undefined) {
    const tv = server.transactionVersion
    res = createApiVersionsResponse({
      errorCode: ErrorCode.NONE,
      apiKeys: server.supportedApis().map((a) => ({
        apiKey: a.apiKey,
        minVersion: a.minVersion,
        maxVersion: a.maxVersion,
      })),
      // transaction.version (transactions.md §1.2): supported 0–2, finalized at the configured
      // level (a level of 0 is not listed).
      supportedFeatures: listMinZero ? [{ name: 'transaction.version', minVersion: 0, maxVersion: 2 }] : [],
      finalizedFeaturesEpoch: FINALIZED_FEATURES_EPOCH,
      finalizedFeatures:
        tv > 0 ? [{ name: 'transaction.version', minVersionLevel: tv, maxVersionLevel: tv }] : [],
    })
    byVersion.set(listMinZero, res)
  }
  return res
}

function errorResponse(server: ServerContext, errorCode: number): ApiVersionsResponse {
  const own = server.supportedApis().find((a) => a.apiKey === 18)
  return createApiVersionsResponse({
    errorCode,
    // Only the UNSUPPORTED_VERSION answer lists a range (ApiVersions' own), as Kafka does.
    apiKeys:
      errorCode === ErrorCode.UNSUPPORTED_VERSION && own !== undefined
        ? [{ apiKey: 18, minVersion: own.minVersion, maxVersion: own.maxVersion }]
        : [],
  })
}

export const handler = defineHandler({
  apiKey: 18,
  minVersion: 0,
  maxVersion: 5,
  handle(request, ctx) {
    const server = ctx.server
    // 1. A version this server does not know: the body was not parsed.
    if (ctx.unsupportedVersion) return errorResponse(server, ErrorCode.UNSUPPORTED_VERSION)
    // 2. v5 (KIP-1242): ClusterId and NodeId come together or not at all.
    if (ctx.apiVersion >= 5 && (request.clusterId === null) !== (request.nodeId === -1)) {
      return errorResponse(server, ErrorCode.INVALID_REQUEST)
    }
    // 3. v3+: the client software name and version must match Kafka's pattern.
    if (
      ctx.apiVersion >= 3 &&
      !(
        SOFTWARE_NAME_VERSION.test(request.clientSoftwareName) &&
        SOFTWARE_NAME_VERSION.test(request.clientSoftwareVersion)
      )
    ) {
      return errorResponse(server, ErrorCode.INVALID_REQUEST)
    }
    // 4. v5: a client that knows the cluster must be talking to this cluster and this node.
    if (
      ctx.apiVersion >= 5 &&
      request.clusterId !== null &&
      (request.clusterId !== server.clusterId || request.nodeId !== server.nodeId)
    ) {
      return errorResponse(server, ErrorCode.REBOOTSTRAP_REQUIRED)
    }
    return fullResponse(server, ctx.apiVersion)
  },
  errorResponse(_request, errorCode, ctx) {
    return errorResponse(ctx.server, errorCode)
  },
})
