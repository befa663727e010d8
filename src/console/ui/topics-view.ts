/// <reference lib="dom" />
/**
 * The topics: each partition with its log start and end offsets, the offsets between them and its
 * size. The offsets are not a record count: control records (transaction markers) take offsets too,
 * and counting records would mean reading the logs.
 */
import type { TopicsResponse, TopicSummary } from '../api-types.js'
import { h } from './dom.js'

const num = (v: number | null): string => (v === null ? '—' : String(v))

/** The tooltip of the Offsets column. */
export const OFFSETS_TITLE =
  'Log end offset − log start offset. Not a record count: control records, such as the markers ' +
  'that commit or abort a transaction, take offsets too.'

/** Bytes as a short human figure (1.2 KiB); the exact number is in the cell's title. */
export function formatBytes(n: number | null): string {
  if (n === null) return '—'
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let u = 0
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`
}

const sum = (xs: ReadonlyArray<number | null>): number | null =>
  xs.some((x) => x === null) ? null : xs.reduce<number>((a, b) => a + b!, 0)

function topicRows(t: TopicSummary): HTMLElement[] {
  if (t.error !== null) {
    return [
      h(
        'tr',
        { 'data-topic': t.name, class: 'has-error' },
        h('td', {}, t.name),
        h('td', { colspan: 5, class: 'error-text' }, `${t.error.errorName}: ${t.error.message}`),
      ),
    ]
  }
  const offsets = (p: TopicSummary['partitions'][number]): number | null =>
    p.logStartOffset === null || p.logEndOffset === null ? null : p.logEndOffset - p.logStartOffset
  const size = sum(t.partitions.map((p) => p.size))
  return [
    h(
      'tr',
      { 'data-topic': t.name, class: 'topic-row' },
      h('td', {}, h('strong', {}, t.name)),
      h('td', { class: 'num' }, `${t.partitions.length} partition${t.partitions.length === 1 ? '' : 's'}`),
      h('td', {}),
      h('td', {}),
      h('td', { class: 'num', 'data-col': 'offsets' }, num(sum(t.partitions.map(offsets)))),
      h(
        'td',
        { class: 'num', 'data-col': 'size', title: size === null ? '' : `${size} bytes` },
        formatBytes(size),
      ),
    ),
    ...t.partitions.map((p) =>
      h(
        'tr',
        { 'data-topic': t.name, 'data-partition': String(p.partition), class: 'partition-row' },
        h('td', {}),
        h('td', { class: 'num' }, String(p.partition)),
        h('td', { class: 'num', 'data-col': 'log-start' }, num(p.logStartOffset)),
        h('td', { class: 'num', 'data-col': 'log-end' }, num(p.logEndOffset)),
        h('td', { class: 'num', 'data-col': 'offsets' }, num(offsets(p))),
        h(
          'td',
          { class: 'num', 'data-col': 'size', title: p.size === null ? '' : `${p.size} bytes` },
          formatBytes(p.size),
        ),
      ),
    ),
  ]
}

export function renderTopics(container: HTMLElement, data: TopicsResponse): void {
  if (data.topics.length === 0) {
    container.replaceChildren(h('p', { class: 'empty' }, 'No topics yet.'))
    return
  }
  container.replaceChildren(
    data.sizesError === null
      ? ''
      : h(
          'p',
          { class: 'hint', 'data-testid': 'sizes-error' },
          `Sizes unavailable: ${data.sizesError.errorName}: ${data.sizesError.message}`,
        ),
    h(
      'table',
      { class: 'topics' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'Topic'),
          h('th', { class: 'num' }, 'Partition'),
          h('th', { class: 'num' }, 'Log start'),
          h('th', { class: 'num' }, 'Log end'),
          h(
            'th',
            { class: 'num', 'data-col': 'offsets', title: OFFSETS_TITLE },
            'Offsets',
            h('span', { class: 'info', 'aria-hidden': 'true' }, ' ⓘ'),
          ),
          h('th', { class: 'num' }, 'Size'),
        ),
      ),
      h('tbody', {}, ...data.topics.flatMap(topicRows)),
    ),
  )
}
