/**
 * A Processor-API-style topology builder with Kafka Streams' naming and grouping rules:
 * subtopologies are the connected groups of nodes (joined by parent links and shared stores),
 * numbered in node insertion order together with global stores; `describe().toString()` is Kafka
 * Streams' TopologyDescription text.
 */

export type TopicNameExtractor = { readonly toString: () => string }

interface NodeDef {
  readonly kind: 'source' | 'processor' | 'sink'
  readonly name: string
  readonly parents: string[]
  readonly topics?: readonly string[]
  readonly pattern?: RegExp
  readonly stores: string[]
  readonly sinkTopic?: string
  readonly extractor?: TopicNameExtractor
  readonly global: boolean
}

export interface DescribedNode {
  readonly kind: 'source' | 'processor' | 'sink'
  readonly name: string
  /** source: topic names (null for a pattern source) */
  readonly topics: readonly string[] | null
  readonly pattern: RegExp | null
  readonly stores: readonly string[]
  /** sink: the static topic, or null with an extractor */
  readonly topic: string | null
  readonly extractor: TopicNameExtractor | null
  /** ordered as Kafka Streams orders them: larger sub-tree first, then by name */
  readonly successors: readonly string[]
  readonly predecessors: readonly string[]
}

export interface DescribedSubtopology {
  readonly id: number
  readonly nodes: readonly DescribedNode[]
}

export interface DescribedGlobalStore {
  readonly id: number
  readonly source: DescribedNode
  readonly processor: DescribedNode
}

/** How a state store is kept: changelogged or not, and its changelog topic's own configs. */
export interface StateStoreOptions {
  readonly logging: boolean
  /** the changelog topic's configs (Kafka Streams' `withLoggingEnabled(config)`) */
  readonly logConfig?: Readonly<Record<string, string>>
}

interface StoreDef {
  readonly global: boolean
  readonly logged: boolean
  readonly logConfig: Readonly<Record<string, string>>
}

/** Thrown for an invalid topology (Kafka's TopologyException). */
export class TopologyError extends Error {
  override name = 'TopologyError'
  constructor(message: string) {
    super(`Invalid topology: ${message}`)
  }
}

function nodeText(n: DescribedNode): string {
  const succ = n.successors.length === 0 ? 'none' : n.successors.join(', ')
  const pred = n.predecessors.length === 0 ? 'none' : n.predecessors.join(', ')
  switch (n.kind) {
    case 'source':
      return `Source: ${n.name} (topics: ${n.topics === null ? n.pattern!.source : `[${n.topics.join(', ')}]`})\n      --> ${succ}`
    case 'processor':
      return `Processor: ${n.name} (stores: [${n.stores.join(', ')}])\n      --> ${succ}\n      <-- ${pred}`
    case 'sink':
      return n.extractor !== null
        ? `Sink: ${n.name} (extractor class: ${n.extractor.toString()})\n      <-- ${pred}`
        : `Sink: ${n.name} (topic: ${n.topic})\n      <-- ${pred}`
  }
}

/** The result of `Topology#describe()`. */
export class TopologyDescription {
  readonly subtopologies: readonly DescribedSubtopology[]
  readonly globalStores: readonly DescribedGlobalStore[]

  constructor(subtopologies: readonly DescribedSubtopology[], globalStores: readonly DescribedGlobalStore[]) {
    this.subtopologies = subtopologies
    this.globalStores = globalStores
  }

  /** Kafka Streams' text: subtopologies and global stores merged in id order. */
  toString(): string {
    const subText = (s: DescribedSubtopology): string =>
      `Sub-topology: ${s.id}\n${s.nodes.map((n) => `    ${nodeText(n)}\n`).join('')}\n`
    const globalText = (g: DescribedGlobalStore): string =>
      `Sub-topology: ${g.id} for global store (will not generate tasks)\n    ${nodeText(g.source)}\n    ${nodeText(g.processor)}\n`
    const subs = [...this.subtopologies].sort((a, b) => a.id - b.id)
    const globals = [...this.globalStores].sort((a, b) => a.id - b.id)
    let out = 'Topologies:\n '
    let expectedId = 0
    let si = 0
    let gi = 0
    while (si < subs.length && gi < globals.length) {
      out += '  '
      if (subs[si]!.id === expectedId) out += subText(subs[si++]!)
      else out += globalText(globals[gi++]!)
      expectedId++
    }
    while (si < subs.length) out += `  ${subText(subs[si++]!)}`
    while (gi < globals.length) out += `  ${globalText(globals[gi++]!)}`
    return out
  }
}

/** Processor-API topology builder. Node names must be unique. */
export class Topology {
  readonly #nodes = new Map<string, NodeDef>()
  readonly #stores = new Map<string, StoreDef>()
  readonly #internalTopics = new Map<string, { partitions: number }>()
  readonly #copartition: string[][] = []
  #nameIndex = 0

  /** A Kafka-Streams-style generated name: `<prefix>-0000000000`, `<prefix>-0000000001`, … */
  newName(prefix: string): string {
    return `${prefix}-${String(this.#nameIndex++).padStart(10, '0')}`
  }

  #add(def: NodeDef): this {
    if (def.name === '') throw new TopologyError('node name must not be empty')
    if (this.#nodes.has(def.name)) throw new TopologyError(`Processor ${def.name} is already added.`)
    for (const p of def.parents) {
      if (p === def.name) throw new TopologyError(`Processor ${def.name} cannot be a predecessor of itself.`)
      const parent = this.#nodes.get(p)
      if (parent === undefined)
        throw new TopologyError(`Parent processor ${p} is not added yet for ${def.name}.`)
      if (parent.kind === 'sink') throw new TopologyError(`Sink ${p} cannot be used a parent.`)
      if (parent.global) throw new TopologyError(`Global node ${p} cannot be a parent of ${def.name}.`)
    }
    this.#nodes.set(def.name, def)
    return this
  }

  /** A source reading `topics`, or every topic matching `pattern`. */
  addSource(name: string, ...topics: string[]): this
  addSource(name: string, pattern: RegExp): this
  addSource(name: string, ...rest: Array<string | RegExp>): this {
    if (rest.length === 1 && rest[0] instanceof RegExp) {
      return this.#add({ kind: 'source', name, parents: [], pattern: rest[0], stores: [], global: false })
    }
    const topics = rest as string[]
    if (topics.length === 0) throw new TopologyError(`You must provide at least one topic for source ${name}`)
    for (const t of topics) {
      for (const n of this.#nodes.values()) {
        if (n.topics?.includes(t))
          throw new TopologyError(`Topic ${t} has already been registered by another source.`)
      }
    }
    return this.#add({ kind: 'source', name, parents: [], topics: [...topics], stores: [], global: false })
  }

  /** A processor below `parents`, optionally connected to state stores. */
  addProcessor(
    name: string,
    parents: readonly string[],
    opts: { readonly stores?: readonly string[] } = {},
  ): this {
    if (parents.length === 0) throw new TopologyError(`Processor ${name} must have at least one parent`)
    this.#add({ kind: 'processor', name, parents: [...parents], stores: [], global: false })
    for (const s of opts.stores ?? []) this.connectProcessorAndStateStores(name, s)
    return this
  }

  /** A sink writing to `topic`, or to the topic an extractor picks per record. */
  addSink(name: string, topic: string | TopicNameExtractor, ...parents: string[]): this {
    if (parents.length === 0) throw new TopologyError(`Sink ${name} must have at least one parent`)
    return typeof topic === 'string'
      ? this.#add({ kind: 'sink', name, parents, sinkTopic: topic, stores: [], global: false })
      : this.#add({ kind: 'sink', name, parents, extractor: topic, stores: [], global: false })
  }

  /**
   * Registers a state store (changelogged by default) and connects it to processors. `logConfig`
   * is Kafka Streams' `withLoggingEnabled(config)`: the changelog topic's own configs, which win
   * over the member's `topicConfigs` and the library's defaults.
   */
  addStateStore(storeName: string, ...processorNames: string[]): this
  addStateStore(storeName: string, opts: StateStoreOptions, ...processorNames: string[]): this
  addStateStore(storeName: string, ...rest: Array<string | StateStoreOptions>): this {
    if (this.#stores.has(storeName)) throw new TopologyError(`StateStore ${storeName} is already added.`)
    const opts = typeof rest[0] === 'object' ? (rest.shift() as StateStoreOptions) : { logging: true }
    this.#stores.set(storeName, { global: false, logged: opts.logging, logConfig: { ...opts.logConfig } })
    for (const p of rest as string[]) this.connectProcessorAndStateStores(p, storeName)
    return this
  }

  connectProcessorAndStateStores(processorName: string, ...storeNames: string[]): this {
    const p = this.#nodes.get(processorName)
    if (p === undefined || p.kind !== 'processor')
      throw new TopologyError(`Processor ${processorName} is not added yet.`)
    for (const s of storeNames) {
      const store = this.#stores.get(s)
      if (store === undefined) throw new TopologyError(`StateStore ${s} is not added yet.`)
      if (store.global)
        throw new TopologyError(`Global StateStore ${s} can be used by a Processor without being specified.`)
      if (!p.stores.includes(s)) p.stores.push(s)
    }
    return this
  }

  /** A global store: a source reading `topic` and a processor that maintains `storeName`. */
  addGlobalStore(storeName: string, sourceName: string, topic: string, processorName: string): this {
    if (this.#stores.has(storeName)) throw new TopologyError(`StateStore ${storeName} is already added.`)
    this.#add({ kind: 'source', name: sourceName, parents: [], topics: [topic], stores: [], global: true })
    this.#stores.set(storeName, { global: true, logged: false, logConfig: {} })
    this.#nodes.set(processorName, {
      kind: 'processor',
      name: processorName,
      parents: [sourceName],
      stores: [storeName],
      global: true,
    })
    return this
  }

  /** Marks `topic` as a repartition topic of this application (its name gets the prefix on the wire). */
  addRepartitionTopic(topic: string, partitions = 0): this {
    this.#internalTopics.set(topic, { partitions })
    return this
  }

  /** Declares source topics that must be co-partitioned. */
  copartitionSources(...topics: string[]): this {
    this.#copartition.push([...topics])
    return this
  }

  /** @internal facts the wire conversion needs */
  get internals(): {
    readonly repartitionTopics: ReadonlyMap<string, { partitions: number }>
    readonly stores: ReadonlyMap<string, StoreDef>
    readonly copartitionGroups: readonly (readonly string[])[]
    readonly nodeGroups: ReadonlyArray<{ id: number; nodes: string[]; global: boolean }>
    node(name: string): {
      kind: string
      topics?: readonly string[]
      pattern?: RegExp
      sinkTopic?: string
      stores: readonly string[]
    }
  } {
    return {
      repartitionTopics: this.#internalTopics,
      stores: this.#stores,
      copartitionGroups: this.#copartition,
      nodeGroups: this.#nodeGroups(),
      node: (name) => this.#nodes.get(name)!,
    }
  }

  #nodeGroups(): Array<{ id: number; nodes: string[]; global: boolean }> {
    // Union-find over parent links and shared stores.
    const parent = new Map<string, string>()
    const find = (x: string): string => {
      let r = x
      while (parent.get(r) !== r) r = parent.get(r)!
      parent.set(x, r)
      return r
    }
    const unite = (a: string, b: string): void => {
      parent.set(find(a), find(b))
    }
    for (const n of this.#nodes.keys()) parent.set(n, n)
    const storeUser = new Map<string, string>()
    for (const n of this.#nodes.values()) {
      for (const p of n.parents) unite(n.name, p)
      for (const s of n.stores) {
        const u = storeUser.get(s)
        if (u === undefined) storeUser.set(s, n.name)
        else unite(n.name, u)
      }
    }
    const groups: Array<{ id: number; nodes: string[]; global: boolean }> = []
    const byRoot = new Map<string, { id: number; nodes: string[]; global: boolean }>()
    for (const n of this.#nodes.values()) {
      const root = find(n.name)
      let g = byRoot.get(root)
      if (g === undefined) {
        g = { id: groups.length, nodes: [], global: false }
        byRoot.set(root, g)
        groups.push(g)
      }
      g.nodes.push(n.name)
      if (n.global) g.global = true
    }
    return groups
  }

  describe(): TopologyDescription {
    const subtopologies: DescribedSubtopology[] = []
    const globalStores: DescribedGlobalStore[] = []
    for (const g of this.#nodeGroups()) {
      const inGroup = new Set(g.nodes)
      const children = new Map<string, string[]>(g.nodes.map((n) => [n, []]))
      for (const name of g.nodes)
        for (const p of this.#nodes.get(name)!.parents) if (inGroup.has(p)) children.get(p)!.push(name)
      // Sub-tree size as Kafka Streams counts it: the node plus the sizes of its successors.
      const size = new Map<string, number>()
      const sizeOf = (n: string): number => {
        const known = size.get(n)
        if (known !== undefined) return known
        const s = 1 + children.get(n)!.reduce((acc, c) => acc + sizeOf(c), 0)
        size.set(n, s)
        return s
      }
      const order = (a: string, b: string): number => sizeOf(b) - sizeOf(a) || (a < b ? -1 : a > b ? 1 : 0)
      const describeNode = (name: string): DescribedNode => {
        const d = this.#nodes.get(name)!
        return {
          kind: d.kind,
          name,
          topics: d.kind === 'source' ? (d.topics ?? null) : null,
          pattern: d.pattern ?? null,
          stores: d.stores,
          topic: d.sinkTopic ?? null,
          extractor: d.extractor ?? null,
          successors: [...children.get(name)!].sort(order),
          predecessors: d.parents.filter((p) => inGroup.has(p)).sort(order),
        }
      }
      if (g.global) {
        const src = g.nodes.find((n) => this.#nodes.get(n)!.kind === 'source')!
        const proc = g.nodes.find((n) => n !== src)!
        globalStores.push({ id: g.id, source: describeNode(src), processor: describeNode(proc) })
      } else {
        subtopologies.push({ id: g.id, nodes: [...g.nodes].sort(order).map(describeNode) })
      }
    }
    return new TopologyDescription(subtopologies, globalStores)
  }
}
