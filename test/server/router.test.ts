import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clientHostOf, type RequestContext } from '../../src/server/router.js'

const at = (remote: string) => clientHostOf({ remote } as RequestContext)

test('clientHostOf: Kafka\'s "/address" without the port, IPv4-mapped IPv6 as IPv4, the same answer on every call', () => {
  for (let round = 0; round < 2; round++) {
    assert.equal(at('127.0.0.1:50123'), '/127.0.0.1')
    assert.equal(at('::1:50123'), '/::1')
    assert.equal(at('[::1]:50123'), '/::1')
    assert.equal(at('::ffff:10.0.0.7:9092'), '/10.0.0.7')
    assert.equal(at('undefined'), '')
    assert.equal(at(''), '')
  }
  // More remotes than are kept: answers stay right after the cache is cleared.
  for (let port = 0; port < 3000; port++) assert.equal(at(`10.1.2.3:${port}`), '/10.1.2.3')
  assert.equal(at('127.0.0.1:50123'), '/127.0.0.1')
})
