/**
 * The topology-description plugin of bench/isolation: the built-in memory plugin, except that every
 * call for a group listed in the file named by `bench.hang.file` (a JSON array of group ids) waits
 * until the group is no longer listed. The file is read every 250 ms while a call waits, so a hung
 * call costs the server almost nothing beyond being pending: what the benchmark measures is the
 * server's isolation, not the test plugin's polling.
 */
import { readFileSync } from 'node:fs'
import { InMemoryTopologyDescriptionPlugin } from '../../src/plugin/builtin/memory.js'
import type {
  StreamsGroupTopologyDescription,
  StreamsGroupTopologyDescriptionPlugin,
} from '../../src/plugin/index.js'

export const HANG_FILE_KEY = 'bench.hang.file'

export default class HangingPlugin implements StreamsGroupTopologyDescriptionPlugin {
  readonly #inner = new InMemoryTopologyDescriptionPlugin()
  #file: string | null = null
  #closed = false

  async configure(configs: Readonly<Record<string, string>>): Promise<void> {
    this.#file = configs[HANG_FILE_KEY] ?? null
    await this.#inner.configure(configs)
  }

  #hung(groupId: string): boolean {
    if (this.#file === null || this.#closed) return false
    try {
      return (JSON.parse(readFileSync(this.#file, 'utf8')) as string[]).includes(groupId)
    } catch {
      return false
    }
  }

  async #wait(groupId: string): Promise<void> {
    while (this.#hung(groupId)) await new Promise((r) => setTimeout(r, 250))
  }

  async setTopology(groupId: string, epoch: number, d: StreamsGroupTopologyDescription): Promise<void> {
    await this.#wait(groupId)
    return this.#inner.setTopology(groupId, epoch, d)
  }

  async getTopology(groupId: string, epoch: number): Promise<StreamsGroupTopologyDescription | null> {
    await this.#wait(groupId)
    return this.#inner.getTopology(groupId, epoch)
  }

  async deleteTopology(groupId: string): Promise<void> {
    await this.#wait(groupId)
    return this.#inner.deleteTopology(groupId)
  }

  async close(): Promise<void> {
    this.#closed = true
    await this.#inner.close()
  }
}
