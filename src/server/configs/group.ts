/**
 * GROUP config resources. DescribeConfigs reports every key of Kafka's GroupConfig, as the group
 * coordinator describes it (src/coordinator/service/group-config.ts: the group's value, else the
 * broker's, with their synonyms), in the wire form of the config APIs. An empty name is Kafka's
 * INVALID_REQUEST; a group need not exist to be described. Alterations are the coordinator's
 * (GroupConfigManager.alter).
 */
import type { GroupCoordinatorService } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { ConfigSource, configTypeId, type DescribedConfig } from './codes.js'
import type { ResourceOutcome } from './topic.js'

/** DescribeConfigs of one group: the entries, or the error Kafka answers. */
export function describeGroup(
  coordinator: Pick<GroupCoordinatorService, 'groupConfigs'>,
  groupId: string,
): { readonly entries: DescribedConfig[] } | ResourceOutcome {
  if (groupId === '')
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Group name must not be empty' }
  const entries = coordinator.groupConfigs.describe(groupId).map(
    (e): DescribedConfig => ({
      name: e.name,
      value: e.value,
      readOnly: false,
      configSource: ConfigSource[e.source],
      isSensitive: false,
      synonyms: e.synonyms.map((s) => ({ name: s.name, value: s.value, source: ConfigSource[s.source] })),
      configType: configTypeId(e.type),
      documentation: e.documentation,
    }),
  )
  return { entries }
}
