// bench/streams: sticky task assignor time and its scaling ratio, then steady StreamsGroupHeartbeat
// throughput and latency against a bare framing server.
await import('./assignor.js')
await import('./heartbeat.js')
