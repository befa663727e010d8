// ConsumerGroupDescribe (key 69): serves v0–v1. No consumer groups live here: a streams or simple
// group answers GROUP_ID_NOT_FOUND "Group <g> is not a consumer group.", an unknown id "Group <g>
// not found.", an empty id INVALID_GROUP_ID (Kafka's per-group answers).
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createConsumerGroupDescribeResponse } from '../../protocol/generated/messages/ConsumerGroupDescribeResponse.js'
import { defineHandler } from '../router.js'

const row = (groupId: string, errorCode: number) => ({
  errorCode,
  errorMessage: null,
  groupId,
  groupState: '',
  groupEpoch: 0,
  assignmentEpoch: 0,
  assignorName: '',
  members: [],
  authorizedOperations: -2147483648,
})

export const handler = defineHandler({
  apiKey: 69,
  minVersion: 0,
  maxVersion: 1,
  async handle(request, ctx) {
    const allowed = request.groupIds.filter((g) =>
      ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', g),
    )
    const described = await coordinatorFrom(ctx.server.coordinator).consumerGroupDescribe(allowed)
    let next = 0
    return createConsumerGroupDescribeResponse({
      groups: request.groupIds.map((g) =>
        ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', g)
          ? described[next++]
          : row(g, ErrorCode.GROUP_AUTHORIZATION_FAILED),
      ),
    })
  },
  errorResponse(request, errorCode) {
    return createConsumerGroupDescribeResponse({ groups: request.groupIds.map((g) => row(g, errorCode)) })
  },
})
