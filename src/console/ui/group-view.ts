/// <reference lib="dom" />
/**
 * One group: the topology drawing (pan, zoom, fit, node details), the members with their tasks,
 * which member runs which subtopology partition, and the flags (STALE_TOPOLOGY members, a drawing of
 * another topology epoch). Refreshes re-render the panels; the drawing is laid out again only when
 * the description changes, and keeps the current zoom.
 */
import type { StreamsGroupMemberDescription } from '../../clients/admin/index.js'
import type { GroupReadiness, GroupResponse } from '../api-types.js'
import { formatTasks, type GroupFlag, groupFlags, taskOwnership } from '../assignments.js'
import { layoutGraph } from '../layout.js'
import { type GraphNode, type TopologyGraph, topicNodeId, topologyGraph } from '../model.js'
import { descriptionUrl } from './api-client.js'
import { lagSection } from './lag-table.js'
import { h, s } from './dom.js'
import { type RenderedGraph, renderGraph, svgDocument } from './graph-svg.js'
import { statusBadge } from './groups-view.js'
import { PanZoom } from './panzoom.js'

const memberLabel = (m: StreamsGroupMemberDescription): string => m.instanceId ?? m.memberId.slice(0, 12)

function flagText(f: GroupFlag, members: readonly StreamsGroupMemberDescription[]): string {
  if (f.kind === 'stale-topology') {
    const m = members.find((x) => x.memberId === f.memberId)
    return `STALE_TOPOLOGY: member ${m === undefined ? f.memberId : memberLabel(m)} is at topology epoch ${f.memberEpoch}, the group at ${f.groupEpoch}.`
  }
  return `The drawn description is stored for topology epoch ${f.descriptionEpoch}, but the group is at topology epoch ${f.groupEpoch}: no description is available for the current epoch.`
}

const topicList = (ts: readonly string[]): string => ts.join(', ')

/** Why a NotReady group is not ready, one line per kind of problem its topics show. */
export function notReadyTexts(r: GroupReadiness): string[] {
  const lines: string[] = []
  const n = (xs: readonly unknown[], one: string, many: string) => (xs.length === 1 ? one : many)
  if (r.missingSourceTopics.length > 0)
    lines.push(
      `NOT_READY: source ${n(r.missingSourceTopics, 'topic', 'topics')} ${topicList(r.missingSourceTopics)} ${n(r.missingSourceTopics, 'is', 'are')} missing. The group assigns no tasks until ${n(r.missingSourceTopics, 'it is', 'they are')} created.`,
    )
  if (r.missingInternalTopics.length > 0)
    lines.push(
      `NOT_READY: internal ${n(r.missingInternalTopics, 'topic', 'topics')} ${topicList(r.missingInternalTopics)} ${n(r.missingInternalTopics, 'is', 'are')} missing. The coordinator creates ${n(r.missingInternalTopics, 'it', 'them')} on a member's heartbeat.`,
    )
  if (r.incorrectlyPartitionedTopics.length > 0)
    lines.push(
      `NOT_READY: incorrectly partitioned ${n(r.incorrectlyPartitionedTopics, 'topic', 'topics')}: ${r.incorrectlyPartitionedTopics
        .map((t) => `${t.topic} has ${t.actual} partitions, the topology needs ${t.expected}`)
        .join('; ')}.`,
    )
  if (r.error !== null)
    lines.push(`NOT_READY: the group's topics could not be checked: ${r.error.errorName}: ${r.error.message}`)
  if (lines.length === 0)
    lines.push(
      "NOT_READY: every topic the topology names exists. The coordinator has not validated this topology epoch yet (it does on a member's heartbeat), or the source topics are not co-partitioned as the topology requires.",
    )
  return lines
}

function noDescriptionText(status: string, epoch: number): string {
  switch (status) {
    case 'NOT_STORED':
      return `No topology description is stored for topology epoch ${epoch}. A member pushes one when the coordinator asks for it.`
    case 'ERROR':
      return 'The coordinator could not fetch the stored topology description from its plugin.'
    case 'NOT_REQUESTED':
      return 'The broker returned no topology description status: it may not support KIP-1331.'
    default:
      return `No topology description (${status}).`
  }
}

export class GroupView {
  readonly root: HTMLElement
  readonly #groupId: string
  readonly #header = h('div', { class: 'group-header' })
  readonly #flags = h('ul', { class: 'flags' })
  readonly #graphArea = h('div', { class: 'graph-area' })
  readonly #svg = s('svg', { class: 'graph', 'data-testid': 'topology' })
  readonly #message = h('div', { class: 'graph-message', hidden: true })
  readonly #details = h('section', { class: 'details', 'aria-live': 'polite' })
  readonly #members = h('section', { class: 'members' })
  readonly #tasks = h('section', { class: 'tasks' })
  readonly #lag = h('section', { class: 'lag' })
  readonly #panZoom: PanZoom
  #descriptionKey: string | null = null
  #graph: TopologyGraph | null = null
  #rendered: RenderedGraph | null = null
  #selected: string | null = null
  #data: GroupResponse | null = null
  #layoutRun = 0

  constructor(groupId: string) {
    this.#groupId = groupId
    this.#panZoom = new PanZoom(this.#svg)
    const toolbar = h(
      'div',
      { class: 'toolbar' },
      h(
        'button',
        {
          type: 'button',
          'data-action': 'fit',
          onclick: () => this.#panZoom.fit(),
          title: 'Fit the drawing',
        },
        'Fit',
      ),
      h('button', { type: 'button', 'data-action': 'zoom-in', onclick: () => this.#panZoom.zoom(1.4) }, '+'),
      h(
        'button',
        { type: 'button', 'data-action': 'zoom-out', onclick: () => this.#panZoom.zoom(1 / 1.4) },
        '−',
      ),
      h(
        'button',
        { type: 'button', 'data-action': 'download-svg', onclick: () => this.#downloadSvg() },
        'Download SVG',
      ),
      h(
        'a',
        { class: 'button', 'data-action': 'download-json', href: descriptionUrl(groupId), download: '' },
        'Download JSON',
      ),
    )
    this.#svg.addEventListener('click', (e) => this.#onGraphClick(e))
    this.#svg.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') this.#onGraphClick(e)
    })
    this.#graphArea.append(this.#svg, this.#message)
    this.#details.append(h('p', { class: 'hint' }, 'Click a node or a sub-topology for its details.'))
    this.root = h(
      'div',
      { class: 'group-view', 'data-group-id': groupId },
      this.#header,
      this.#flags,
      h(
        'div',
        { class: 'group-body' },
        h('div', { class: 'graph-column' }, toolbar, this.#graphArea),
        h('aside', { class: 'side' }, this.#details, this.#members, this.#tasks, this.#lag),
      ),
    )
  }

  /** Shows a refresh; resolves once the drawing (if it changed) is laid out. */
  async update(data: GroupResponse): Promise<void> {
    this.#data = data
    const g = data.group
    this.#header.replaceChildren(
      h('a', { href: '#/', class: 'back' }, '← Groups'),
      h('h2', {}, g.groupId),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'State'),
        h('dd', { 'data-fact': 'state' }, g.groupState),
        h('dt', {}, 'Group epoch'),
        h('dd', { 'data-fact': 'group-epoch' }, String(g.groupEpoch)),
        h('dt', {}, 'Topology epoch'),
        h('dd', { 'data-fact': 'topology-epoch' }, String(g.topologyEpoch)),
        h('dt', {}, 'Assignment epoch'),
        h('dd', {}, String(g.targetAssignmentEpoch)),
        h('dt', {}, 'Members'),
        h('dd', { 'data-fact': 'members' }, String(g.members.length)),
        h('dt', {}, 'Description'),
        h('dd', {}, statusBadge(g.topologyDescriptionStatus)),
      ),
    )
    const flags = groupFlags(g, data.shownDescription)
    this.#flags.replaceChildren(
      ...(data.readiness === null
        ? []
        : notReadyTexts(data.readiness).map((text) =>
            h('li', { class: 'flag flag-not-ready', 'data-flag': 'not-ready' }, text),
          )),
      ...flags.map((f) =>
        h('li', { class: `flag flag-${f.kind}`, 'data-flag': f.kind }, flagText(f, g.members)),
      ),
    )
    this.#renderMembers(data)
    this.#renderTasks(data)
    this.#renderLag(data)
    const shown = data.shownDescription
    const key = shown === null ? null : `${shown.topologyEpoch}:${JSON.stringify(shown.description)}`
    if (shown === null) {
      this.#descriptionKey = null
      this.#graph = null
      this.#rendered = null
      this.#svg.replaceChildren()
      this.#svg.dataset.state = 'empty'
      this.#message.hidden = false
      this.#message.textContent = noDescriptionText(g.topologyDescriptionStatus, g.topologyEpoch)
      return
    }
    this.#message.hidden = true
    if (key === this.#descriptionKey) {
      this.#markMissingTopics()
      this.#renderDetails()
      return
    }
    const firstDrawing = this.#descriptionKey === null
    this.#descriptionKey = key
    const graph = topologyGraph(shown.description)
    const run = ++this.#layoutRun
    this.#svg.dataset.state = 'layout'
    const layout = await layoutGraph(graph)
    // A newer refresh started its own layout meanwhile: it wins.
    if (run !== this.#layoutRun) return
    this.#graph = graph
    this.#rendered = renderGraph(this.#svg, layout)
    this.#panZoom.setContent({ x: 0, y: 0, width: layout.width, height: layout.height }, !firstDrawing)
    this.#svg.dataset.state = 'drawn'
    this.#svg.dataset.epoch = String(shown.topologyEpoch)
    if (this.#selected !== null && !graph.nodes.some((n) => n.id === this.#selected)) this.#selected = null
    this.#applySelection()
    this.#markMissingTopics()
    this.#renderDetails()
  }

  /** Topic nodes of topics a NotReady group misses are drawn as missing. */
  #markMissingTopics(): void {
    const r = this.#data?.readiness ?? null
    const missing = new Set(
      r === null ? [] : [...r.missingSourceTopics, ...r.missingInternalTopics].map(topicNodeId),
    )
    this.#svg.querySelectorAll<SVGElement>('.tg-node-topic').forEach((el) => {
      const id = el.getAttribute('data-id') ?? ''
      el.classList.toggle('tg-node-missing', missing.has(id))
      if (missing.has(id)) el.setAttribute('data-missing', 'true')
      else el.removeAttribute('data-missing')
    })
  }

  #onGraphClick(e: Event): void {
    const target = e.target instanceof Element ? e.target : null
    const node = target?.closest('[data-id]')
    this.#selected = node?.getAttribute('data-id') ?? null
    this.#applySelection()
    this.#renderDetails()
  }

  #applySelection(): void {
    this.#svg.querySelectorAll('.selected, .highlight').forEach((el) => {
      el.classList.remove('selected', 'highlight')
    })
    if (this.#selected === null) return
    const sel = CSS.escape(this.#selected)
    this.#svg.querySelector(`.tg-node[data-id="${sel}"]`)?.classList.add('selected')
    this.#svg
      .querySelectorAll(`.tg-edge[data-source="${sel}"], .tg-edge[data-target="${sel}"]`)
      .forEach((el) => {
        el.classList.add('highlight')
      })
  }

  #renderDetails(): void {
    const graph = this.#graph
    const data = this.#data
    if (graph === null || data === null || this.#selected === null) {
      this.#details.replaceChildren(
        h('p', { class: 'hint' }, 'Click a node or a sub-topology for its details.'),
      )
      return
    }
    const node = graph.nodes.find((n) => n.id === this.#selected)
    const box = graph.boxes.find((b) => b.id === (node?.box ?? this.#selected))
    const parts: HTMLElement[] = []
    if (node !== undefined) parts.push(this.#nodeDetails(node))
    if (box !== undefined && box.kind === 'subtopology') parts.push(this.#subtopologyTasks(box.key))
    else if (box !== undefined && node === undefined) parts.push(h('h3', {}, box.label))
    this.#details.replaceChildren(...parts)
  }

  #nodeDetails(node: GraphNode): HTMLElement {
    return h(
      'div',
      { class: 'node-details', 'data-node-id': node.id },
      h('h3', {}, node.label),
      h('dl', {}, ...node.details.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    )
  }

  #subtopologyTasks(subtopologyId: string): HTMLElement {
    const data = this.#data!
    const owners = taskOwnership(data.group.members, [subtopologyId]).find(
      (t) => t.subtopologyId === subtopologyId,
    )
    const byId = new Map(data.group.members.map((m) => [m.memberId, m]))
    const names = (ids: readonly string[]): string =>
      ids.length === 0
        ? '—'
        : ids
            .map((id) => {
              const m = byId.get(id)
              return m === undefined ? id : `${memberLabel(m)} (process ${m.processId.slice(0, 8)})`
            })
            .join(', ')
    const rows = owners?.partitions ?? []
    return h(
      'div',
      { class: 'subtopology-tasks' },
      h('h4', {}, `Tasks of sub-topology ${subtopologyId}`),
      rows.length === 0
        ? h('p', { class: 'hint' }, 'No member runs a task of this sub-topology.')
        : h(
            'table',
            {},
            h(
              'thead',
              {},
              h('tr', {}, h('th', {}, 'Partition'), h('th', {}, 'Active'), h('th', {}, 'Standby')),
            ),
            h(
              'tbody',
              {},
              ...rows.map((p) =>
                h(
                  'tr',
                  {},
                  h('td', { class: 'num' }, p.partition),
                  h('td', {}, names(p.active)),
                  h('td', {}, names(p.standby)),
                ),
              ),
            ),
          ),
    )
  }

  #renderMembers(data: GroupResponse): void {
    const g = data.group
    if (g.members.length === 0) {
      this.#members.replaceChildren(h('h3', {}, 'Members'), h('p', { class: 'hint' }, 'No members.'))
      return
    }
    this.#members.replaceChildren(
      h('h3', {}, `Members (${g.members.length})`),
      h(
        'table',
        { class: 'members-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Member'),
            h('th', {}, 'Process'),
            h('th', {}, 'Epochs'),
            h('th', {}, 'Active'),
            h('th', {}, 'Standby'),
            h('th', {}, 'Warm-up'),
          ),
        ),
        h(
          'tbody',
          {},
          ...g.members.map((m) =>
            h(
              'tr',
              { 'data-member-id': m.memberId, class: m.topologyEpoch < g.topologyEpoch ? 'stale' : null },
              h(
                'td',
                { title: `${m.memberId}\nclient ${m.clientId} on ${m.clientHost}` },
                memberLabel(m),
                h('div', { class: 'sub' }, m.clientId),
              ),
              h('td', { title: m.processId }, m.processId.slice(0, 8)),
              h(
                'td',
                { class: 'num' },
                `${m.memberEpoch} / ${m.topologyEpoch}`,
                m.topologyEpoch < g.topologyEpoch
                  ? h(
                      'span',
                      { class: 'badge badge-stale', 'data-status': 'STALE_TOPOLOGY' },
                      'STALE_TOPOLOGY',
                    )
                  : null,
              ),
              h('td', {}, formatTasks(m.assignment.activeTasks)),
              h('td', {}, formatTasks(m.assignment.standbyTasks)),
              h('td', {}, formatTasks(m.assignment.warmupTasks)),
            ),
          ),
        ),
      ),
    )
  }

  #renderTasks(data: GroupResponse): void {
    const g = data.group
    const ownership = taskOwnership(
      g.members,
      g.subtopologies.map((s) => s.subtopologyId),
    )
    const byId = new Map(g.members.map((m) => [m.memberId, m]))
    const label = (ids: readonly string[]): string =>
      ids.length === 0 ? '—' : ids.map((id) => (byId.has(id) ? memberLabel(byId.get(id)!) : id)).join(', ')
    this.#tasks.replaceChildren(
      h('h3', {}, 'Who runs what'),
      ownership.length === 0
        ? h('p', { class: 'hint' }, 'No sub-topologies.')
        : h(
            'table',
            { class: 'ownership' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', {}, 'Task'),
                h('th', {}, 'Active'),
                h('th', {}, 'Standby'),
                h('th', {}, 'Warm-up'),
              ),
            ),
            h(
              'tbody',
              {},
              ...ownership.flatMap((st) =>
                st.partitions.length === 0
                  ? [
                      h(
                        'tr',
                        {},
                        h('td', {}, `${st.subtopologyId}_*`),
                        h('td', { colspan: 3, class: 'hint' }, 'unassigned'),
                      ),
                    ]
                  : st.partitions.map((p) =>
                      h(
                        'tr',
                        { 'data-task': `${st.subtopologyId}_${p.partition}` },
                        h('td', {}, `${st.subtopologyId}_${p.partition}`),
                        h('td', {}, label(p.active)),
                        h('td', {}, label(p.standby)),
                        h('td', {}, label(p.warmup)),
                      ),
                    ),
              ),
            ),
          ),
    )
  }

  #renderLag(data: GroupResponse): void {
    this.#lag.replaceChildren(...lagSection(data.offsets, data.offsetsError, false))
  }

  #downloadSvg(): void {
    if (this.#rendered === null) return
    const text = svgDocument(this.#rendered, `Topology of ${this.#groupId}`)
    const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }))
    const a = h('a', {
      href: url,
      download: `${this.#groupId.replace(/[^A-Za-z0-9._-]/g, '_')}-topology.svg`,
    })
    document.body.append(a)
    a.click()
    a.remove()
    setTimeout(() => URL.revokeObjectURL(url), 10_000)
  }
}
