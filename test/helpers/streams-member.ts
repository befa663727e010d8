// A streams group member driven by raw StreamsGroupHeartbeat requests (generated codec): it joins
// with a topology, adopts the tasks each response assigns at once (revoking the rest) and reports
// them back as owned, as a Kafka Streams client does after reconciling.
import type { StreamsGroupHeartbeatRequestTopology } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import type { StreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { WireClient } from '../server/wire-client.js'

export interface TaskList {
  subtopologyId: string
  partitions: number[]
}

/** What a caller that builds its heartbeats by hand keeps of a member between them. */
export interface HeartbeatingMember {
  readonly groupId: string
  readonly memberId: string
  epoch: number
  endpointEpoch: number
  active: TaskList[]
  standby: TaskList[]
  warmup: TaskList[]
}

/**
 * A StreamsGroupHeartbeat body for `m`: a steady one (every optional field null) without `join`,
 * else a join's (the topology and process id, an empty tag list, the owned tasks).
 */
export function heartbeatBody(
  m: HeartbeatingMember,
  join: { topology: StreamsGroupHeartbeatRequestTopology; processId: string } | null = null,
) {
  return {
    groupId: m.groupId,
    memberId: m.memberId,
    memberEpoch: m.epoch,
    endpointInformationEpoch: m.endpointEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: join !== null ? 30_000 : -1,
    topology: join?.topology ?? null,
    activeTasks: join !== null ? m.active : null,
    standbyTasks: join !== null ? m.standby : null,
    warmupTasks: join !== null ? m.warmup : null,
    processId: join?.processId ?? null,
    userEndpoint: null,
    clientTags: join !== null ? [] : null,
    taskOffsets: null,
    taskEndOffsets: null,
    shutdownApplication: false,
  }
}

/** Takes in what a successful heartbeat's answer tells the member (epochs, new task lists). */
export function adoptAnswer(m: HeartbeatingMember, body: StreamsGroupHeartbeatResponse): void {
  m.epoch = body.memberEpoch
  m.endpointEpoch = body.endpointInformationEpoch
  if (body.activeTasks !== null) m.active = body.activeTasks
  if (body.standbyTasks !== null) m.standby = body.standbyTasks
  if (body.warmupTasks !== null) m.warmup = body.warmupTasks
}

export function simpleTopology(
  sourceTopics: string[],
  options: { epoch?: number; changelog?: string; subtopologyId?: string } = {},
): StreamsGroupHeartbeatRequestTopology {
  return {
    epoch: options.epoch ?? 0,
    subtopologies: [
      {
        subtopologyId: options.subtopologyId ?? '0',
        sourceTopics,
        sourceTopicRegex: [],
        stateChangelogTopics:
          options.changelog === undefined
            ? []
            : [{ name: options.changelog, partitions: 0, replicationFactor: 0, topicConfigs: [] }],
        repartitionSinkTopics: [],
        repartitionSourceTopics: [],
        copartitionGroups:
          sourceTopics.length > 1
            ? [
                {
                  sourceTopics: sourceTopics.map((_, i) => i),
                  sourceTopicRegex: [],
                  repartitionSourceTopics: [],
                },
              ]
            : [],
      },
    ],
  }
}

export class StreamsMember {
  readonly client: WireClient
  readonly groupId: string
  readonly memberId: string
  readonly processId: string
  readonly instanceId: string | null
  topology: StreamsGroupHeartbeatRequestTopology
  epoch = 0
  active: TaskList[] = []
  standby: TaskList[] = []
  warmup: TaskList[] = []
  last: StreamsGroupHeartbeatResponse | undefined

  private constructor(
    client: WireClient,
    o: {
      groupId: string
      memberId: string
      processId: string
      instanceId?: string | null
      topology: StreamsGroupHeartbeatRequestTopology
    },
  ) {
    this.client = client
    this.groupId = o.groupId
    this.memberId = o.memberId
    this.processId = o.processId
    this.instanceId = o.instanceId ?? null
    this.topology = o.topology
  }

  static async connect(
    port: number,
    o: {
      groupId: string
      memberId: string
      processId: string
      instanceId?: string | null
      topology: StreamsGroupHeartbeatRequestTopology
    },
  ): Promise<StreamsMember> {
    return new StreamsMember(await WireClient.connect(port), o)
  }

  /** One heartbeat; a join (epoch 0) sends the topology. Returns the response. */
  async heartbeat(extra: Record<string, unknown> = {}): Promise<StreamsGroupHeartbeatResponse> {
    const joining = this.epoch === 0
    const { body } = await this.client.request<StreamsGroupHeartbeatResponse>(88, 1, {
      groupId: this.groupId,
      memberId: this.memberId,
      memberEpoch: this.epoch,
      endpointInformationEpoch: 0,
      instanceId: this.instanceId,
      rackId: null,
      rebalanceTimeoutMs: joining ? 5000 : -1,
      topology: joining ? this.topology : null,
      activeTasks: this.active,
      standbyTasks: this.standby,
      warmupTasks: this.warmup,
      processId: joining ? this.processId : null,
      userEndpoint: null,
      clientTags: joining ? [] : null,
      taskOffsets: null,
      taskEndOffsets: null,
      shutdownApplication: false,
      ...extra,
    })
    this.last = body
    if (body.errorCode !== 0) return body
    this.epoch = body.memberEpoch
    if (body.activeTasks !== null) this.active = body.activeTasks
    if (body.standbyTasks !== null) this.standby = body.standbyTasks
    if (body.warmupTasks !== null) this.warmup = body.warmupTasks
    return body
  }

  /**
   * Heartbeats until the member holds active tasks, or `timeoutMs` passes (a new group stays
   * NotReady until its internal topics exist, which the server creates in the background).
   * Every answer must be error-free. Returns whether tasks came.
   */
  async untilActive(timeoutMs = 20_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (this.epoch === 0 || this.active.length === 0) {
      const r = await this.heartbeat()
      if (r.errorCode !== 0) throw new Error(`heartbeat: error ${r.errorCode} ${r.errorMessage ?? ''}`)
      if (this.active.length > 0) break
      if (Date.now() >= deadline) return false
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return true
  }

  /** Leaves (-1, or -2 for a static member that will come back). */
  async leave(epoch: -1 | -2 = -1): Promise<StreamsGroupHeartbeatResponse> {
    const r = await this.heartbeat({ memberEpoch: epoch })
    this.epoch = 0
    this.active = []
    this.standby = []
    this.warmup = []
    return r
  }

  activePartitions(): string[] {
    return this.active.flatMap((t) => t.partitions.map((p) => `${t.subtopologyId}-${p}`))
  }

  close(): void {
    this.client.close()
  }
}
