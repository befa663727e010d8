import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * The client address of the request being handled, for host-based ACLs. The router's
 * `Authorizer.authorize(principal, operation, type, name)` carries no host, so the listener runs
 * each dispatch (and everything it awaits) inside this scope and the ACL authorizer reads the host
 * from it. Outside a request (a test calling the authorizer directly) there is no host, and only
 * ACLs whose host is `*` apply.
 */
const scope = new AsyncLocalStorage<string>()

export function runWithClientHost<T>(host: string, fn: () => T): T {
  return scope.run(host, fn)
}

export function currentClientHost(): string | undefined {
  return scope.getStore()
}

/** `::ffff:127.0.0.1` → `127.0.0.1`, as Java prints an IPv4 client's InetAddress. */
export function normalizeHost(address: string | undefined): string {
  if (address === undefined) return ''
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}
