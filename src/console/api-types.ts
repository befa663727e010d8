/**
 * The console's HTTP JSON API (docs/console.md). The browser bundle imports these types only.
 */
import type {
  StreamsGroupDescription,
  StreamsGroupTopologyDescription,
  StreamsGroupTopologyDescriptionStatus,
} from '../clients/admin/index.js'

/** A failure the API reports: Kafka's error name (`GROUP_ID_NOT_FOUND`) or a local one. */
export interface ApiError {
  readonly errorName: string
  readonly message: string
}

/** One row of `GET /api/groups`. The numbers are null when the group could not be described. */
export interface GroupSummary {
  readonly groupId: string
  readonly groupState: string | null
  readonly groupEpoch: number | null
  readonly topologyEpoch: number | null
  readonly memberCount: number | null
  readonly topologyDescriptionStatus: StreamsGroupTopologyDescriptionStatus | null
  readonly error: ApiError | null
}

export interface GroupsResponse {
  readonly groups: readonly GroupSummary[]
  /** ISO-8601 time of the answer */
  readonly fetchedAt: string
}

/**
 * The description the console draws for a group. `current` is false when the coordinator has no
 * description for the group's topology epoch and this is the last one the console saw, for an older
 * epoch: the drawing is then flagged as not matching the group.
 */
export interface ShownDescription {
  readonly topologyEpoch: number
  readonly current: boolean
  readonly description: StreamsGroupTopologyDescription
}

/** `GET /api/groups/{groupId}` */
export interface GroupResponse {
  readonly group: StreamsGroupDescription
  readonly shownDescription: ShownDescription | null
  readonly fetchedAt: string
}

/** `GET /api/groups/{groupId}/topology-description.json` */
export interface DescriptionDownload {
  readonly groupId: string
  readonly topologyEpoch: number
  readonly current: boolean
  readonly topologyDescription: StreamsGroupTopologyDescription
}
