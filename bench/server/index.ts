// bench/server: request throughput (sqlite and memory storage) against a bare framing server, then
// restart replay against a raw scan.
await import('./requests.js')
await import('./replay.js')
