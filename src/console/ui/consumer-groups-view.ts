/// <reference lib="dom" />
/**
 * Consumer groups (KIP-848) and classic groups: the list next to the streams groups, and one group's
 * page with its epochs (consumer groups), members (assignment, and target for a consumer group) and
 * the lag of each partition with the member owning it.
 */
import type {
  ClassicGroupDescription,
  ClassicGroupMemberDescription,
  ConsumerGroupDescription,
  ConsumerGroupMemberDescription,
} from '../../clients/admin/index.js'
import type { ConsumerGroupResponse, ConsumerGroupsResponse, ConsumerGroupSummary } from '../api-types.js'
import { h } from './dom.js'
import { lagSection } from './lag-table.js'

export const consumerGroupHref = (groupId: string): string =>
  `#/consumer-group/${encodeURIComponent(groupId)}`

const num = (v: number | null): string => (v === null ? '—' : String(v))

function summaryRow(g: ConsumerGroupSummary): HTMLElement {
  return h(
    'tr',
    { 'data-group-id': g.groupId, class: g.error === null ? null : 'has-error' },
    h('td', {}, h('a', { href: consumerGroupHref(g.groupId), class: 'group-link' }, g.groupId)),
    h('td', { 'data-col': 'type' }, g.groupType),
    h('td', { 'data-col': 'state' }, g.groupState ?? '—'),
    h('td', { class: 'num', 'data-col': 'group-epoch' }, num(g.groupEpoch)),
    h('td', { 'data-col': 'assignor' }, g.assignorName ?? '—'),
    h(
      'td',
      { class: 'num', 'data-col': 'members' },
      num(g.memberCount),
      g.error === null
        ? null
        : h('span', { class: 'error-text' }, ` ${g.error.errorName}: ${g.error.message}`),
    ),
  )
}

export function renderConsumerGroups(container: HTMLElement, data: ConsumerGroupsResponse): void {
  if (data.groups.length === 0) {
    container.replaceChildren(h('p', { class: 'empty' }, 'No consumer groups.'))
    return
  }
  container.replaceChildren(
    h(
      'table',
      { class: 'groups consumer-groups' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'Group'),
          h('th', {}, 'Type'),
          h('th', {}, 'State'),
          h('th', { class: 'num' }, 'Group epoch'),
          h('th', {}, 'Assignor'),
          h('th', { class: 'num' }, 'Members'),
        ),
      ),
      h('tbody', {}, ...data.groups.map(summaryRow)),
    ),
  )
}

/** Partitions as `topic-0, topic-1`, grouped per topic: `orders 0,1 · audit 2`. */
export function formatPartitions(ps: ConsumerGroupMemberDescription['assignment']): string {
  const byTopic = new Map<string, number[]>()
  for (const p of ps) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition])
  return [...byTopic].map(([t, parts]) => `${t} ${parts.join(',')}`).join(' · ') || '—'
}

function memberRow(m: ConsumerGroupMemberDescription): HTMLElement {
  const pending = formatPartitions(m.assignment) !== formatPartitions(m.targetAssignment)
  return h(
    'tr',
    { 'data-member-id': m.memberId, class: pending ? 'reconciling' : null },
    h('td', { class: 'mono' }, m.memberId),
    h('td', { 'data-col': 'client' }, `${m.clientId} ${m.clientHost}`),
    h('td', { class: 'num', 'data-col': 'member-epoch' }, String(m.memberEpoch)),
    h(
      'td',
      { 'data-col': 'subscription' },
      m.subscribedTopicRegex === null
        ? m.subscribedTopicNames.join(', ')
        : [...m.subscribedTopicNames, `/${m.subscribedTopicRegex}/`].join(', '),
    ),
    h('td', { 'data-col': 'assignment' }, formatPartitions(m.assignment)),
    h('td', { 'data-col': 'target' }, formatPartitions(m.targetAssignment)),
  )
}

function classicMemberRow(m: ClassicGroupMemberDescription): HTMLElement {
  return h(
    'tr',
    { 'data-member-id': m.memberId },
    h('td', { class: 'mono' }, m.memberId),
    h('td', { 'data-col': 'client' }, `${m.clientId} ${m.clientHost}`),
    h('td', { 'data-col': 'instance' }, m.instanceId ?? '—'),
    h('td', { 'data-col': 'assignment' }, formatPartitions(m.assignment)),
  )
}

function membersTable(headers: readonly string[], rows: readonly HTMLElement[]): HTMLElement {
  return rows.length === 0
    ? h('p', { class: 'hint' }, 'No members.')
    : h(
        'div',
        { class: 'table-scroll' },
        h(
          'table',
          { class: 'members' },
          h(
            'thead',
            {},
            h('tr', {}, ...headers.map((t) => h('th', { class: t === 'Epoch' ? 'num' : null }, t))),
          ),
          h('tbody', {}, ...rows),
        ),
      )
}

const detail = (label: string, field: string, value: string): HTMLElement[] => [
  h('dt', {}, label),
  h('dd', { 'data-field': field }, value),
]

function consumerDetails(g: ConsumerGroupDescription): HTMLElement[] {
  return [
    h(
      'dl',
      { class: 'details' },
      ...detail('State', 'state', g.groupState),
      ...detail('Group epoch', 'group-epoch', String(g.groupEpoch)),
      ...detail('Assignment epoch', 'assignment-epoch', String(g.targetAssignmentEpoch)),
      ...detail('Assignor', 'assignor', g.assignorName),
    ),
    h('h3', {}, `Members (${g.members.length})`),
    membersTable(
      ['Member', 'Client', 'Epoch', 'Subscription', 'Assignment', 'Target'],
      g.members.map(memberRow),
    ),
  ]
}

function classicDetails(g: ClassicGroupDescription): HTMLElement[] {
  return [
    h(
      'dl',
      { class: 'details' },
      ...detail('State', 'state', g.groupState),
      ...detail('Protocol type', 'protocol-type', g.protocolType || '—'),
      ...detail('Assignor', 'assignor', g.protocol || '—'),
    ),
    h('h3', {}, `Members (${g.members.length})`),
    membersTable(['Member', 'Client', 'Instance', 'Assignment'], g.members.map(classicMemberRow)),
  ]
}

export function renderConsumerGroup(container: HTMLElement, data: ConsumerGroupResponse): void {
  container.replaceChildren(
    h('p', {}, h('a', { href: '#/' }, '← Groups')),
    h(
      'h2',
      {},
      data.group.groupId,
      ' ',
      h('span', { class: 'group-type' }, data.groupType === 'classic' ? 'classic group' : 'consumer group'),
    ),
    ...(data.groupType === 'classic' ? classicDetails(data.group) : consumerDetails(data.group)),
    ...lagSection(data.offsets, data.offsetsError, true),
  )
}
