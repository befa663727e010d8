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
      comment: 'the shard is synchronous: no I/O, no service, no storage, no server',
      severity: 'error',
      from: { path: '^src/coordinator/shard' },
      to: {
        path: ['^src/coordinator/(service|storage)', '^src/server', '^src/clients', '^(node:)?(net|fs|timers|child_process|http|https|tls)$'],
      },
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
      name: 'log-stands-alone',
      comment: 'src/log (the partitions\' storage) imports neither the coordinator nor the server',
      severity: 'error',
      from: { path: '^src/log' },
      to: { path: ['^src/coordinator', '^src/server', '^src/clients', '^src/cli', '^src/console', '^src/plugin'] },
    },
    {
      name: 'config-kit-is-a-leaf',
      comment: 'src/config (the config kit) imports nothing of the project, so every folder may use it',
      severity: 'error',
      from: { path: '^src/config' },
      to: { path: '^src/', pathNot: '^src/config' },
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
