// bench/plugin: set/get cost and event-loop blocking of the built-in topology-description plugins,
// then a 1,000-node description on each plugin against the floor (encoding + a bare write/read).
await import('./plugins.bench.js')
await import('./floor.bench.js')
