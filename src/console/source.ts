/**
 * Where the console gets its groups from. The production source is the admin client
 * (`topograph/admin`) against any cluster; tests of the UI may inject another implementation of the
 * same interface to produce states a cluster cannot be made to show on demand.
 */
import type { Admin, GroupListing, StreamsGroupDescription } from '../clients/admin/index.js'

export type DescribeOutcome = { readonly value: StreamsGroupDescription } | { readonly error: Error }

export interface ConsoleSource {
  /** Every streams group of the cluster. */
  listStreamsGroups(): Promise<readonly GroupListing[]>
  /** Each group described with its topology description; one outcome per requested id. */
  describeStreamsGroups(groupIds: readonly string[]): Promise<ReadonlyMap<string, DescribeOutcome>>
  close(): Promise<void>
}

export interface AdminSourceOptions {
  /** timeout of one admin call (10000): the console answers with an error rather than hang */
  readonly timeoutMs?: number
}

/** The admin-backed source. Closing it closes the admin client. */
export function adminConsoleSource(admin: Admin, opts: AdminSourceOptions = {}): ConsoleSource {
  const timeoutMs = opts.timeoutMs ?? 10_000
  return {
    listStreamsGroups: () => admin.listGroups({ types: ['streams'], timeoutMs }),
    describeStreamsGroups: async (groupIds) => {
      if (groupIds.length === 0) return new Map()
      const settled = await admin
        .describeStreamsGroups(groupIds, { includeTopologyDescription: true, timeoutMs })
        .settled()
      return new Map(
        [...settled].map(([k, v]): [string, DescribeOutcome] =>
          'value' in v ? [k, v] : [k, { error: v.error }],
        ),
      )
    },
    close: () => admin.close(),
  }
}
