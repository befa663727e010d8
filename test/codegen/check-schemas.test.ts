import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import {
  checkSchemas,
  compareSchema,
  DEFAULT_SCHEMAS_DIR,
  normaliseDefault,
  SUPPLEMENTARY,
  parseSchemaText,
  stripJsonComments,
} from '../../tools/codegen/check-schemas.js'

// biome-ignore lint/suspicious/noExplicitAny: schema files are untyped JSON edited freely in these tests
type Schema = any

const temps: string[] = []
after(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true })
})

/** A private copy of our schema directory that a test may change. */
function copySchemas(): string {
  const dir = mkdtempSync(join(tmpdir(), 'check-schemas-'))
  temps.push(dir)
  cpSync(DEFAULT_SCHEMAS_DIR, dir, { recursive: true })
  return dir
}

function edit(dir: string, rel: string, change: (s: Schema) => void): void {
  const path = join(dir, rel)
  const s = JSON.parse(readFileSync(path, 'utf8'))
  change(s)
  writeFileSync(path, `${JSON.stringify(s, null, 2)}\n`)
}

function field(s: Schema, name: string): Schema {
  const f = s.fields.find((x: Schema) => x.name === name)
  assert.ok(f, `no field ${name}`)
  return f
}

function problemsAfter(rel: string, change: (s: Schema) => void): string[] {
  const dir = copySchemas()
  edit(dir, rel, change)
  return checkSchemas({ schemasDir: dir }).problems
}

function assertOneProblem(problems: string[], ...parts: string[]): void {
  assert.equal(problems.length, 1, problems.join('\n'))
  for (const p of parts) assert.ok(problems[0].includes(p), `"${problems[0]}" lacks "${p}"`)
}

describe('check-schemas on the real files', () => {
  it('finds our schemas equal to the reference', () => {
    const r = checkSchemas()
    assert.deepEqual(r.problems, [])
    assert.equal(r.files, 78)
    assert.deepEqual(
      r.unchecked,
      [...SUPPLEMENTARY].map((n) => `messages/${n}`),
    )
  })

  it('every message, struct and field of ours has an about text', () => {
    const dir = copySchemas()
    const missing: string[] = []
    const walk = (where: string, list: Schema[] | undefined) => {
      for (const f of list ?? []) {
        if (typeof f.about !== 'string' || f.about.trim() === '') missing.push(`${where} ${f.name}`)
        walk(`${where} ${f.name}`, f.fields)
      }
    }
    for (const cat of ['messages', 'records']) {
      for (const name of readdirJson(join(dir, cat))) {
        const s = JSON.parse(readFileSync(join(dir, cat, name), 'utf8'))
        if (typeof s.about !== 'string' || s.about.trim() === '') missing.push(name)
        walk(name, s.fields)
        walk(`${name} commonStructs`, s.commonStructs)
      }
    }
    assert.deepEqual(missing, [])
  })
})

function readdirJson(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.endsWith('.json'))
}

describe('check-schemas detects changed facts', () => {
  it('a changed version range', () => {
    const p = problemsAfter('messages/StreamsGroupHeartbeatResponse.json', (s) => {
      field(s, 'TopologyDescriptionRequired').versions = '0+'
    })
    assertOneProblem(
      p,
      'StreamsGroupHeartbeatResponse.json',
      'TopologyDescriptionRequired.versions',
      'ours "0+" vs reference "1+"',
    )
  })

  it('a changed tag', () => {
    const p = problemsAfter('messages/ApiVersionsResponse.json', (s) => {
      const f = s.fields.find((x: Schema) => x.tag !== undefined)
      f.tag = 99
    })
    assertOneProblem(p, 'ApiVersionsResponse.json', '.tag: ours 99')
  })

  it('a changed default', () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      field(s, 'RebalanceTimeoutMs').default = '-2'
    })
    assertOneProblem(p, 'RebalanceTimeoutMs.default', 'ours "-2" vs reference "-1"')
  })

  it('a JSON null default where Kafka writes "null"', () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      field(s, 'GroupInstanceId').default = null
    })
    assertOneProblem(p, 'GroupInstanceId.default', 'ours null vs reference "null"')
  })

  it('a changed type in a nested struct', () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      field(field(s, 'Protocols'), 'Metadata').type = 'string'
    })
    assertOneProblem(p, 'fields[6] Protocols.fields[1] Metadata.type', 'ours "string" vs reference "bytes"')
  })

  it('a changed fact inside commonStructs', () => {
    const p = problemsAfter('messages/StreamsGroupHeartbeatRequest.json', (s) => {
      const ti = s.commonStructs.find((x: Schema) => x.name === 'TopicInfo')
      field(ti, 'ReplicationFactor').type = 'int32'
    })
    assertOneProblem(p, 'commonStructs[', 'TopicInfo.fields[', 'ReplicationFactor.type')
  })

  it('swapped field order', () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      const [a, b] = s.fields.splice(0, 2)
      s.fields.unshift(b, a)
    })
    assert.equal(p.length, 2, p.join('\n'))
    assert.ok(p.some((x) => x.includes('fields[0] GroupId: position ours 1 vs reference 0')))
    assert.ok(p.some((x) => x.includes('fields[1] SessionTimeoutMs: position ours 0 vs reference 1')))
  })

  it('a missing field', () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      s.fields = s.fields.filter((x: Schema) => x.name !== 'Reason')
    })
    assertOneProblem(p, 'JoinGroupRequest.json', 'Reason: missing in ours')
  })

  it('an extra field', () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      s.fields.push({ name: 'Extra', type: 'int8', versions: '9+' })
    })
    assertOneProblem(p, 'fields[8] Extra: not in the reference')
  })

  it('a changed message-level fact', () => {
    const p = problemsAfter('records/StreamsGroupTopologyValue.json', (s) => {
      s.validVersions = '0-1'
    })
    assertOneProblem(p, 'records/StreamsGroupTopologyValue.json: validVersions')
  })

  it('a changed listener list and flexible range', () => {
    const p = problemsAfter('messages/OffsetDeleteRequest.json', (s) => {
      s.listeners = ['controller']
      s.flexibleVersions = '0+'
    })
    assert.equal(p.length, 2, p.join('\n'))
    assert.ok(p.some((x) => x.includes('listeners: ours ["controller"]')))
    assert.ok(p.some((x) => x.includes('flexibleVersions: ours "0+" vs reference "none"')))
  })

  it('a changed fact of a transaction log record (compared with the transaction coordinator records)', () => {
    const p = problemsAfter('records/TransactionLogValue.json', (s) => {
      field(s, 'ClientTransactionVersion').tag = 4
    })
    assertOneProblem(p, 'records/TransactionLogValue.json', 'ClientTransactionVersion.tag')
  })

  it('transaction log records are listed as not compared without their reference directory', () => {
    const r = checkSchemas({ transactionRecordsDir: join(tmpdir(), 'no-such-reference-dir') })
    assert.deepEqual(r.problems, [])
    assert.ok(r.unchecked.includes('records/TransactionLogKey.json'))
    assert.ok(r.unchecked.includes('records/TransactionLogValue.json'))
  })

  it('a missing or extra schema file', () => {
    const dir = copySchemas()
    rmSync(join(dir, 'messages/HeartbeatRequest.json'))
    writeFileSync(join(dir, 'records/Unknown.json'), '{"name":"Unknown","type":"data","fields":[]}\n')
    const p = checkSchemas({ schemasDir: dir }).problems
    assert.equal(p.length, 2, p.join('\n'))
    assert.ok(p.some((x) => x.includes('messages/HeartbeatRequest.json: missing')))
    assert.ok(p.some((x) => x.includes('records/Unknown.json: no reference counterpart')))
  })
})

describe('check-schemas ignores wording', () => {
  it('a changed about passes', () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      s.about = 'Something else entirely.'
      field(s, 'GroupId').about = 'Different words.'
      field(field(s, 'Protocols'), 'Name').about = 'Other words again.'
    })
    assert.deepEqual(p, [])
  })

  it('reordered keys inside a field pass', () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      const f = field(s, 'RebalanceTimeoutMs')
      const copy = { ...f }
      for (const k of Object.keys(f)) delete f[k]
      for (const k of Object.keys(copy).reverse()) f[k] = copy[k]
    })
    assert.deepEqual(p, [])
  })

  it('skips the records category when the reference has none', () => {
    const ref = mkdtempSync(join(tmpdir(), 'check-schemas-ref-'))
    temps.push(ref)
    cpSync(join(DEFAULT_SCHEMAS_DIR, 'messages/HeartbeatRequest.json'), join(ref, 'HeartbeatRequest.json'))
    const r = checkSchemas({ referenceDir: ref })
    assert.equal(r.files, 1)
    // Every other message of ours lacks a counterpart; records are not checked at all.
    assert.ok(r.problems.length > 0)
    assert.ok(r.problems.every((x) => x.startsWith('messages/') && x.endsWith('no reference counterpart')))
  })
})

describe('check-schemas helpers', () => {
  it('strips comments but not // inside strings', () => {
    const text = '// head\n{ "a": "x//y", /* b */ "b": 1 // tail\n}'
    assert.deepEqual(parseSchemaText(text), { a: 'x//y', b: 1 })
    assert.equal(stripJsonComments('"\\"//"'), '"\\"//"')
  })

  it('normalises defaults as Kafka reads them', () => {
    assert.equal(normaliseDefault('-1', 'int32'), normaliseDefault(-1, 'int32'))
    assert.equal(normaliseDefault(undefined, 'int32'), normaliseDefault('0', 'int32'))
    assert.equal(normaliseDefault('0x10', 'int16'), normaliseDefault(16, 'int16'))
    assert.notEqual(normaliseDefault('-1', 'int64'), normaliseDefault('1', 'int64'))
    assert.equal(normaliseDefault(false, 'bool'), normaliseDefault('false', 'bool'))
    assert.equal(normaliseDefault(undefined, 'bool'), normaliseDefault('false', 'bool'))
    assert.notEqual(normaliseDefault(null, 'string'), normaliseDefault('null', 'string'))
    assert.notEqual(normaliseDefault('', 'string'), normaliseDefault('null', 'string'))
    assert.equal(normaliseDefault(null, '[]int32'), normaliseDefault('', '[]int32'))
    assert.notEqual(normaliseDefault(null, '[]int32'), normaliseDefault('null', '[]int32'))
  })

  it('compareSchema names the file and ignores about', () => {
    const ref = { name: 'M', fields: [{ name: 'A', type: 'int8', versions: '0+', about: 'x' }] }
    const ours = { name: 'M', about: 'y', fields: [{ name: 'A', about: 'z', type: 'int8', versions: '0+' }] }
    assert.deepEqual(compareSchema('M.json', ours, ref), [])
    const changed = { ...ours, fields: [{ name: 'A', type: 'int16', versions: '0+' }] }
    assert.deepEqual(compareSchema('M.json', changed, ref), [
      'M.json: fields[0] A.type: ours "int16" vs reference "int8"',
    ])
  })
})

describe('check-schemas on supplementary files', () => {
  /** A Kafka-like message directory holding our supplementary files with changed wording only. */
  function kafkaDir(change?: (name: string, s: Schema) => void): string {
    const dir = mkdtempSync(join(tmpdir(), 'check-schemas-kafka-'))
    temps.push(dir)
    for (const name of SUPPLEMENTARY) {
      const s = JSON.parse(readFileSync(join(DEFAULT_SCHEMAS_DIR, 'messages', name), 'utf8'))
      s.about = 'Other words.'
      change?.(name, s)
      writeFileSync(join(dir, name), `// a comment, as Kafka's files have\n${JSON.stringify(s)}\n`)
    }
    return dir
  }

  it('are compared with a Kafka message directory when one is given', () => {
    const r = checkSchemas({ kafkaMessagesDir: kafkaDir() })
    assert.deepEqual(r.problems, [])
    assert.deepEqual(r.unchecked, [])
    assert.equal(r.files, 78 + SUPPLEMENTARY.size)
  })

  it("a changed fact in Kafka's file is reported", () => {
    const dir = kafkaDir((name, s) => {
      if (name === 'ListOffsetsRequest.json') s.validVersions = '1-12'
    })
    const p = checkSchemas({ kafkaMessagesDir: dir }).problems
    assertOneProblem(p, 'messages/ListOffsetsRequest.json', 'validVersions')
  })

  it('a supplementary file missing from the Kafka directory is reported', () => {
    const dir = kafkaDir()
    rmSync(join(dir, 'DescribeConfigsResponse.json'))
    const p = checkSchemas({ kafkaMessagesDir: dir }).problems
    assertOneProblem(p, 'messages/DescribeConfigsResponse.json', 'not found in the Kafka message directory')
  })
})
