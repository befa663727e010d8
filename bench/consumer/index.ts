// bench/consumer: steady ConsumerGroupHeartbeat throughput and latency against a bare framing server.
await import('./heartbeat.js')
