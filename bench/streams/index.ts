// bench/streams: sticky task assignor time and its scaling ratio.
await import('./assignor.js')
