/**
 * The console's JSON answers, computed from a ConsoleSource. Remembers the last description it saw
 * per group so that a group whose stored description lags its topology epoch still has a drawing,
 * flagged as being of another epoch.
 */
import type { StreamsGroupDescription, StreamsGroupTopologyDescription } from '../clients/admin/index.js'
import type {
  ApiError,
  DescriptionDownload,
  GroupResponse,
  GroupsResponse,
  GroupSummary,
  ShownDescription,
} from './api-types.js'
import type { ConsoleSource } from './source.js'

/** An API failure with the HTTP status it is answered with. */
export class ConsoleApiError extends Error {
  override name = 'ConsoleApiError'
  constructor(
    readonly status: number,
    readonly body: ApiError,
  ) {
    super(body.message)
  }
}

/** The error name the API reports: Kafka's (`GROUP_ID_NOT_FOUND`) when the error carries one. */
export function apiError(e: unknown): ApiError {
  if (e instanceof Error) {
    const name = (e as { errorName?: unknown }).errorName
    return { errorName: typeof name === 'string' ? name : e.name, message: e.message }
  }
  return { errorName: 'UNKNOWN', message: String(e) }
}

const byGroupId = (a: GroupSummary, b: GroupSummary): number =>
  a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0

export class ConsoleApi {
  readonly #source: ConsoleSource
  readonly #now: () => Date
  readonly #lastDescription = new Map<
    string,
    { topologyEpoch: number; description: StreamsGroupTopologyDescription }
  >()

  constructor(source: ConsoleSource, opts: { readonly now?: () => Date } = {}) {
    this.#source = source
    this.#now = opts.now ?? (() => new Date())
  }

  async groups(): Promise<GroupsResponse> {
    const listings = await this.#source.listStreamsGroups()
    const ids = [...new Set(listings.map((g) => g.groupId))]
    const described = await this.#source.describeStreamsGroups(ids)
    const groups = ids.map((groupId): GroupSummary => {
      const outcome = described.get(groupId)
      const listed = listings.find((g) => g.groupId === groupId)
      if (outcome === undefined || 'error' in outcome) {
        return {
          groupId,
          groupState: listed?.groupState ?? null,
          groupEpoch: null,
          topologyEpoch: null,
          memberCount: null,
          topologyDescriptionStatus: null,
          error:
            outcome === undefined
              ? { errorName: 'UNKNOWN', message: `No description of group ${groupId}` }
              : apiError(outcome.error),
        }
      }
      const g = outcome.value
      this.#remember(g)
      return {
        groupId,
        groupState: g.groupState,
        groupEpoch: g.groupEpoch,
        topologyEpoch: g.topologyEpoch,
        memberCount: g.members.length,
        topologyDescriptionStatus: g.topologyDescriptionStatus,
        error: null,
      }
    })
    return { groups: groups.sort(byGroupId), fetchedAt: this.#now().toISOString() }
  }

  async group(groupId: string): Promise<GroupResponse> {
    const described = await this.#source.describeStreamsGroups([groupId])
    const outcome = described.get(groupId)
    if (outcome === undefined) {
      throw new ConsoleApiError(502, { errorName: 'UNKNOWN', message: `No description of group ${groupId}` })
    }
    if ('error' in outcome) {
      const body = apiError(outcome.error)
      throw new ConsoleApiError(body.errorName === 'GROUP_ID_NOT_FOUND' ? 404 : 502, body)
    }
    const group = outcome.value
    this.#remember(group)
    return { group, shownDescription: this.#shown(group), fetchedAt: this.#now().toISOString() }
  }

  async descriptionDownload(groupId: string): Promise<DescriptionDownload> {
    const { group, shownDescription } = await this.group(groupId)
    if (shownDescription === null) {
      throw new ConsoleApiError(404, {
        errorName: 'TOPOLOGY_DESCRIPTION_NOT_AVAILABLE',
        message: `Group ${groupId} has no topology description (status ${group.topologyDescriptionStatus}).`,
      })
    }
    return {
      groupId,
      topologyEpoch: shownDescription.topologyEpoch,
      current: shownDescription.current,
      topologyDescription: shownDescription.description,
    }
  }

  #remember(g: StreamsGroupDescription): void {
    if (g.topologyDescriptionStatus === 'AVAILABLE' && g.topologyDescription !== null) {
      this.#lastDescription.set(g.groupId, {
        topologyEpoch: g.topologyEpoch,
        description: g.topologyDescription,
      })
    }
  }

  #shown(g: StreamsGroupDescription): ShownDescription | null {
    if (g.topologyDescriptionStatus === 'AVAILABLE' && g.topologyDescription !== null) {
      return { topologyEpoch: g.topologyEpoch, current: true, description: g.topologyDescription }
    }
    const last = this.#lastDescription.get(g.groupId)
    // A description remembered for the same epoch that is no longer available (plugin lost it, or
    // an ERROR) is not shown: only an older epoch's drawing is meaningful, and it is flagged.
    if (last === undefined || last.topologyEpoch === g.topologyEpoch) return null
    return { topologyEpoch: last.topologyEpoch, current: false, description: last.description }
  }
}
