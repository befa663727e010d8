// ConsumerGroupDescribe (key 69): serves v0–v1 (KIP-848 consumer groups). A streams, classic or simple
// group answers GROUP_ID_NOT_FOUND "Group <g> is not a consumer group.", an unknown id "Group <g>
// not found.", an empty id INVALID_GROUP_ID (Kafka's per-group answers). Without DESCRIBE on a group:
// GROUP_AUTHORIZATION_FAILED for it, listed before the other groups as Kafka does; a group whose
// assignments name a topic without DESCRIBE: TOPIC_AUTHORIZATION_FAILED, as Kafka answers.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createConsumerGroupDescribeResponse } from '../../protocol/generated/messages/ConsumerGroupDescribeResponse.js'
import { groupAuthorizedOperations, unauthorizedTopics } from '../auth/authorized-operations.js'
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
    const coordinator = coordinatorFrom(ctx.server.coordinator)
    // Consumer groups disabled: UNSUPPORTED_VERSION on every group, before any authorization.
    if (!coordinator.isConsumerEnabled) {
      return createConsumerGroupDescribeResponse({
        groups: await coordinator.consumerGroupDescribe(request.groupIds),
      })
    }
    // Kafka's order: the groups without DESCRIBE first, then the coordinator's rows, which carry
    // the authorized-operations bit set when asked for.
    const denied: string[] = []
    const allowed: string[] = []
    for (const g of request.groupIds) {
      if (ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', g)) allowed.push(g)
      else denied.push(g)
    }
    const described = await coordinator.consumerGroupDescribe(allowed, ctx.apiVersion)
    // A group whose assignments name a topic the principal may not DESCRIBE is not shown (Kafka's
    // answer, with its message).
    const topics = (d: (typeof described)[number]) =>
      d.members
        .flatMap((m) => [...m.assignment.topicPartitions, ...m.targetAssignment.topicPartitions])
        .map((t) => t.topicName)
    const hidden = new Set(unauthorizedTopics(ctx, 'DESCRIBE', described.flatMap(topics)))
    return createConsumerGroupDescribeResponse({
      groups: [
        ...denied.map((g) => row(g, ErrorCode.GROUP_AUTHORIZATION_FAILED)),
        ...described.map((d) => {
          if (hidden.size > 0 && topics(d).some((t) => hidden.has(t))) {
            return {
              ...row(d.groupId, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
              errorMessage: 'The group has described topic(s) that the client is not authorized to describe.',
            }
          }
          return request.includeAuthorizedOperations && d.errorCode === ErrorCode.NONE
            ? { ...d, authorizedOperations: groupAuthorizedOperations(ctx, d.groupId) }
            : d
        }),
      ],
    })
  },
  errorResponse(request, errorCode) {
    return createConsumerGroupDescribeResponse({ groups: request.groupIds.map((g) => row(g, errorCode)) })
  },
})
