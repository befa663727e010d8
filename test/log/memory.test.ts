import { MemoryLogStorage } from '../../src/log/memory.js'
import { runLogContract } from './contract.js'

// One storage instance per harness: a "new" storage over the same data is the same instance.
runLogContract('memory', async () => {
  const storage = new MemoryLogStorage()
  return { storage: () => storage, cleanup: async () => {} }
})
