import assert from 'node:assert/strict'
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  createStreamsGroupDescribeResponseDescribedGroup,
  type StreamsGroupDescribeResponseDescribedGroup,
  type StreamsGroupDescribeResponseTopologyDescription,
  type StreamsGroupDescribeResponseTopologyDescriptionNode,
} from '../../src/protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { FakeBroker } from '../clients/fake-broker.js'
import { runStreamsGroups as run, runStreamsGroupsProcess as runProcess } from '../testkit/cli.js'

const fixture = (name: string): string => readFileSync(join('test/fixtures/cli', name), 'utf8')

function n(
  name: string,
  nodeType: number,
  extra: Partial<StreamsGroupDescribeResponseTopologyDescriptionNode> = {},
): StreamsGroupDescribeResponseTopologyDescriptionNode {
  return { name, nodeType, sourceTopics: [], sinkTopic: null, stores: [], successors: [], ...extra }
}

const DESCRIPTIONS: Record<string, StreamsGroupDescribeResponseTopologyDescription> = {
  linear: {
    subtopologies: [
      {
        subtopologyId: '0',
        nodes: [
          n('source', 1, { sourceTopics: ['input'], successors: ['processor'] }),
          n('processor', 2, { stores: ['store'], successors: ['sink'] }),
          n('sink', 3, { sinkTopic: 'output' }),
        ],
      },
    ],
    globalStores: [],
  },
  'global-stores': {
    subtopologies: [],
    globalStores: [0, 1].map((i) => ({
      source: n(`global-source-${i}`, 1, {
        sourceTopics: [`topic-${i}`],
        successors: [`global-processor-${i}`],
      }),
      processor: n(`global-processor-${i}`, 2, { stores: [`store-${i}`] }),
    })),
  },
  wordcount: {
    subtopologies: [
      {
        subtopologyId: '0',
        nodes: [
          n('KSTREAM-AGGREGATE-0000000002', 2, {
            stores: ['counts-store'],
            successors: ['KSTREAM-SINK-0000000003'],
          }),
          n('KSTREAM-FLATMAPVALUES-0000000001', 2, { successors: ['KSTREAM-AGGREGATE-0000000002'] }),
          n('KSTREAM-SINK-0000000003', 3, { sinkTopic: 'streams-wordcount-output' }),
          n('KSTREAM-SOURCE-0000000000', 1, {
            sourceTopics: ['streams-plaintext-input'],
            successors: ['KSTREAM-FLATMAPVALUES-0000000001'],
          }),
        ],
      },
    ],
    globalStores: [],
  },
  branching: {
    subtopologies: [
      {
        subtopologyId: '0',
        nodes: [
          n('branch-a', 2, { stores: ['b-store', 'a-store'], successors: ['sink-a'] }),
          n('branch-b', 2, { successors: ['sink-b', 'sink-a'] }),
          n('sink-a', 3, { sinkTopic: 'out-a' }),
          n('sink-b', 3, { sinkTopic: 'out.b' }),
          n('source', 1, { sourceTopics: ['in-2', 'in-1'], successors: ['branch-b', 'branch-a'] }),
        ],
      },
    ],
    globalStores: [],
  },
  'multiple-subtopologies': {
    subtopologies: [
      {
        subtopologyId: '0',
        nodes: [
          n('repartition-sink', 3, { sinkTopic: 'app-agg-repartition' }),
          n('source-0', 1, { sourceTopics: ['input-0'], successors: ['repartition-sink'] }),
        ],
      },
      { subtopologyId: '2', nodes: [n('repartition-source', 1, { sourceTopics: ['app-agg-repartition'] })] },
    ],
    globalStores: [
      {
        source: n('gsrc', 1, { sourceTopics: ['positions'], successors: ['gproc'] }),
        processor: n('gproc', 2, { stores: ['positions-store'] }),
      },
    ],
  },
  'pattern-dynamic': {
    subtopologies: [
      {
        subtopologyId: '0',
        nodes: [
          n('pattern-source', 1, { successors: ['router'] }),
          n('router', 2, { successors: ['dynamic-sink'] }),
          n('dynamic-sink', 3, { sinkTopic: null }),
        ],
      },
    ],
    globalStores: [],
  },
  empty: { subtopologies: [], globalStores: [] },
}

function described(groupId: string): StreamsGroupDescribeResponseDescribedGroup {
  const base = { groupId, groupState: 'Stable', topology: { epoch: 0, subtopologies: [] } }
  if (groupId in DESCRIPTIONS) {
    return createStreamsGroupDescribeResponseDescribedGroup({
      ...base,
      topologyDescriptionStatus: 3,
      topologyDescription: DESCRIPTIONS[groupId]!,
    })
  }
  if (groupId === 'notstored')
    return createStreamsGroupDescribeResponseDescribedGroup({ ...base, topologyDescriptionStatus: 1 })
  if (groupId === 'error')
    return createStreamsGroupDescribeResponseDescribedGroup({ ...base, topologyDescriptionStatus: 2 })
  if (groupId === 'notrequested')
    return createStreamsGroupDescribeResponseDescribedGroup({ ...base, topologyDescriptionStatus: 0 })
  return createStreamsGroupDescribeResponseDescribedGroup({
    groupId,
    errorCode: 69,
    errorMessage: `Group ${groupId} not found.`,
  })
}

let broker: FakeBroker
let v0broker: FakeBroker
let server: string
let tmp: string

before(async () => {
  broker = await FakeBroker.start()
  broker.on(89, (r) => ({ groups: r.request.groupIds.map(described) }))
  broker.on(16, () => ({
    groups: [
      { groupId: 'linear', protocolType: 'streams', groupState: 'Stable', groupType: 'streams' },
      { groupId: 'notstored', protocolType: 'streams', groupState: 'Empty', groupType: 'streams' },
    ],
  }))
  broker.on(42, (r) => ({
    results: r.request.groupsNames.map((g) =>
      g === 'stuck'
        ? { groupId: g, errorCode: 134, errorMessage: 'plugin backend unavailable' }
        : { groupId: g, errorCode: 0, errorMessage: null },
    ),
  }))
  server = `127.0.0.1:${broker.port}`
  v0broker = await FakeBroker.start()
  v0broker.apiVersions.set(89, { min: 0, max: 0 })
  tmp = mkdtempSync(join(tmpdir(), 'ksg-'))
})
after(async () => {
  await broker.close()
  await v0broker.close()
  rmSync(tmp, { recursive: true, force: true })
})

describe('kafka-streams-groups --describe --topology', () => {
  it('prints every fixture byte for byte, groups one after another, exit 0', async () => {
    const names = [
      'linear',
      'branching',
      'multiple-subtopologies',
      'global-stores',
      'pattern-dynamic',
      'wordcount',
      'empty',
    ]
    const r = await runProcess([
      '--bootstrap-server',
      server,
      '--describe',
      '--topology',
      ...names.flatMap((g) => ['--group', g]),
    ])
    assert.equal(r.stderr, '')
    assert.equal(r.stdout, names.map((g) => fixture(`${g}.txt`)).join(''))
    assert.equal(r.code, 0)
  })

  it('NOT_STORED, ERROR and other statuses print Kafka messages; processing continues; exit 1', async () => {
    const r = await run([
      '--bootstrap-server',
      server,
      '--describe',
      '--topology',
      '--group',
      'notstored',
      '--group',
      'error',
      '--group',
      'notrequested',
      '--group',
      'linear',
    ])
    assert.equal(
      r.stdout,
      "\nError: No topology description is stored for streams group 'notstored'.\n" +
        "\nError: The broker failed to fetch the topology description for streams group 'error'. See the broker logs for details.\n" +
        "\nError: No topology description is available for streams group 'notrequested' (status: NOT_REQUESTED).\n" +
        fixture('linear.txt'),
    )
    assert.equal(r.stderr, '')
    assert.equal(r.code, 1)
  })

  it('a group error ends the command with the exception text and a stack trace on stderr', async () => {
    const r = await runProcess([
      '--bootstrap-server',
      server,
      '--describe',
      '--topology',
      '--group',
      'linear',
      '--group',
      'non-existing-group',
      '--group',
      'linear',
    ])
    assert.equal(
      r.stdout,
      fixture('linear.txt') +
        '\nError: Executing streams group command failed due to org.apache.kafka.common.errors.GroupIdNotFoundException: Group non-existing-group not found.\n',
    )
    // Java's printStackTrace of the ExecutionException from future.get(), then this process's frames
    const lines = r.stderr.split('\n')
    assert.equal(
      lines[0],
      'java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.GroupIdNotFoundException: Group non-existing-group not found.',
    )
    assert.match(lines[1]!, /^ {4}at /)
    assert.equal(r.code, 1)
  })

  it('against a describe-v0 broker fails with UnsupportedVersionException', async () => {
    const r = await run([
      '--bootstrap-server',
      `127.0.0.1:${v0broker.port}`,
      '--describe',
      '--topology',
      '--group',
      'g',
    ])
    assert.equal(
      r.stdout,
      '\nError: Executing streams group command failed due to org.apache.kafka.common.errors.UnsupportedVersionException: Attempted to write a non-default includeTopologyDescription at version 0\n',
    )
    assert.equal(r.code, 1)
  })

  it('--all-groups describes the listed streams groups in order', async () => {
    const r = await run(['--bootstrap-server', server, '--describe', '--topology', '--all-groups'])
    assert.equal(
      r.stdout,
      fixture('linear.txt') + "\nError: No topology description is stored for streams group 'notstored'.\n",
    )
    assert.equal(r.code, 1)
  })

  it('--output dot and mermaid quote identifiers; json carries the model', async () => {
    const dot = await run([
      '--bootstrap-server',
      server,
      '--describe',
      '--topology',
      '--group',
      'branching',
      '--output',
      'dot',
    ])
    assert.equal(dot.code, 0)
    assert.match(dot.stdout, /^digraph "streams-group:branching" \{/)
    assert.match(dot.stdout, / {2}"sub_0\/source" -> "sub_0\/branch-a";/)
    assert.match(dot.stdout, /label="Sink: sink-b\\ntopic: out.b"/)
    const mermaid = await run([
      '--bootstrap-server',
      server,
      '--describe',
      '--topology',
      '--group',
      'branching',
      '--output',
      'mermaid',
    ])
    assert.match(mermaid.stdout, /^flowchart LR\n {2}subgraph c0\["Sub-topology: 0"\]/)
    assert.match(mermaid.stdout, /n4\[\/"Source: source<br\/>topics: \[in-1, in-2\]"\/\]/)
    const json = await run([
      '--bootstrap-server',
      server,
      '--describe',
      '--topology',
      '--group',
      'linear',
      '--output',
      'json',
    ])
    const parsed = JSON.parse(json.stdout) as {
      groupId: string
      subtopologies: Array<{ nodes: Array<{ predecessors: string[] }> }>
    }
    assert.equal(parsed.groupId, 'linear')
    assert.deepEqual(parsed.subtopologies[0]!.nodes[1]!.predecessors, ['source'])
  })
})

describe('kafka-streams-groups validation (exit 1)', () => {
  const cases: Array<[string[], string, boolean]> = [
    [
      ['--bootstrap-server', 'h:1', '--list', '--topology'],
      'Option(s) [topology] are unavailable given other options on the command line\n',
      false,
    ],
    [
      ['--bootstrap-server', 'h:1', '--describe', '--topology'],
      'Option [describe] takes one of these options: [all-groups], [group]\n',
      true,
    ],
    [
      ['--bootstrap-server', 'h:1', '--describe', '--group', 'g', '--members', '--topology'],
      'Option [describe] takes at most one of these options: [members], [offsets], [state], [topology]\n',
      true,
    ],
    [
      ['--bootstrap-server', 'h:1', '--describe', '--group', 'g', '--state', 'Stable'],
      'Option [describe] does not take a value for [state]\n',
      true,
    ],
    [
      ['--bootstrap-server', 'h:1', '--describe', '--list', '--group', 'g', '--topology'],
      'Option "[list]" can\'t be used with option "[topology]"\n',
      true,
    ],
    [
      ['--bootstrap-server', 'h:1', '--describe', '--group', 'g', '--all-groups'],
      'Option "[group]" can\'t be used with option "[all-groups]"\n',
      true,
    ],
    [
      ['--bootstrap-server', 'h:1', '--group', 'g', '--all-groups', '--delete', '--describe'],
      'Option "[group]" can\'t be used with option "[all-groups]"\n',
      true,
    ],
    [
      ['--bootstrap-server', 'h:1', '--group', 'g'],
      'Command must include exactly one action: --list, --describe, --delete, --reset-offsets, or --delete-offsets.\n',
      true,
    ],
    [['--list'], 'Missing required argument "[bootstrap-server]"\n', true],
    [['--bootstrap-server', 'h:1', '--nope'], 'nope is not a recognized option\n', false],
    [
      ['--bootstrap-server', 'h:1', '--delete'],
      'Option [delete] takes one of these options: [all-groups], [group]\n',
      true,
    ],
  ]
  for (const [args, message, withHelp] of cases) {
    it(message.trim(), async () => {
      const r = await run(args)
      assert.equal(r.code, 1)
      assert.equal(r.stdout, '')
      // the message, then (printUsageAndExit) Kafka's help, byte for byte
      assert.equal(r.stderr, message + (withHelp ? fixture('kafka-streams-groups-help.txt') : ''))
    })
  }
})

describe('kafka-streams-groups --list and --delete', () => {
  it('--list prints streams group ids; --state adds the state column', async () => {
    const r = await run(['--bootstrap-server', server, '--list'])
    assert.equal(r.stdout, 'linear\nnotstored\n')
    assert.equal(r.code, 0)
    const s = await run(['--bootstrap-server', server, '--list', '--state'])
    assert.equal(s.stdout, 'GROUP           STATE\nlinear          Stable\nnotstored       Empty\n')
  })

  it("--list --state parses the states as Kafka's tool: comma-separated, trimmed, any case", async () => {
    const r = await run(['--bootstrap-server', server, '--list', '--state', ' stable ,EMPTY,stable,'])
    assert.equal(r.code, 0)
    const sent = broker.requestsOf(16).at(-1)!.request as { statesFilter: string[] }
    assert.deepEqual(sent.statesFilter, ['Stable', 'Empty'])
    for (const bad of ['Bogus', 'Stable,Unknown', 'PreparingRebalance', ',Stable', ' ']) {
      const b = await run(['--bootstrap-server', server, '--list', '--state', bad])
      assert.deepEqual(b, {
        code: 1,
        stdout: '',
        stderr:
          `Invalid state list '${bad}'. Valid states are: Empty, NotReady, Dead, Stable, Reconciling, Assigning\n` +
          fixture('kafka-streams-groups-help.txt'),
      })
    }
  })

  it('--delete refuses groups that are not listed as streams groups without sending them', async () => {
    const r = await run(['--bootstrap-server', server, '--delete', '--group', 'a'])
    assert.equal(
      r.stdout,
      '\nError: Deletion of some streams groups failed:\n' +
        "* Group 'a' could not be deleted due to: java.lang.IllegalArgumentException: Group 'a' does not exist or is not a streams group.\n",
    )
    assert.equal(r.code, 0)
    assert.equal(broker.requestsOf(42).length, 0)
  })
})

describe("kafka-streams-groups: groups in the order of Kafka's admin client (Java HashMap of ids)", () => {
  let b: FakeBroker
  let addr: string
  before(async () => {
    b = await FakeBroker.start()
    b.on(16, () => ({
      groups: ['interop-orders', 'interop-empty', 'interop-nodesc', 'interop-inventory'].map((groupId) => ({
        groupId,
        protocolType: 'streams',
        groupState: groupId === 'interop-empty' ? 'Empty' : 'Stable',
        groupType: 'streams',
      })),
    }))
    b.on(89, (r) => ({
      groups: r.request.groupIds.map((groupId) =>
        createStreamsGroupDescribeResponseDescribedGroup({
          groupId,
          groupState: 'Stable',
          topology: { epoch: 0, subtopologies: [] },
        }),
      ),
    }))
    addr = `127.0.0.1:${b.port}`
  })
  after(async () => {
    await b.close()
  })
  const order = ['interop-inventory', 'interop-empty', 'interop-nodesc', 'interop-orders']

  it('--list and --list --state print the hash order, not the broker order', async () => {
    const r = await run(['--bootstrap-server', addr, '--list'])
    assert.deepEqual(r, { code: 0, stdout: order.map((g) => `${g}\n`).join(''), stderr: '' })
    const s = await run(['--bootstrap-server', addr, '--list', '--state', '--timeout', '5000'])
    assert.equal(
      s.stdout,
      'GROUP             STATE\n' +
        'interop-inventory Stable\n' +
        'interop-empty     Empty\n' +
        'interop-nodesc    Stable\n' +
        'interop-orders    Stable\n',
    )
    assert.equal(s.code, 0)
  })

  it('--describe --all-groups describes the groups in the same order', async () => {
    const r = await run(['--bootstrap-server', addr, '--describe', '--all-groups', '--state'])
    assert.equal(r.code, 0)
    assert.deepEqual(
      r.stdout
        .split('\n')
        .filter((l) => l.startsWith('interop-'))
        .map((l) => l.split(' ')[0]),
      order,
    )
    assert.deepEqual(
      b.requestsOf(89).map((x) => (x.request as { groupIds: string[] }).groupIds[0]),
      order,
    )
  })
})

describe('kafka-streams-groups --delete: the checks before deleting (fake broker)', () => {
  let b: FakeBroker
  let old: FakeBroker
  const groups = [
    ['stuck', 'Empty'],
    ['gone', 'Empty'],
    ['a', 'Empty'],
    ['dead', 'Dead'],
    ['busy', 'Stable'],
    ['odd', 'Weird'],
  ]
  const listed = () => ({
    groups: groups.map(([groupId, groupState]) => ({
      groupId,
      protocolType: 'streams',
      groupState,
      groupType: 'streams',
    })),
  })
  const deleteGroups = (r: { request: { groupsNames: string[] } }) => ({
    results: r.request.groupsNames.map((g) =>
      g === 'stuck'
        ? { groupId: g, errorCode: 134, errorMessage: 'plugin backend unavailable' }
        : { groupId: g, errorCode: 0, errorMessage: null },
    ),
  })
  const sent = (x: FakeBroker): string[] =>
    x.requestsOf(42).flatMap((q) => (q.request as { groupsNames: string[] }).groupsNames)

  before(async () => {
    b = await FakeBroker.start()
    b.on(16, listed)
    b.on(42, deleteGroups)
    // A broker whose ListGroups stops at v3 reports no states: nothing is refused for its state.
    old = await FakeBroker.start()
    old.apiVersions.set(16, { min: 0, max: 3 })
    old.on(16, listed)
    old.on(42, deleteGroups)
  })
  after(async () => {
    await b.close()
    await old.close()
  })

  it("prints each failure with Kafka's text (the broker's message after it) and exits 0", async () => {
    const r = await run([
      '--bootstrap-server',
      `127.0.0.1:${b.port}`,
      '--delete',
      '--group',
      'stuck',
      '--group',
      'gone',
    ])
    assert.equal(
      r.stdout,
      '\nError: Deletion of some streams groups failed:\n' +
        "* Group 'stuck' could not be deleted due to: org.apache.kafka.common.errors.GroupDeletionFailedException: DeleteGroups could not complete; see the error message on the per-group result for details.\n" +
        '  Error message: plugin backend unavailable\n' +
        "\nThese streams groups were deleted successfully: 'gone'.\n",
    )
    assert.equal(r.code, 0)
    const ok = await run([
      '--bootstrap-server',
      `127.0.0.1:${b.port}`,
      '--delete',
      '--group',
      'gone',
      '--group',
      'a',
    ])
    assert.equal(ok.stdout, "Deletion of requested streams groups ('a', 'gone') was successful.\n")
  })

  it('Dead, non-empty and unknown groups are refused in one hash map with the failed deletions', async () => {
    const before = sent(b).length
    const args = ['--delete', '--group', 'dead', '--group', 'busy', '--group', 'odd', '--group', 'stuck']
    const r = await run(['--bootstrap-server', `127.0.0.1:${b.port}`, ...args, '--group', 'nope'])
    assert.deepEqual(r, {
      code: 0,
      stdout:
        '\nError: Deletion of some streams groups failed:\n' +
        "* Group 'nope' could not be deleted due to: java.lang.IllegalArgumentException: Group 'nope' does not exist or is not a streams group.\n" +
        "* Group 'busy' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: Streams group 'busy' is not EMPTY.\n" +
        "* Group 'stuck' could not be deleted due to: org.apache.kafka.common.errors.GroupDeletionFailedException: DeleteGroups could not complete; see the error message on the per-group result for details.\n" +
        '  Error message: plugin backend unavailable\n' +
        "* Group 'dead' could not be deleted due to: java.lang.IllegalStateException: Streams group 'dead' group state is DEAD.\n" +
        "* Group 'odd' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: Streams group 'odd' is not EMPTY.\n",
      stderr: '',
    })
    assert.deepEqual(sent(b).slice(before), ['stuck'])
  })

  it('without group states (ListGroups v3) every listed group is sent', async () => {
    const r = await run([
      '--bootstrap-server',
      `127.0.0.1:${old.port}`,
      '--delete',
      '--group',
      'busy',
      '--group',
      'x',
    ])
    assert.equal(
      r.stdout,
      '\nError: Deletion of some streams groups failed:\n' +
        "* Group 'x' could not be deleted due to: java.lang.IllegalArgumentException: Group 'x' does not exist or is not a streams group.\n" +
        "\nThese streams groups were deleted successfully: 'busy'.\n",
    )
    assert.deepEqual(sent(old), ['busy'])
  })

  it('--all-groups with no streams group: the success line with no group', async () => {
    const empty = await FakeBroker.start()
    try {
      empty.on(16, () => ({ groups: [] }))
      const r = await run(['--bootstrap-server', `127.0.0.1:${empty.port}`, '--delete', '--all-groups'])
      assert.deepEqual(r, {
        code: 0,
        stdout: "Deletion of requested streams groups ('') was successful.\n",
        stderr: '',
      })
      assert.equal(empty.requestsOf(42).length, 0)
    } finally {
      await empty.close()
    }
  })
})

describe("kafka-streams-groups: a failed ListGroups as the exception Kafka's tool throws", () => {
  it('--list and --all-groups rethrow it in a RuntimeException; --list --state throws it as it is', async () => {
    const b = await FakeBroker.start()
    try {
      b.on(16, () => ({ errorCode: 31, groups: [] }))
      const addr = `127.0.0.1:${b.port}`
      for (const args of [['--list'], ['--describe', '--all-groups']]) {
        const r = await run(['--bootstrap-server', addr, ...args])
        assert.equal(r.code, 1)
        assert.match(
          r.stdout,
          /^\nError: Executing streams group command failed due to java\.util\.concurrent\.ExecutionException: org\.apache\.kafka\.common\.errors\.ClusterAuthorizationException: /,
        )
        assert.match(
          r.stderr,
          /^java\.lang\.RuntimeException: java\.util\.concurrent\.ExecutionException: org\.apache\.kafka\.common\.errors\.ClusterAuthorizationException: .*\n {4}at /,
        )
      }
      const s = await run(['--bootstrap-server', addr, '--list', '--state'])
      assert.equal(s.code, 1)
      assert.match(
        s.stdout,
        /^\nError: Executing streams group command failed due to org\.apache\.kafka\.common\.errors\.ClusterAuthorizationException: /,
      )
      assert.match(
        s.stderr,
        /^java\.util\.concurrent\.ExecutionException: org\.apache\.kafka\.common\.errors\.ClusterAuthorizationException: .*\n {4}at /,
      )
    } finally {
      await b.close()
    }
  })
})

describe('kafka-streams-groups --command-config', () => {
  it('--command-config is read as a properties file; a missing file is an error', async () => {
    const file = join(tmp, 'admin.properties')
    writeFileSync(
      file,
      '# comment\nclient.id = cli-test\nsecurity.protocol=PLAINTEXT\nrequest.timeout.ms: 5000\n',
    )
    const r = await run(['--bootstrap-server', server, '--list', '--command-config', file])
    assert.equal(r.code, 0)
    assert.ok(broker.requestsOf(16).some((x) => x.header.clientId === 'cli-test'))
    const missing = await run(['--bootstrap-server', server, '--list', '--command-config', join(tmp, 'nope')])
    assert.equal(missing.code, 1)
    const nope = join(tmp, 'nope')
    assert.equal(
      missing.stdout,
      `\nError: Executing streams group command failed due to java.nio.file.NoSuchFileException: ${nope}\n`,
    )
    const lines = missing.stderr.split('\n')
    assert.equal(lines[0], `java.lang.RuntimeException: java.nio.file.NoSuchFileException: ${nope}`)
    assert.match(lines[1]!, /^ {4}at /)
  })
})
