// bench/server: request throughput (sqlite and memory storage) against a bare framing server, then
// restart replay against a raw scan: of the group coordinator's own log, and of the store and the
// runtime alone.
await import('./requests.js')
await import('./replay-groups.js')
await import('./replay.js')
