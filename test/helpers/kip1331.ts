// KIP-1331 test fixtures: an in-process server with the controllable test plugin (or none), the
// control and call-log files, raw pushes (API 93), describes (API 89 v1) and deletes (API 42), and a
// read of a group's description epochs from the coordinator.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { GroupCoordinatorService } from '../../src/coordinator/service/group-coordinator-service.js'
import { coordinatorFrom } from '../../src/coordinator/service/index.js'
import type { StreamsGroupDescribeResponse } from '../../src/protocol/generated/messages/StreamsGroupDescribeResponse.js'
import type { StreamsGroupTopologyDescriptionUpdateRequestTopologyDescription } from '../../src/protocol/generated/messages/StreamsGroupTopologyDescriptionUpdateRequest.js'
import type { StreamsGroupTopologyDescriptionUpdateResponse } from '../../src/protocol/generated/messages/StreamsGroupTopologyDescriptionUpdateResponse.js'
import type { StartServerOptions } from '../../src/server/server.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import type { WireClient } from '../server/wire-client.js'
import {
  BACKEND_KEY,
  type CallLogEntry,
  CONTROL_FILE_KEY,
  type Control,
  LOG_FILE_KEY,
  readCallLog,
} from './controllable-plugin.js'
import { simpleTopology, StreamsMember } from './streams-member.js'
import { startTopographProcess, type TopographProcess } from './topograph-process.js'

export const PLUGIN_MODULE = 'test/helpers/controllable-plugin.ts'

export interface PluginFiles {
  readonly dir: string
  readonly controlFile: string
  readonly logFile: string
  /** The plugin's own configuration entries. */
  readonly configs: Record<string, string>
  control(c: Control): void
  calls(): CallLogEntry[]
  remove(): void
}

export function pluginFiles(backend: 'memory' | 'sqlite' = 'memory'): PluginFiles {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-plugin-'))
  const controlFile = join(dir, 'control.json')
  const logFile = join(dir, 'calls.jsonl')
  writeFileSync(controlFile, '{}')
  return {
    dir,
    controlFile,
    logFile,
    configs: {
      'group.streams.topology.description.plugin.class': PLUGIN_MODULE,
      [CONTROL_FILE_KEY]: controlFile,
      [LOG_FILE_KEY]: logFile,
      [BACKEND_KEY]: backend,
      'topology.description.sqlite.path': join(dir, 'descriptions.db'),
    },
    control: (c) => writeFileSync(controlFile, JSON.stringify(c)),
    calls: () => readCallLog(logFile),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

export interface KipServer {
  readonly test: TestServer
  readonly port: number
  readonly service: GroupCoordinatorService
  readonly plugin: PluginFiles | null
  /** Closes the server; with `keepData` its data.dir survives for a restart. */
  stop(keepData?: boolean): Promise<void>
}

/** Base settings: immediate assignment, short heartbeats. */
export const FAST_GROUPS: Record<string, string> = {
  'group.streams.initial.rebalance.delay.ms': '0',
  'group.streams.assignment.interval.ms': '0',
  'group.streams.heartbeat.interval.ms': '100',
  'group.streams.min.heartbeat.interval.ms': '100',
  'group.streams.session.timeout.ms': '6000',
  'group.streams.min.session.timeout.ms': '6000',
  'offsets.topic.num.partitions': '3',
}

export async function startKipServer(
  options: {
    readonly plugin?: 'memory' | 'sqlite' | null
    readonly overrides?: Record<string, string>
    readonly server?: StartServerOptions
    readonly dataDir?: string
    /** Reuse these plugin files (a restart); the caller removes them. */
    readonly pluginFiles?: PluginFiles
  } = {},
): Promise<KipServer> {
  const plugin =
    options.pluginFiles ?? (options.plugin === null ? null : pluginFiles(options.plugin ?? 'memory'))
  const owned = options.pluginFiles === undefined
  let test: TestServer
  try {
    test = await startTestServer(
      { ...FAST_GROUPS, ...(plugin?.configs ?? {}), ...(options.overrides ?? {}) },
      options.server ?? {},
      options.dataDir,
    )
  } catch (e) {
    if (owned) plugin?.remove()
    throw e
  }
  return {
    test,
    port: test.port,
    service: coordinatorFrom(test.server.context.coordinator),
    plugin,
    async stop(keepData = false) {
      await test.stop(keepData)
      if (owned) plugin?.remove()
    },
  }
}

/** A real `topograph start` process on sqlite coordinator storage with FAST_GROUPS and the plugin. */
export function startKipProcess(
  dataDir: string,
  plugin: PluginFiles,
  extra: Record<string, string> = {},
): Promise<TopographProcess> {
  return startTopographProcess({
    'data.dir': dataDir,
    'coordinator.storage': 'sqlite',
    ...FAST_GROUPS,
    ...plugin.configs,
    ...extra,
  })
}

export interface DescriptionEpochs {
  readonly stored: number
  readonly failed: number
}

/** The group's StoredDescriptionTopologyEpoch / FailedDescriptionTopologyEpoch (undefined: no streams group). */
export function descriptionEpochs(
  service: GroupCoordinatorService,
  groupId: string,
): Promise<DescriptionEpochs | undefined> {
  return service.scheduleReadOperation('test-read-description-epochs', groupId, (shard) => {
    const g = shard.streams.group(groupId)
    return g === undefined
      ? undefined
      : { stored: g.storedDescriptionTopologyEpoch, failed: g.failedDescriptionTopologyEpoch }
  })
}

/** A small wire description: source → processor (store) → sink, and one global store. */
export function wireDescription(
  topic = 'input',
): StreamsGroupTopologyDescriptionUpdateRequestTopologyDescription {
  const node = (name: string, nodeType: number, extra: Partial<Record<string, unknown>> = {}) => ({
    name,
    nodeType,
    sourceTopics: [],
    sinkTopic: null,
    stores: [],
    successors: [],
    ...extra,
  })
  return {
    subtopologies: [
      {
        subtopologyId: '0',
        nodes: [
          node('KSTREAM-SOURCE-0000000000', 1, {
            sourceTopics: [topic],
            successors: ['KSTREAM-AGG-0000000001'],
          }),
          node('KSTREAM-AGG-0000000001', 2, { stores: ['counts'], successors: ['KSTREAM-SINK-0000000002'] }),
          node('KSTREAM-SINK-0000000002', 3, { sinkTopic: 'output' }),
        ],
      },
    ],
    globalStores: [
      {
        source: node('KSTREAM-SOURCE-0000000003', 1, {
          sourceTopics: ['global-topic'],
          successors: ['KTABLE-SOURCE-0000000004'],
        }),
        processor: node('KTABLE-SOURCE-0000000004', 2, { stores: ['global-store'] }),
      },
    ],
  }
}

export async function push(
  client: WireClient,
  groupId: string,
  memberId: string,
  topologyEpoch: number,
  description: StreamsGroupTopologyDescriptionUpdateRequestTopologyDescription = wireDescription(),
): Promise<StreamsGroupTopologyDescriptionUpdateResponse> {
  const { body } = await client.request<StreamsGroupTopologyDescriptionUpdateResponse>(93, 0, {
    groupId,
    memberId,
    topologyEpoch,
    topologyDescription: description,
  })
  return body
}

export async function describeTopology(
  client: WireClient,
  groupIds: string[],
  includeTopologyDescription = true,
  version = 1,
): Promise<StreamsGroupDescribeResponse['groups']> {
  const { body } = await client.request<StreamsGroupDescribeResponse>(89, version, {
    groupIds,
    includeAuthorizedOperations: false,
    includeTopologyDescription,
  })
  return body.groups
}

export async function deleteGroups(
  client: WireClient,
  groupIds: string[],
  version = 3,
): Promise<{ groupId: string; errorCode: number; errorMessage: string | null }[]> {
  const { body } = await client.request<{
    results: { groupId: string; errorCode: number; errorMessage: string | null }[]
  }>(42, version, { groupsNames: groupIds })
  return body.results
}

/** A raw member of `groupId` on a topic that need not exist (the group is NotReady, which is fine). */
export async function joinMember(
  port: number,
  groupId: string,
  memberId = `${groupId}-m1`,
  options: { topologyEpoch?: number; topic?: string } = {},
): Promise<StreamsMember> {
  const m = await StreamsMember.connect(port, {
    groupId,
    memberId,
    processId: `${memberId}-process`,
    topology: simpleTopology([options.topic ?? 'input'], { epoch: options.topologyEpoch ?? 0 }),
  })
  return m
}

export async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 8000,
): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
