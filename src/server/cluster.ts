import { LocalError } from '../errors.js'
import { accessSync, constants, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomTopicId } from './topics/catalog.js'

/**
 * The cluster identity: `data.dir/meta.properties`, in the layout of Kafka's file of that name
 * (`version`, `cluster.id`, `node.id`). The cluster id is drawn once, the first time a server starts
 * on an empty data.dir, and kept for every later start. As in Kafka, a stored node id that differs
 * from the configured `node.id` stops the start.
 */

export const META_PROPERTIES = 'meta.properties'

export interface ClusterIdentity {
  readonly clusterId: string
  readonly nodeId: number
  /** True when this call created the file. */
  readonly created: boolean
}

function parse(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim()
    if (t === '' || t.startsWith('#') || t.startsWith('!')) continue
    const i = t.search(/[=:]/)
    if (i < 0) continue
    out.set(t.slice(0, i).trim(), t.slice(i + 1).trim())
  }
  return out
}

/**
 * Reads `data.dir/meta.properties`, creating it (and data.dir) with a new cluster id when missing.
 * An existing data.dir must be writable (a read-only mount fails here, with the system's reason,
 * rather than later at whichever store opens first); `access` is replaced only to inject faults.
 */
export function loadOrCreateClusterIdentity(
  dataDir: string,
  nodeId: number,
  access: (path: string, mode: number) => void = accessSync,
): ClusterIdentity {
  const path = join(dataDir, META_PROPERTIES)
  let text: string | undefined
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    // ENOTDIR: a path through a file, for which a data directory cannot be made either.
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw unusable(dataDir, e)
  }
  if (text !== undefined) {
    const props = parse(text)
    const clusterId = props.get('cluster.id')
    if (clusterId === undefined || clusterId === '') {
      throw new LocalError('CLUSTER_IDENTITY_INVALID', `${path} has no cluster.id`)
    }
    const storedNode = props.get('node.id')
    if (storedNode !== undefined && Number(storedNode) !== nodeId) {
      throw new LocalError(
        'CLUSTER_IDENTITY_INVALID',
        `Stored node id ${storedNode} doesn't match previous node id ${nodeId} in ${path}. If you moved your data, make sure your configured node id matches. If you intend to create a new node, you should remove all data in your data directories.`,
      )
    }
    try {
      access(dataDir, constants.W_OK)
    } catch (e) {
      throw unusable(dataDir, e)
    }
    return { clusterId, nodeId, created: false }
  }
  const clusterId = randomTopicId()
  const body = `#\n#${new Date().toString()}\nnode.id=${nodeId}\nversion=1\ncluster.id=${clusterId}\n`
  try {
    mkdirSync(dataDir, { recursive: true })
    // Written beside the target and renamed, so a crash never leaves a half-written file.
    const tmp = `${path}.tmp`
    writeFileSync(tmp, body, { flush: true })
    renameSync(tmp, path)
  } catch (e) {
    throw unusable(dataDir, e)
  }
  return { clusterId, nodeId, created: true }
}

/** Kafka's words for a data directory it cannot create or write (LogManager), naming the key. */
function unusable(dataDir: string, e: unknown): LocalError {
  const reason = e instanceof Error ? e.message : String(e)
  return new LocalError(
    'STORAGE_OPEN_FAILED',
    `Failed to create or validate data directory ${dataDir} (data.dir): ${reason}`,
    { cause: e },
  )
}
