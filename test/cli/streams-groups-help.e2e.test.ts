// The help of kafka-streams-groups, byte for byte: jopt-simple 5.0.4's BuiltinHelpFormatter and
// Java's line BreakIterator. The fixtures are what jopt-simple itself prints:
// - kafka-streams-groups-help.txt: `parser.printHelpOn` of Kafka's StreamsGroupCommandOptions parser
//   (its options, argument types, descriptions and default, plus `help` and `version`);
// - jopt-help-sample.txt: a parser with the options of SAMPLE below; jopt-help-sample-required.txt:
//   the same with `--zone` declared `.withRequiredArg().required()`.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { formatHelp, type HelpOption, lineBreaks } from '../../src/cli/streams-groups/help-formatter.js'
import { helpText } from '../../src/cli/streams-groups/options.js'
import { runStreamsGroups as run, runStreamsGroupsProcess as runProcess } from '../testkit/cli.js'

const fixture = (name: string): string => readFileSync(join('test/fixtures/cli', name), 'utf8')
const HELP = fixture('kafka-streams-groups-help.txt')
const DESCRIPTION = 'This tool helps to list, describe, delete and manage the offsets of streams groups.'

const SAMPLE: HelpOption[] = [
  { name: 'x', description: 'A short option.', argument: 'none' },
  { name: 'Upper', description: 'Sorted before lower case names.', argument: 'none' },
  {
    name: 'level',
    description: 'An optional argument with a description.',
    argument: 'optional',
    argumentType: 'Integer',
    argumentDescription: 'n',
    defaultValues: ['1', '2', '3'],
  },
  {
    name: 'name',
    description:
      'A word longer than the column: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa and then more words after it.',
    argument: 'required',
    argumentDescription: 'a very long argument description that must wrap',
  },
  {
    name: 'path',
    description: 'Lines\nof their own,\n\nwith an empty one between.',
    argument: 'required',
    defaultValues: ['/tmp'],
  },
  {
    name: 'mixed',
    description:
      'Hyphenated well-known words, (parenthesised) text, numbers 1,000.5 and -42, quotes \'like this\' and "this", server(s) and a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q.',
    argument: 'none',
  },
]

describe('jopt-simple help layout', () => {
  it('sorts, wraps both columns, pads every line and shows types and defaults as jopt-simple', () => {
    assert.equal(formatHelp(SAMPLE), fixture('jopt-help-sample.txt'))
  })

  it('marks required options and says so in the header', () => {
    const withRequired = [
      ...SAMPLE,
      { name: 'zone', description: 'Where it runs.', argument: 'required', required: true } as const,
    ]
    assert.equal(formatHelp(withRequired), fixture('jopt-help-sample-required.txt'))
  })

  it("breaks lines where Java's line BreakIterator does", () => {
    // boundaries printed by java.text.BreakIterator.getLineInstance() (JDK 17)
    const cases: Array<[string, number[]]> = [
      ['In --reset-offsets case, partitions', [0, 3, 5, 11, 19, 25, 35]],
      ["'--describe' option only.", [0, 3, 13, 20, 25]],
      ['`topic:0,1,2`, where 0,1,2 are', [0, 7, 12, 15, 21, 27, 30]],
      ['REQUIRED: The server(s) to connect to.', [0, 10, 14, 20, 24, 27, 35, 38]],
      ["(default: 30000) by 'n', where", [0, 10, 17, 20, 25, 30]],
      ['well-known a-b 1,000.5 -42 $5 "this"', [0, 5, 11, 13, 15, 23, 27, 30, 36]],
      ['information.This is the', [0, 12, 17, 20, 23]],
      ['tab\there and\u00a0nbsp', [0, 4, 9, 17]],
    ]
    for (const [text, expected] of cases) assert.deepEqual(lineBreaks(text), expected, text)
  })
})

describe('kafka-streams-groups --help', () => {
  it("the help is Kafka's parser's, byte for byte", () => {
    assert.equal(helpText(), HELP)
  })

  it('--help and no arguments: the description and the help on stderr, exit 1', async () => {
    for (const args of [['--help'], [], ['--bootstrap-server', 'h:1', '--list', '--help']]) {
      assert.deepEqual(await run(args), { code: 1, stdout: '', stderr: `${DESCRIPTION}\n${HELP}` })
    }
  })

  it('a usage error prints its message and the same help on stderr, exit 1', async () => {
    assert.deepEqual(await run(['--bootstrap-server', 'h:1', '--delete']), {
      code: 1,
      stdout: '',
      stderr: `Option [delete] takes one of these options: [all-groups], [group]\n${HELP}`,
    })
    assert.deepEqual(await run(['--list']), {
      code: 1,
      stdout: '',
      stderr: `Missing required argument "[bootstrap-server]"\n${HELP}`,
    })
  })

  it('a parse error prints only its message', async () => {
    assert.deepEqual(await run(['--help', '--nope']), {
      code: 1,
      stdout: '',
      stderr: 'nope is not a recognized option\n',
    })
  })

  it('the command as its own process: --help exits 1 with the help on stderr', async () => {
    assert.deepEqual(await runProcess(['--help']), { code: 1, stdout: '', stderr: `${DESCRIPTION}\n${HELP}` })
  })
})
