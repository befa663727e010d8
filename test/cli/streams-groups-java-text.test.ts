// The JVM text rules the offset reset relies on, against what Java 17 answers for the same input:
// Kafka's Utils.getDateTime (SimpleDateFormat, strict; Julian calendar before 15 October 1582),
// java.time.Duration.parse, String.split, and the Jackson CSV quoting of the reset plan.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  csvFields,
  csvLine,
  epochMillisMinus,
  javaSplit,
  parseDateTime,
  parseDuration,
  parseJavaInt,
  parseJavaLong,
} from '../../src/cli/streams-groups/java-text.js'

const outcome = (f: () => bigint): string => {
  try {
    return String(f())
  } catch (e) {
    return (e as Error).message
  }
}

// [input, what Java printed: epoch millis or the exception]
const DATETIMES: Array<[string, string]> = [
  ['2024-01-01T00:00:00.000', '1704067200000'],
  ['2024-01-01T10:20:30.456+02:00', '1704097230456'],
  ['2024-01-01T10:20:30.456-0530', '1704122430456'],
  ['2024-01-01T10:20:30.456+05', '1704086430456'],
  ['2024-1-2T3:4:5.6', '1704164645006'],
  ['2024-01-01T00:00:00', 'java.text.ParseException: Unparseable date: "2024-01-01T00:00:00Z"'],
  ['2024-02-30T00:00:00.000', 'java.text.ParseException: Unparseable date: "2024-02-30T00:00:00.000Z"'],
  [
    '2024-01-01',
    "java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format",
  ],
  ['2024-01-01T00:00:00.000Zjunk', '1704067200000'],
  ['2024-01-01T24:00:00.000', 'java.text.ParseException: Unparseable date: "2024-01-01T24:00:00.000Z"'],
  ['2024-01-01T00:00:00.1234', 'java.text.ParseException: Unparseable date: "2024-01-01T00:00:00.1234Z"'],
  ['24-01-01T00:00:00.000', '-61410009600000'],
  [
    '2024-01-01T00:00:00.000+2:00',
    'java.text.ParseException: Unparseable date: "2024-01-01T00:00:00.000+2:00"',
  ],
  [
    '2024-01-01T00:00:00.000+24:00',
    'java.text.ParseException: Unparseable date: "2024-01-01T00:00:00.000+24:00"',
  ],
  ['2024-01-01T00:00:00.000 ', '1704067200000'],
  [' 2024-01-01T00:00:00.000', '1704067200000'],
  ['2024- 01-01T 00:00:00.000', '1704067200000'],
  ['+2024-01-01T00:00:00.000', 'java.text.ParseException: Unparseable date: "+2024-01-01T00:00:00.000Z"'],
  ['2024-01-01T00:00:00.000z', 'java.text.ParseException: Unparseable date: "2024-01-01T00:00:00.000zZ"'],
  ['2024-13-01T00:00:00.000', 'java.text.ParseException: Unparseable date: "2024-13-01T00:00:00.000Z"'],
  ['2023-02-29T00:00:00.000', 'java.text.ParseException: Unparseable date: "2023-02-29T00:00:00.000Z"'],
  ['2024-02-29T23:59:59.999', '1709251199999'],
  ['0001-01-01T00:00:00.000', '-62135769600000'],
  ['1500-02-29T00:00:00.000', '-14825894400000'],
  ['1582-10-04T23:59:59.999', '-12219292800001'],
  ['1582-10-10T00:00:00.000', 'java.text.ParseException: Unparseable date: "1582-10-10T00:00:00.000Z"'],
  ['1582-10-15T00:00:00.000', '-12219292800000'],
  ['1900-02-29T00:00:00.000', 'java.text.ParseException: Unparseable date: "1900-02-29T00:00:00.000Z"'],
  ['0000-01-01T00:00:00.000', 'java.text.ParseException: Unparseable date: "0000-01-01T00:00:00.000Z"'],
  ['2024-01-01T00:00:60.000', 'java.text.ParseException: Unparseable date: "2024-01-01T00:00:60.000Z"'],
  ['2024-01-01T00:00:00.-1', 'java.text.ParseException: Unparseable date: "2024-01-01T00:00:00.-1"'],
  ['2024-01-01T00:00:00.000+00:60', '1704067200000'],
  ['12345-01-01T00:00:00.000', '327403382400000'],
  ['2024-01-01T00:00:00.000+0', 'java.text.ParseException: Unparseable date: "2024-01-01T00:00:00.000+0"'],
  ['2024-01-01T00:00:00.000-01:30', '1704072600000'],
  ['2024-01-01T00:00:00.000 +01:00', '1704063600000'],
  ['2024-01-01T00:00:00.000+01:00junk', '1704063600000'],
  ['2024-01-01T00:00:00.000+0130', '1704063600000'],
  ['2024-06-15T12:00:00.000Z', '1718452800000'],
  ['2024-06-15T12:00:00.5Z', '1718452800005'],
  [
    'T',
    "java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format",
  ],
  ['2024-01-01TT00:00:00.000', 'java.text.ParseException: Unparseable date: "2024-01-01TT00:00:00.000Z"'],
]

// [input, nanoseconds (getSeconds * 1e9 + getNano) or the exception message]
const DURATIONS: Array<[string, string]> = [
  ['PT5M', '300000000000'],
  ['P1D', '86400000000000'],
  ['PT1H30M', '5400000000000'],
  ['-PT5M', '-300000000000'],
  ['pt5m', '300000000000'],
  ['PT1.5S', '1500000000'],
  ['PT-1.5S', '-1500000000'],
  ['P1DT', 'Text cannot be parsed to a Duration'],
  ['PT', 'Text cannot be parsed to a Duration'],
  ['P', 'Text cannot be parsed to a Duration'],
  ['P1W', 'Text cannot be parsed to a Duration'],
  ['PT0.000000001S', '1'],
  ['PT1,5S', '1500000000'],
  ['P-1DT2H', '-79200000000000'],
  ['+P1D', '86400000000000'],
  ['PT9223372036854775807S', '9223372036854775807000000000'],
  ['PT99999999999999999999S', 'Text cannot be parsed to a Duration: seconds'],
  ['P106751991167300DT', 'Text cannot be parsed to a Duration'],
  ['PT1.1234567891S', 'Text cannot be parsed to a Duration'],
  ['P1Y', 'Text cannot be parsed to a Duration'],
  ['-P-1D', '86400000000000'],
  ['PT-0.5S', '-500000000'],
  ['P1DT2H3M4.5S', '93784500000000'],
  ['PT1.S', '1000000000'],
  ['PT.5S', 'Text cannot be parsed to a Duration'],
  ['PT100000000000000000H', 'Text cannot be parsed to a Duration: hours'],
  ['P2562047788015216DT', 'Text cannot be parsed to a Duration'],
  ['PT5M ', 'Text cannot be parsed to a Duration'],
  [' PT5M', 'Text cannot be parsed to a Duration'],
  ['PT-9223372036854775808S', '-9223372036854775808000000000'],
  ['P-106751991167301D', 'Text cannot be parsed to a Duration: days'],
]

describe('Kafka Utils.getDateTime', () => {
  for (const [input, expected] of DATETIMES) {
    it(JSON.stringify(input), () => {
      assert.equal(
        outcome(() => parseDateTime(input)),
        expected,
      )
    })
  }
})

describe('java.time.Duration.parse', () => {
  it('every input as Java answers it', () => {
    for (const [input, expected] of DURATIONS)
      assert.equal(
        outcome(() => parseDuration(input)),
        expected,
        input,
      )
  })
  it("Instant arithmetic: millis floor, and Java's failures beyond the Instant range", () => {
    assert.equal(epochMillisMinus(1_700_000_000_000, 300_000_000_000n), 1_699_999_700_000n)
    assert.equal(epochMillisMinus(0, 1n), -1n)
    assert.throws(
      () => epochMillisMinus(0, 9223372036854775807000000000n),
      /Instant exceeds minimum or maximum instant/,
    )
  })
})

describe('String.split, Long.parseLong, Integer.parseInt', () => {
  it('drops trailing empty strings as Java does', () => {
    assert.deepEqual(javaSplit('foo:', ':'), ['foo'])
    assert.deepEqual(javaSplit('foo:0:1', ':'), ['foo', '0', '1'])
    assert.deepEqual(javaSplit(':0', ':'), ['', '0'])
    assert.deepEqual(javaSplit('::', ':'), [])
    assert.deepEqual(javaSplit('0,,1', ','), ['0', '', '1'])
    assert.deepEqual(javaSplit('0,1,', ','), ['0', '1'])
    assert.deepEqual(javaSplit('', '\n'), [''])
    assert.deepEqual(javaSplit('a\n\nb\n\n', '\n'), ['a', '', 'b'])
  })
  it('parses signed decimal numbers within their width', () => {
    assert.equal(parseJavaLong('-30'), -30n)
    assert.equal(parseJavaLong('+7'), 7n)
    assert.equal(parseJavaLong('9223372036854775807'), 9223372036854775807n)
    assert.equal(parseJavaLong('9223372036854775808'), null)
    assert.equal(parseJavaLong('1.5'), null)
    assert.equal(parseJavaLong(''), null)
    assert.equal(parseJavaInt('2147483647'), 2147483647)
    assert.equal(parseJavaInt('2147483648'), null)
    assert.equal(parseJavaInt('x'), null)
  })
})

describe('reset plan CSV', () => {
  it('quotes as Jackson does: values over 24 characters or with a character below -', () => {
    assert.equal(csvLine(['orders', 0, 5n]), 'orders,0,5\n')
    assert.equal(csvLine(['my.topic_name-1', 2, 9n]), 'my.topic_name-1,2,9\n')
    assert.equal(csvLine(['abcdefghijklmnopqrstuvwxy', 0, 1n]), '"abcdefghijklmnopqrstuvwxy",0,1\n')
    assert.equal(csvLine(['abcdefghijklmnopqrstuvwx', 0, 1n]), 'abcdefghijklmnopqrstuvwx,0,1\n')
    assert.equal(csvLine(['my group', 'orders', 0, 1n]), '"my group",orders,0,1\n')
    assert.equal(csvLine(['say "hi"', 't', 0, 1n]), '"say ""hi""",t,0,1\n')
  })
  it('reads what it writes, and refuses unterminated quotes', () => {
    assert.deepEqual(csvFields('"say ""hi""",t,0,1'), ['say "hi"', 't', '0', '1'])
    assert.deepEqual(csvFields('orders,0,5\r'), ['orders', '0', '5'])
    assert.deepEqual(csvFields('a,,b'), ['a', '', 'b'])
    assert.equal(csvFields('"open,0,1'), null)
  })
})
