/// <reference lib="dom" />
/** The lag section of a group's page: a heading with the total, and a row per partition. */
import type { ApiError, ConsumerPartitionLag, PartitionLag } from '../api-types.js'
import { h } from './dom.js'

const num = (v: number | null): string => (v === null ? '—' : String(v))

/**
 * The children of a lag section. With `withMember` a Member column shows each partition's owner
 * (consumer groups).
 */
export function lagSection(
  offsets: readonly (PartitionLag | ConsumerPartitionLag)[] | null,
  offsetsError: ApiError | null,
  withMember: boolean,
): HTMLElement[] {
  if (offsets === null) {
    return [
      h('h3', {}, 'Lag'),
      h(
        'p',
        { class: 'hint' },
        offsetsError === null
          ? 'No offsets.'
          : `Offsets unavailable: ${offsetsError.errorName}: ${offsetsError.message}`,
      ),
    ]
  }
  const total = offsets.reduce((a, o) => a + (o.lag ?? 0), 0)
  return [
    h(
      'h3',
      {},
      'Lag ',
      h('span', { class: 'total-lag' }, 'total ', h('span', { 'data-testid': 'total-lag' }, String(total))),
    ),
    offsets.length === 0
      ? h('p', { class: 'hint' }, 'The group reads no partition yet.')
      : h(
          'div',
          { class: 'table-scroll' },
          h(
            'table',
            { class: 'lag-table' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', {}, 'Topic'),
                h('th', { class: 'num' }, 'Partition'),
                withMember ? h('th', {}, 'Member') : null,
                h('th', { class: 'num' }, 'Committed'),
                h('th', { class: 'num' }, 'Log end'),
                h('th', { class: 'num' }, 'Lag'),
              ),
            ),
            h(
              'tbody',
              {},
              ...offsets.map((o) =>
                h(
                  'tr',
                  { 'data-topic': o.topic, 'data-partition': String(o.partition) },
                  h('td', {}, o.topic),
                  h('td', { class: 'num' }, String(o.partition)),
                  withMember
                    ? h(
                        'td',
                        { class: 'mono', 'data-col': 'member' },
                        ('memberId' in o ? o.memberId : null) ?? '—',
                      )
                    : null,
                  h('td', { class: 'num', 'data-col': 'committed' }, num(o.committedOffset)),
                  h('td', { class: 'num', 'data-col': 'log-end' }, num(o.logEndOffset)),
                  h('td', { class: 'num', 'data-col': 'lag' }, num(o.lag)),
                ),
              ),
            ),
          ),
        ),
  ]
}
