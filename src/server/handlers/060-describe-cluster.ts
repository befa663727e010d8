// DescribeCluster (key 60): serves v0–v2. One broker (this node). An endpoint type other than 1
// (brokers) gets Kafka's answer: MISMATCHED_ENDPOINT_TYPE for controllers, UNSUPPORTED_ENDPOINT_TYPE
// for an unknown type, INVALID_REQUEST for either at v0.
import { ErrorCode } from '../../protocol/errors.js'
import { createDescribeClusterResponse } from '../../protocol/generated/messages/DescribeClusterResponse.js'
import { clusterAuthorizedOperations } from '../operations.js'
import { defineHandler } from '../router.js'

const ENDPOINT_TYPES = ['UNKNOWN', 'BROKER', 'CONTROLLER'] as const
const BROKER = 1

export const handler = defineHandler({
  apiKey: 60,
  minVersion: 0,
  maxVersion: 2,
  handle(request, ctx) {
    const server = ctx.server
    const requested = ENDPOINT_TYPES[request.endpointType] ?? 'UNKNOWN'
    if (requested === 'UNKNOWN') {
      return createDescribeClusterResponse({
        errorCode: ctx.apiVersion === 0 ? ErrorCode.INVALID_REQUEST : ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
        errorMessage: `Unsupported endpoint type ${request.endpointType}`,
      })
    }
    if (request.endpointType !== BROKER) {
      return createDescribeClusterResponse({
        errorCode: ctx.apiVersion === 0 ? ErrorCode.INVALID_REQUEST : ErrorCode.MISMATCHED_ENDPOINT_TYPE,
        errorMessage: `The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type ${requested}`,
      })
    }
    const node = server.advertisedNode(ctx.listenerName)
    let ops = -2147483648
    if (request.includeClusterAuthorizedOperations) {
      ops = server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'CLUSTER', 'kafka-cluster')
        ? clusterAuthorizedOperations(ctx)
        : 0
    }
    return createDescribeClusterResponse({
      endpointType: BROKER,
      clusterId: server.clusterId,
      controllerId: server.nodeId,
      brokers: [{ brokerId: node.nodeId, host: node.host, port: node.port, rack: null, isFenced: false }],
      clusterAuthorizedOperations: ops,
    })
  },
  errorResponse(_request, errorCode) {
    return createDescribeClusterResponse({ errorCode })
  },
})
