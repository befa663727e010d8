/// <reference lib="dom" />
/** The list of streams groups. */
import type { GroupsResponse, GroupSummary } from '../api-types.js'
import { h } from './dom.js'

export const groupHref = (groupId: string): string => `#/group/${encodeURIComponent(groupId)}`

/** The topology-description status as a badge (`data-status` carries the raw value). */
export function statusBadge(status: string | null): HTMLElement {
  const value = status ?? 'UNKNOWN'
  const title: Record<string, string> = {
    AVAILABLE: 'The coordinator holds a topology description for the current topology epoch',
    NOT_STORED: 'No topology description is stored for the current topology epoch',
    ERROR: 'The coordinator failed to fetch the stored description from its plugin',
    NOT_REQUESTED: 'The broker did not look up a description (it may not support KIP-1331)',
    UNKNOWN: 'The group could not be described',
  }
  return h(
    'span',
    { class: `badge badge-${value.toLowerCase()}`, 'data-status': value, title: title[value] ?? value },
    value,
  )
}

const num = (v: number | null): string => (v === null ? '—' : String(v))

function row(g: GroupSummary): HTMLElement {
  return h(
    'tr',
    { 'data-group-id': g.groupId, class: g.error === null ? null : 'has-error' },
    h('td', {}, h('a', { href: groupHref(g.groupId), class: 'group-link' }, g.groupId)),
    h('td', { 'data-col': 'state' }, g.groupState ?? '—'),
    h('td', { class: 'num', 'data-col': 'group-epoch' }, num(g.groupEpoch)),
    h('td', { class: 'num', 'data-col': 'topology-epoch' }, num(g.topologyEpoch)),
    h('td', { class: 'num', 'data-col': 'members' }, num(g.memberCount)),
    h(
      'td',
      { 'data-col': 'status' },
      statusBadge(g.topologyDescriptionStatus),
      g.error === null
        ? null
        : h('span', { class: 'error-text' }, ` ${g.error.errorName}: ${g.error.message}`),
    ),
  )
}

export function renderGroups(container: HTMLElement, data: GroupsResponse): void {
  if (data.groups.length === 0) {
    container.replaceChildren(
      h('p', { class: 'empty' }, 'No streams groups yet. Start an application, or run `topograph demo`.'),
    )
    return
  }
  container.replaceChildren(
    h(
      'table',
      { class: 'groups' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'Group'),
          h('th', {}, 'State'),
          h('th', { class: 'num' }, 'Group epoch'),
          h('th', { class: 'num' }, 'Topology epoch'),
          h('th', { class: 'num' }, 'Members'),
          h('th', {}, 'Topology description'),
        ),
      ),
      h('tbody', {}, ...data.groups.map(row)),
    ),
  )
}
