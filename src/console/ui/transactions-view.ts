/// <reference lib="dom" />
/** The open transactions: id, state, producer, age against the timeout, partitions. */
import type { TransactionsResponse, TransactionSummary } from '../api-types.js'
import { h } from './dom.js'

/** Milliseconds as a short duration: 850 ms, 12.3 s, 4 min 5 s, 2 h 3 min. */
export function formatAge(ms: number | null): string {
  if (ms === null) return '—'
  if (ms < 1000) return `${ms} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  const s = Math.floor(ms / 1000)
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

function row(t: TransactionSummary): HTMLElement {
  if (t.error !== null) {
    return h(
      'tr',
      { 'data-transactional-id': t.transactionalId, class: 'has-error' },
      h('td', {}, t.transactionalId),
      h('td', { colspan: 5, class: 'error-text' }, `${t.error.errorName}: ${t.error.message}`),
    )
  }
  const overdue = t.ageMs !== null && t.transactionTimeoutMs >= 0 && t.ageMs > t.transactionTimeoutMs
  return h(
    'tr',
    { 'data-transactional-id': t.transactionalId, class: overdue ? 'overdue' : '' },
    h('td', {}, h('strong', {}, t.transactionalId)),
    h('td', { 'data-col': 'state' }, t.state),
    h('td', { class: 'num', 'data-col': 'producer' }, `${t.producerId} / ${t.producerEpoch}`),
    h(
      'td',
      { class: 'num', 'data-col': 'age', title: t.startedAt === null ? '' : `started ${t.startedAt}` },
      formatAge(t.ageMs),
    ),
    h('td', { class: 'num', 'data-col': 'timeout' }, formatAge(t.transactionTimeoutMs)),
    h('td', { 'data-col': 'partitions' }, t.partitions.map((p) => `${p.topic}-${p.partition}`).join(', ')),
  )
}

export function renderTransactions(container: HTMLElement, data: TransactionsResponse): void {
  if (data.transactions.length === 0) {
    container.replaceChildren(h('p', { class: 'empty' }, 'No open transactions.'))
    return
  }
  container.replaceChildren(
    h(
      'table',
      { class: 'transactions' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'Transactional id'),
          h('th', {}, 'State'),
          h('th', { class: 'num' }, 'Producer / epoch'),
          h('th', { class: 'num' }, 'Age'),
          h('th', { class: 'num' }, 'Timeout'),
          h('th', {}, 'Partitions'),
        ),
      ),
      h('tbody', {}, ...data.transactions.map(row)),
    ),
  )
}
