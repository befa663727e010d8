/**
 * The command lines run by both Kafka's StreamsGroupCommand and our kafka-streams-groups, in this
 * order (state-changing commands last). `--bootstrap-server <server>` is put first unless the case says
 * otherwise. A case with `setup` changes server state: setup runs before each of the two invocations,
 * so that both start from the same state.
 */
import { GROUPS, type Scenario } from './scenario.js'

export interface CliCase {
  readonly id: string
  readonly group: string
  readonly args: readonly string[]
  /** no --bootstrap-server is added */
  readonly noBootstrap?: boolean
  readonly setup?: (s: Scenario) => Promise<void>
}

const { orders, inventory, nodesc, empty, classic, del } = GROUPS
const UNKNOWN = 'interop-no-such-group'

/** Files the cases name, written to the build directory by the driver (relative to it). */
export const COMMAND_CONFIG = 'interop-command.properties'
export const COMMAND_CONFIG_TEXT = '# read by both tools\nclient.id=interop-cli\nrequest.timeout.ms=20000\n'

export function cliCases(commandConfig: string): CliCase[] {
  const cases: CliCase[] = []
  const add = (group: string, id: string, args: string[], extra: Partial<CliCase> = {}) =>
    cases.push({ group, id, args, ...extra })

  // --list
  add('list', 'list', ['--list'])
  add('list', 'list-state', ['--list', '--state'])
  add('list', 'list-state-stable', ['--list', '--state', 'Stable'])
  add('list', 'list-state-empty-stable', ['--list', '--state', 'Empty,Stable'])
  add('list', 'list-state-lowercase', ['--list', '--state', 'empty'])
  add('list', 'list-state-invalid', ['--list', '--state', 'Bogus'])
  add('list', 'list-command-config', ['--list', '--command-config', commandConfig])
  add('list', 'list-timeout', ['--list', '--timeout', '10000'])

  // --describe, one group
  for (const [sub, extra] of [
    ['default', []],
    ['offsets', ['--offsets']],
    ['offsets-verbose', ['--offsets', '--verbose']],
    ['members', ['--members']],
    ['members-verbose', ['--members', '--verbose']],
    ['state', ['--state']],
    ['state-verbose', ['--state', '--verbose']],
    ['topology', ['--topology']],
    ['topology-verbose', ['--topology', '--verbose']],
  ] as const) {
    add('describe', `describe-orders-${sub}`, ['--describe', '--group', orders, ...extra])
  }
  add('describe', 'describe-verbose-only', ['--describe', '--group', orders, '--verbose'])
  add('describe', 'describe-inventory-members-verbose', [
    '--describe',
    '--group',
    inventory,
    '--members',
    '--verbose',
  ])
  add('describe', 'describe-inventory-offsets', ['--describe', '--group', inventory, '--offsets'])
  add('describe', 'describe-inventory-topology', ['--describe', '--group', inventory, '--topology'])
  add('describe', 'describe-nodesc-topology', ['--describe', '--group', nodesc, '--topology'])
  add('describe', 'describe-nodesc-members', ['--describe', '--group', nodesc, '--members'])
  add('describe', 'describe-three-topology', [
    '--describe',
    '--topology',
    '--group',
    inventory,
    '--group',
    nodesc,
    '--group',
    orders,
  ])
  add('describe', 'describe-two-state', ['--describe', '--state', '--group', orders, '--group', inventory])
  add('describe', 'describe-empty-members', ['--describe', '--group', empty, '--members'])
  add('describe', 'describe-empty-state', ['--describe', '--group', empty, '--state'])
  add('describe', 'describe-empty-state-verbose', ['--describe', '--group', empty, '--state', '--verbose'])
  add('describe', 'describe-empty-offsets', ['--describe', '--group', empty, '--offsets', '--verbose'])
  add('describe', 'describe-empty-topology', ['--describe', '--group', empty, '--topology'])
  add('describe', 'describe-command-config', [
    '--describe',
    '--group',
    orders,
    '--members',
    '--command-config',
    commandConfig,
  ])

  // --describe --all-groups
  for (const [sub, extra] of [
    ['default', []],
    ['offsets-verbose', ['--offsets', '--verbose']],
    ['members', ['--members']],
    ['members-verbose', ['--members', '--verbose']],
    ['state', ['--state']],
    ['state-verbose', ['--state', '--verbose']],
    ['topology', ['--topology']],
  ] as const) {
    add('all-groups', `describe-all-${sub}`, ['--describe', '--all-groups', ...extra])
  }

  // unknown and non-streams groups
  add('unknown', 'describe-unknown', ['--describe', '--group', UNKNOWN])
  add('unknown', 'describe-unknown-members', ['--describe', '--group', UNKNOWN, '--members'])
  add('unknown', 'describe-unknown-state', ['--describe', '--group', UNKNOWN, '--state'])
  add('unknown', 'describe-unknown-topology', ['--describe', '--group', UNKNOWN, '--topology'])
  add('unknown', 'describe-classic-members', ['--describe', '--group', classic, '--members'])
  add('unknown', 'describe-known-then-unknown', [
    '--describe',
    '--state',
    '--group',
    orders,
    '--group',
    UNKNOWN,
  ])
  add('unknown', 'describe-missing-command-config', [
    '--describe',
    '--group',
    orders,
    '--command-config',
    'interop-no-such-file.properties',
  ])
  add('unknown', 'list-unreachable', ['--bootstrap-server', '127.0.0.1:1', '--list', '--timeout', '1500'], {
    noBootstrap: true,
  })

  // option validation
  add('validation', 'no-arguments', [], { noBootstrap: true })
  add('validation', 'help', ['--help'], { noBootstrap: true })
  add('validation', 'version', ['--version'], { noBootstrap: true })
  add('validation', 'missing-bootstrap', ['--list'], { noBootstrap: true })
  add('validation', 'no-action', [])
  add('validation', 'two-actions', ['--list', '--describe', '--group', orders])
  add('validation', 'describe-no-group', ['--describe'])
  add('validation', 'describe-two-subactions', ['--describe', '--group', orders, '--members', '--state'])
  add('validation', 'describe-state-value', ['--describe', '--group', orders, '--state', 'Stable'])
  add('validation', 'describe-group-and-all', ['--describe', '--group', orders, '--all-groups'])
  add('validation', 'list-members', ['--list', '--members'])
  add('validation', 'list-topology', ['--list', '--topology'])
  add('validation', 'list-offsets', ['--list', '--offsets'])
  add('validation', 'list-verbose', ['--list', '--verbose'])
  add('validation', 'list-group', ['--list', '--group', orders])
  add('validation', 'topology-without-describe', ['--topology', '--group', orders])
  add('validation', 'delete-no-group', ['--delete'])
  add('validation', 'delete-input-topic', ['--delete', '--group', orders, '--input-topic', 'orders'])
  add('validation', 'dry-run-without-reset', ['--list', '--dry-run'])
  add('validation', 'delete-all-internal-topics-with-list', ['--list', '--delete-all-internal-topics'])
  add('validation', 'unknown-option', ['--list', '--frobnicate'])
  add('validation', 'group-without-value', ['--describe', '--group'])
  add('validation', 'timeout-not-a-number', ['--list', '--timeout', 'soon'])
  add('validation', 'delete-offsets-no-topic', ['--delete-offsets', '--group', empty])
  add('validation', 'reset-offsets-no-mode', [
    '--reset-offsets',
    '--group',
    empty,
    '--all-input-topics',
    '--to-earliest',
  ])

  // offsets commands (state-changing ones restore the offsets of interop-empty before each run)
  const restore = (s: Scenario) => s.restoreEmptyGroupOffsets(empty)
  add('offsets', 'reset-dry-run-earliest', [
    '--reset-offsets',
    '--group',
    empty,
    '--all-input-topics',
    '--to-earliest',
    '--dry-run',
  ])
  add('offsets', 'reset-dry-run-to-offset', [
    '--reset-offsets',
    '--group',
    empty,
    '--input-topic',
    'payments',
    '--to-offset',
    '2',
    '--dry-run',
  ])
  add('offsets', 'reset-dry-run-shift-by', [
    '--reset-offsets',
    '--group',
    empty,
    '--input-topic',
    'payments:1',
    '--shift-by',
    '-3',
    '--dry-run',
  ])
  add('offsets', 'reset-live-group', [
    '--reset-offsets',
    '--group',
    orders,
    '--all-input-topics',
    '--to-latest',
    '--dry-run',
  ])
  add(
    'offsets',
    'reset-execute-to-current',
    ['--reset-offsets', '--group', empty, '--all-input-topics', '--to-current', '--execute'],
    { setup: restore },
  )
  add(
    'offsets',
    'reset-execute-to-offset',
    ['--reset-offsets', '--group', empty, '--input-topic', 'payments', '--to-offset', '1', '--execute'],
    { setup: restore },
  )
  add(
    'offsets',
    'delete-offsets-input-topic',
    ['--delete-offsets', '--group', empty, '--input-topic', 'payments'],
    { setup: restore },
  )
  add(
    'offsets',
    'delete-offsets-all-input-topics',
    ['--delete-offsets', '--group', empty, '--all-input-topics'],
    { setup: restore },
  )
  add('offsets', 'delete-offsets-live-group', [
    '--delete-offsets',
    '--group',
    orders,
    '--input-topic',
    'orders',
  ])

  // --delete (interop-del is recreated before each run)
  const recreate =
    (...groups: string[]) =>
    async (s: Scenario) => {
      for (const g of groups) await s.recreateEmptyGroup(g)
    }
  add('delete', 'delete-non-empty', ['--delete', '--group', orders])
  add('delete', 'delete-unknown', ['--delete', '--group', UNKNOWN])
  add('delete', 'delete-classic', ['--delete', '--group', classic], { setup: (s) => s.ensureClassicGroup() })
  add('delete', 'delete-empty', ['--delete', '--group', del], { setup: recreate(del) })
  add(
    'delete',
    'delete-mixed',
    ['--delete', '--group', del, '--group', orders, '--group', UNKNOWN, '--group', inventory],
    {
      setup: recreate(del),
    },
  )
  add(
    'delete',
    'delete-empty-internal-topics',
    ['--delete', '--group', del, '--delete-all-internal-topics'],
    {
      setup: recreate(del),
    },
  )
  add('delete', 'delete-all-groups', ['--delete', '--all-groups'], { setup: recreate(del, empty) })
  return cases
}
