import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import {
  checkSchemas,
  compareSchema,
  DEFAULT_ALL_DIR,
  DEFAULT_REFERENCE_DIR,
  DEFAULT_SCHEMAS_DIR,
  normaliseDefault,
  parseSchemaText,
  stripJsonComments,
} from '../../tools/codegen/check-schemas.js'
import { skipUnlessPresent } from '../helpers/shared.js'

/**
 * Kafka's reference definitions (../shared/reference/kafka-all and kafka-messages), which most
 * tests compare with.
 */
const reference = { skip: skipUnlessPresent(DEFAULT_ALL_DIR) || skipUnlessPresent(DEFAULT_REFERENCE_DIR) }

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
  it('finds our schemas equal to the reference', reference, () => {
    const r = checkSchemas()
    assert.deepEqual(r.problems, [])
    assert.deepEqual(r.notFound, [])
    // Every file of ours against the full set, plus the 76 files of the core set.
    const ours = readdirJson(join(DEFAULT_SCHEMAS_DIR, 'messages')).length
    const ourRecords = readdirJson(join(DEFAULT_SCHEMAS_DIR, 'records')).length
    assert.equal(r.files, ours + ourRecords + 76)
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

describe('check-schemas detects changed facts', reference, () => {
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

  it('a changed fact of a transaction log record (the transaction coordinator records)', () => {
    const p = problemsAfter('records/TransactionLogValue.json', (s) => {
      field(s, 'ClientTransactionVersion').tag = 4
    })
    assertOneProblem(p, 'TransactionLogValue.json', 'ClientTransactionVersion.tag')
  })

  it('a missing or extra schema file', () => {
    const dir = copySchemas()
    rmSync(join(dir, 'messages/HeartbeatRequest.json'))
    writeFileSync(join(dir, 'records/Unknown.json'), '{"name":"Unknown","type":"data","fields":[]}\n')
    const p = checkSchemas({ schemasDir: dir }).problems
    assert.equal(p.length, 2, p.join('\n'))
    assert.ok(p.some((x) => x.includes('messages/HeartbeatRequest.json: missing')))
    assert.ok(p.some((x) => x.includes('records/Unknown.json: no counterpart in')))
  })
})

describe('check-schemas ignores wording', () => {
  it('a changed about passes', reference, () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      s.about = 'Something else entirely.'
      field(s, 'GroupId').about = 'Different words.'
      field(field(s, 'Protocols'), 'Name').about = 'Other words again.'
    })
    assert.deepEqual(p, [])
  })

  it('reordered keys inside a field pass', reference, () => {
    const p = problemsAfter('messages/JoinGroupRequest.json', (s) => {
      const f = field(s, 'RebalanceTimeoutMs')
      const copy = { ...f }
      for (const k of Object.keys(f)) delete f[k]
      for (const k of Object.keys(copy).reverse()) f[k] = copy[k]
    })
    assert.deepEqual(p, [])
  })

  it('a message outside the core set is compared with the full set', reference, () => {
    const p = problemsAfter('messages/ProduceRequest.json', (s) => {
      field(field(s, 'TopicData'), 'TopicId').versions = '12+'
    })
    assertOneProblem(
      p,
      'messages/ProduceRequest.json',
      'TopicData.fields[1] TopicId.versions',
      'ours "12+" vs reference "13+"',
    )
  })

  it('a core file that differs is reported once, not once per folder', reference, () => {
    const p = problemsAfter('messages/HeartbeatRequest.json', (s) => {
      s.validVersions = '0-5'
    })
    assertOneProblem(p, 'messages/HeartbeatRequest.json: validVersions')
  })
})

describe('check-schemas without the reference folders', () => {
  it('says it was not run when neither folder exists', () => {
    const none = join(tmpdir(), 'check-schemas-absent-reference')
    const r = checkSchemas({ referenceDir: join(none, 'core'), allDir: join(none, 'all') })
    assert.equal(r.files, 0)
    assert.deepEqual(r.problems, [])
    assert.deepEqual(r.notFound, [join(none, 'all'), join(none, 'core')])
  })

  it('compares with the folder that exists when the other is absent', reference, () => {
    const r = checkSchemas({ referenceDir: join(tmpdir(), 'check-schemas-absent-reference') })
    assert.deepEqual(r.problems, [])
    assert.equal(r.notFound.length, 1)
    assert.ok(r.files > 76)
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
