/// <reference lib="dom" />
/** The console's JSON API as the page calls it. */
import type {
  ApiError,
  ConsumerGroupResponse,
  ConsumerGroupsResponse,
  GroupResponse,
  GroupsResponse,
  TopicsResponse,
  TransactionsResponse,
} from '../api-types.js'

export class FetchError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiError | null,
  ) {
    super(body?.message ?? `HTTP ${status}`)
  }
}

async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' }, signal })
  const text = await res.text()
  if (!res.ok) {
    let body: ApiError | null = null
    try {
      body = JSON.parse(text) as ApiError
    } catch {
      // not JSON: keep the status only
    }
    throw new FetchError(res.status, body)
  }
  return JSON.parse(text) as T
}

export const fetchGroups = (signal?: AbortSignal): Promise<GroupsResponse> =>
  getJson<GroupsResponse>('api/groups', signal)

export const groupPath = (groupId: string): string => `api/groups/${encodeURIComponent(groupId)}`

export const fetchGroup = (groupId: string, signal?: AbortSignal): Promise<GroupResponse> =>
  getJson<GroupResponse>(groupPath(groupId), signal)

export const descriptionUrl = (groupId: string): string => `${groupPath(groupId)}/topology-description.json`

export const fetchTopics = (signal?: AbortSignal): Promise<TopicsResponse> =>
  getJson<TopicsResponse>('api/topics', signal)

export const fetchTransactions = (signal?: AbortSignal): Promise<TransactionsResponse> =>
  getJson<TransactionsResponse>('api/transactions', signal)

export const fetchConsumerGroups = (signal?: AbortSignal): Promise<ConsumerGroupsResponse> =>
  getJson<ConsumerGroupsResponse>('api/consumer-groups', signal)

export const fetchConsumerGroup = (groupId: string, signal?: AbortSignal): Promise<ConsumerGroupResponse> =>
  getJson<ConsumerGroupResponse>(`api/consumer-groups/${encodeURIComponent(groupId)}`, signal)
