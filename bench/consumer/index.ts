// bench/consumer: the uniform and range assignors' time, scaling, balance and stickiness; then steady
// ConsumerGroupHeartbeat throughput and latency against a bare framing server.
await import('./assignor.js')
await import('./heartbeat.js')
