import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import { componentLogger, createLogger } from '../../src/server/logger.js'

function capture(): { lines: () => Record<string, unknown>[]; stream: Writable } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk))
      cb()
    },
  })
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}

describe('createLogger', () => {
  it('writes one JSON object per line with a level name and an ISO time', () => {
    const out = capture()
    const log = createLogger({ destination: out.stream })
    log.info({ groupId: 'g1' }, 'hello')
    const [line] = out.lines()
    assert.equal(line.level, 'info')
    assert.equal(line.msg, 'hello')
    assert.equal(line.groupId, 'g1')
    assert.equal(line.pid, process.pid)
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  it('drops messages below the level, and writes nothing when silent', () => {
    const out = capture()
    const log = createLogger({ level: 'warn', destination: out.stream })
    log.info('not written')
    log.warn('written')
    assert.deepEqual(
      out.lines().map((l) => l.msg),
      ['written'],
    )
    const quiet = capture()
    createLogger({ level: 'silent', destination: quiet.stream }).fatal('nothing')
    assert.deepEqual(quiet.lines(), [])
  })

  it('defaults to info', () => {
    assert.equal(createLogger({ destination: capture().stream }).level, 'info')
  })
})

describe('componentLogger', () => {
  it('prefixes messages Kafka-style and binds the same values as fields', () => {
    const out = capture()
    const log = componentLogger(createLogger({ destination: out.stream }), 'GroupMetadataManager', {
      partitionId: 3,
      epoch: 7n,
    })
    log.info({ groupId: 'app' }, 'Loaded 2 groups.')
    const [line] = out.lines()
    assert.equal(line.msg, '[GroupMetadataManager partitionId=3 epoch=7] Loaded 2 groups.')
    assert.equal(line.component, 'GroupMetadataManager')
    assert.equal(line.partitionId, 3)
    assert.equal(line.epoch, '7')
    assert.equal(line.groupId, 'app')
  })

  it('works without context fields', () => {
    const out = capture()
    componentLogger(createLogger({ destination: out.stream }), 'TopographServer').warn('x')
    assert.equal(out.lines()[0].msg, '[TopographServer] x')
  })
})
