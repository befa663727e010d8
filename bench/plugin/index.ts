// bench/plugin: set/get cost and event-loop blocking of the built-in topology-description plugins.
await import('./plugins.bench.js')
