/// <reference lib="dom" />
/**
 * The console page: `#/` lists the streams groups and the consumer groups, `#/group/<id>` shows a
 * streams group, `#/consumer-group/<id>` a consumer group, `#/topics` lists the
 * topics with their partitions' offsets and sizes, `#/transactions` the open transactions with
 * their age; any other address says "Page not found". Each refreshes on its own (every 3 s;
 * `?refresh=<ms>` changes it) without reloading the page.
 *
 * A group page whose group does not exist (GROUP_ID_NOT_FOUND) shows "not found" in place of
 * whatever it showed, and keeps asking, five times less often, so that it comes back when the group
 * is created again; when the id is a group of the other kind (a streams group opened as a consumer
 * group, or the reverse), the page moves to that group's address. Other failures keep the last data
 * on screen and say why in the status line.
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
import { consumerGroupHref, renderConsumerGroup, renderConsumerGroups } from './consumer-groups-view.js'
import { h } from './dom.js'
import { GroupView } from './group-view.js'
import { groupHref, renderGroups } from './groups-view.js'
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
  | { readonly kind: 'not-found' }

/** The view an address shows; an address that names none (`#/foo`, a malformed id) is not found. */
function route(hash: string): Route {
  if (hash === '' || hash === '#' || hash === '#/') return { kind: 'groups' }
  if (hash === '#/topics') return { kind: 'topics' }
  if (hash === '#/transactions') return { kind: 'transactions' }
  const m = /^#\/(group|consumer-group)\/(.+)$/.exec(hash)
  if (m !== null) {
    try {
      return { kind: m[1] === 'group' ? 'group' : 'consumer-group', groupId: decodeURIComponent(m[2]!) }
    } catch {
      // a malformed id names no group
    }
  }
  return { kind: 'not-found' }
}

const isNotFound = (e: unknown): boolean =>
  e instanceof FetchError && e.status === 404 && e.body?.errorName === 'GROUP_ID_NOT_FOUND'

/**
 * Whether `groupId` is a group of the other kind than `kind` says: its page's address, or null
 * when that view does not know it either (or cannot be asked).
 */
async function otherKindHref(
  kind: 'group' | 'consumer-group',
  groupId: string,
  signal: AbortSignal,
): Promise<string | null> {
  try {
    if (kind === 'group') {
      await fetchConsumerGroup(groupId, signal)
      return consumerGroupHref(groupId)
    }
    await fetchGroup(groupId, signal)
    return groupHref(groupId)
  } catch {
    return null
  }
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
          : r.kind === 'not-found'
            ? 'Page not found · Topograph'
            : 'Groups · Topograph'
  const current =
    r.kind === 'topics' || r.kind === 'transactions' ? r.kind : r.kind === 'not-found' ? null : 'groups'
  document.querySelectorAll<HTMLElement>('nav.views a').forEach((a) => {
    a.classList.toggle('current', a.dataset.view === current)
  })

  if (r.kind === 'not-found') {
    main.replaceChildren(
      h(
        'div',
        { class: 'not-found', 'data-testid': 'page-not-found' },
        h('h2', {}, 'Page not found'),
        h('p', {}, 'The console has no page at ', h('code', {}, location.hash), '.'),
        h('p', {}, h('a', { href: '#/' }, '← Groups')),
      ),
    )
    showStatus('', false)
    return () => undefined
  }

  let delay = REFRESH_MS
  const tick = async (): Promise<void> => {
    delay = REFRESH_MS
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
      if ((r.kind === 'group' || r.kind === 'consumer-group') && isNotFound(e)) {
        const other = await otherKindHref(r.kind, r.groupId, abort.signal)
        if (abort.signal.aborted) return
        if (other !== null) {
          // The hashchange this fires starts the right view.
          location.replace(other)
          return
        }
        // A definite answer: whatever was shown is gone. A group created again under this id is
        // shown from scratch by a later refresh.
        view = null
        main.replaceChildren(
          h(
            'p',
            { class: 'empty', 'data-testid': 'group-not-found' },
            h('a', { href: '#/' }, '← Groups'),
            ` ${describeFailure(e)}`,
          ),
        )
        showStatus(`Not found at ${new Date().toLocaleTimeString()}`, false)
        delay = REFRESH_MS * 5
      } else {
        // The last good data stays on screen; the status line says why it is not fresh.
        showStatus(`Refresh failed: ${describeFailure(e)}`, true)
      }
    }
    if (!abort.signal.aborted) timer = setTimeout(() => void tick(), delay)
  }
  void tick()
  return () => {
    abort.abort()
    clearTimeout(timer)
  }
}

let stop = start(route(location.hash))
window.addEventListener('hashchange', () => {
  stop()
  stop = start(route(location.hash))
})
