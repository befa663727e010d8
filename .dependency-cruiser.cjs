/** Folder boundaries (docs/architecture.md). Runs in the test command. */
module.exports = {
  forbidden: [
    {
      name: 'protocol-is-sans-io',
      comment: 'src/protocol imports nothing outside itself but node:buffer',
      severity: 'error',
      from: { path: '^src/protocol' },
      to: { pathNot: ['^src/protocol', '^buffer$', '^node:buffer$'] },
    },
    {
      name: 'plugin-spi-is-narrow',
      severity: 'error',
      from: { path: '^src/plugin', pathNot: '^src/plugin/(builtin|tck)' },
      to: { path: '^src/(coordinator|server|clients)' },
    },
    {
      name: 'shard-is-deterministic',
      comment:
        'the shards (groups, transactions) are synchronous and deterministic: no I/O, no clocks or timers, no randomness, no ' +
        'runtime but its types, no service, storage or server (test/coordinator/shard-purity.test.ts also forbids Date.now, ' +
        'setTimeout, Promise, async and Math.random in its code)',
      severity: 'error',
      from: { path: '^src/coordinator/(shard|txn)' },
      to: {
        path: [
          '^src/coordinator/(service|storage)',
          // the runtime's clock and its queue of promises and timers: a shard sees only its types
          '^src/coordinator/runtime/(?!(types|hash)\\.ts$)',
          '^src/server',
          '^src/clients',
          '^src/plugin',
          '^(node:)?(net|fs|fs/promises|timers|timers/promises|child_process|http|https|http2|tls|dgram|dns|crypto|perf_hooks|worker_threads|async_hooks|events|process|os|readline|stream)$',
        ],
      },
    },
    {
      name: 'runtime-knows-no-groups',
      comment:
        'the runtime is generic (a transaction coordinator runs on it too): it knows no shard, ' +
        'service, protocol message or group; it sees only the record store interface',
      severity: 'error',
      from: { path: '^src/coordinator/runtime' },
      to: {
        path: ['^src/coordinator/(shard|service)', '^src/coordinator/storage/(?!types)', '^src/protocol', '^src/server', '^src/plugin', '^src/clients'],
      },
    },
    {
      name: 'txn-shard-is-not-group-code',
      comment: 'the transaction coordinator shard stands apart from the group coordinator shard',
      severity: 'error',
      from: { path: '^src/coordinator/txn' },
      to: { path: '^src/coordinator/shard' },
    },
    {
      name: 'service-not-server',
      severity: 'error',
      from: { path: '^src/coordinator/service' },
      to: { path: ['^src/server', '^src/clients'] },
    },
    {
      name: 'clients-speak-over-the-wire',
      severity: 'error',
      from: { path: '^src/(clients|cli/kafka-streams-groups|console)' },
      to: { path: ['^src/coordinator', '^src/server'] },
    },
    {
      name: 'config-kit-is-a-leaf',
      comment:
        'src/config (the config kit) imports nothing of the project but the local error catalogue, ' +
        'so every folder may use it',
      severity: 'error',
      from: { path: '^src/config' },
      to: { path: '^src/', pathNot: ['^src/config', '^src/errors\\.ts$'] },
    },
    {
      name: 'error-catalogue-is-a-leaf',
      comment: 'src/errors.ts (the local error catalogue and LocalError) imports nothing, so every folder may use it',
      severity: 'error',
      from: { path: '^src/errors\\.ts$' },
      to: { path: '^src/', pathNot: '^src/errors\\.ts$' },
    },
    {
      name: 'log-stands-alone',
      comment: 'src/log (the partitions\' storage) imports neither the coordinator nor the server',
      severity: 'error',
      from: { path: '^src/log' },
      to: { path: ['^src/coordinator', '^src/server', '^src/clients', '^src/cli', '^src/console', '^src/plugin'] },
    },
    { name: 'no-circular-across-folders', severity: 'warn', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
}
