/// <reference lib="dom" />
/**
 * The console page: `#/` lists the streams groups and the consumer groups, `#/group/<id>` shows a
 * streams group, `#/consumer-group/<id>` a consumer group, `#/topics` lists the
 * topics with their partitions' offsets and sizes, `#/transactions` the open transactions with
 * their age. Each refreshes on its own (every 3 s;
 * `?refresh=<ms>` changes it) without reloading the page.
 */
import {
  FetchError,
  fetchConsumerGroup,
  fetchConsumerGroups,
  fetchGroup,
  fetchGroups,
  fetchTopics,
  fetchTransactions,
} from './api-client.js'
import { renderConsumerGroup, renderConsumerGroups } from './consumer-groups-view.js'
import { h } from './dom.js'
import { GroupView } from './group-view.js'
import { renderGroups } from './groups-view.js'
import { renderTopics } from './topics-view.js'
import { renderTransactions } from './transactions-view.js'

const params = new URLSearchParams(location.search)
const REFRESH_MS = Math.max(250, Number(params.get('refresh') ?? '3000') || 3000)

const main = document.getElementById('main')!
const status = document.getElementById('status')!

type Route =
  | { readonly kind: 'groups' }
  | { readonly kind: 'topics' }
  | { readonly kind: 'transactions' }
  | { readonly kind: 'group'; readonly groupId: string }
  | { readonly kind: 'consumer-group'; readonly groupId: string }

function route(): Route {
  if (location.hash === '#/topics') return { kind: 'topics' }
  if (location.hash === '#/transactions') return { kind: 'transactions' }
  const m = /^#\/(group|consumer-group)\/(.+)$/.exec(location.hash)
  if (m !== null) {
    try {
      return { kind: m[1] === 'group' ? 'group' : 'consumer-group', groupId: decodeURIComponent(m[2]!) }
    } catch {
      // a malformed hash shows the list
    }
  }
  return { kind: 'groups' }
}

function showStatus(text: string, error: boolean): void {
  status.textContent = text
  status.classList.toggle('error', error)
}

const describeFailure = (e: unknown): string =>
  e instanceof FetchError && e.body !== null
    ? `${e.body.errorName}: ${e.body.message}`
    : String(e instanceof Error ? e.message : e)

/** One view's refresh loop; `stop` ends it (a newer route replaced it). */
function start(r: Route): () => void {
  const abort = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let view: GroupView | null = null
  main.replaceChildren(h('p', { class: 'loading' }, 'Loading…'))
  document.title =
    r.kind === 'group' || r.kind === 'consumer-group'
      ? `${r.groupId} · Topograph`
      : r.kind === 'topics'
        ? 'Topics · Topograph'
        : r.kind === 'transactions'
          ? 'Transactions · Topograph'
          : 'Groups · Topograph'
  const current = r.kind === 'topics' || r.kind === 'transactions' ? r.kind : 'groups'
  document.querySelectorAll<HTMLElement>('nav.views a').forEach((a) => {
    a.classList.toggle('current', a.dataset.view === current)
  })

  const tick = async (): Promise<void> => {
    try {
      if (r.kind === 'groups') {
        const [data, consumer] = await Promise.all([
          fetchGroups(abort.signal),
          fetchConsumerGroups(abort.signal),
        ])
        const container = h(
          'div',
          { class: 'groups-view' },
          h('h2', {}, 'Streams groups'),
          h('div', { class: 'streams-groups' }),
          h('h2', {}, 'Consumer groups'),
          h('div', { class: 'consumer-groups-list' }),
        )
        if (main.firstElementChild?.classList.contains('groups-view') !== true)
          main.replaceChildren(container)
        renderGroups(main.querySelector<HTMLElement>('.groups-view > .streams-groups')!, data)
        renderConsumerGroups(
          main.querySelector<HTMLElement>('.groups-view > .consumer-groups-list')!,
          consumer,
        )
        showStatus(`Updated ${new Date(data.fetchedAt).toLocaleTimeString()}`, false)
      } else if (r.kind === 'consumer-group') {
        const data = await fetchConsumerGroup(r.groupId, abort.signal)
        if (main.firstElementChild?.classList.contains('consumer-group-view') !== true)
          main.replaceChildren(h('div', { class: 'consumer-group-view' }))
        renderConsumerGroup(main.querySelector<HTMLElement>('.consumer-group-view')!, data)
        showStatus(`Updated ${new Date(data.fetchedAt).toLocaleTimeString()}`, false)
      } else if (r.kind === 'topics') {
        const data = await fetchTopics(abort.signal)
        const container = h('div', { class: 'topics-view' }, h('h2', {}, 'Topics'), h('div', {}))
        if (main.firstElementChild?.classList.contains('topics-view') !== true)
          main.replaceChildren(container)
        renderTopics(main.querySelector<HTMLElement>('.topics-view > div')!, data)
        showStatus(`Updated ${new Date(data.fetchedAt).toLocaleTimeString()}`, false)
      } else if (r.kind === 'transactions') {
        const data = await fetchTransactions(abort.signal)
        const container = h(
          'div',
          { class: 'transactions-view' },
          h('h2', {}, 'Open transactions'),
          h('div', {}),
        )
        if (main.firstElementChild?.classList.contains('transactions-view') !== true)
          main.replaceChildren(container)
        renderTransactions(main.querySelector<HTMLElement>('.transactions-view > div')!, data)
        showStatus(`Updated ${new Date(data.fetchedAt).toLocaleTimeString()}`, false)
      } else {
        const data = await fetchGroup(r.groupId, abort.signal)
        if (view === null) {
          view = new GroupView(r.groupId)
          main.replaceChildren(view.root)
        }
        await view.update(data)
        showStatus(`Updated ${new Date(data.fetchedAt).toLocaleTimeString()}`, false)
      }
    } catch (e) {
      if (abort.signal.aborted) return
      const shown = r.kind === 'group' ? view !== null : main.querySelector('.consumer-group-view') !== null
      if (
        (r.kind === 'group' || r.kind === 'consumer-group') &&
        !shown &&
        e instanceof FetchError &&
        e.status === 404
      ) {
        main.replaceChildren(
          h('p', { class: 'empty' }, h('a', { href: '#/' }, '← Groups'), ` ${describeFailure(e)}`),
        )
      }
      // The last good data stays on screen; the status line says why it is not fresh.
      showStatus(`Refresh failed: ${describeFailure(e)}`, true)
    }
    if (!abort.signal.aborted) timer = setTimeout(() => void tick(), REFRESH_MS)
  }
  void tick()
  return () => {
    abort.abort()
    clearTimeout(timer)
  }
}

let stop = start(route())
window.addEventListener('hashchange', () => {
  stop()
  stop = start(route())
})
