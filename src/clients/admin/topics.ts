/**
 * Topic description and deletion in the admin client, as Kafka's Admin answers them: a topic's
 * promise fails with its error code's exception (`describeTopics`: Kafka's default message;
 * `deleteTopics`: the broker's message when it sent one).
 */
import type { BrokerNode, NetworkClient } from '../network/client.js'
import { KafkaError, kafkaErrorFromCode } from '../network/errors.js'
import { topicsMetadata } from './metadata.js'

export interface TopicPartitionInfo {
  readonly partition: number
  /** null when the partition has no leader */
  readonly leader: BrokerNode | null
  readonly replicas: readonly BrokerNode[]
  readonly isr: readonly BrokerNode[]
}

export interface TopicDescription {
  readonly name: string
  readonly topicId: string
  readonly isInternal: boolean
  /** by partition number */
  readonly partitions: readonly TopicPartitionInfo[]
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  promise.catch(() => undefined)
  return { promise, resolve, reject }
}

/** Describes topics by name through one Metadata request (retried while the failure is retriable). */
export function describeTopics(
  client: NetworkClient,
  names: readonly string[],
  deadline: number,
): Map<string, Promise<TopicDescription>> {
  const pending = new Map<string, ReturnType<typeof deferred<TopicDescription>>>()
  for (const n of names) if (!pending.has(n)) pending.set(n, deferred())
  const asked: string[] = []
  for (const [name, d] of pending) {
    // Kafka refuses names a request cannot carry before sending anything.
    if (name === '') {
      d.reject(
        new KafkaError(`The given topic name '${name}' cannot be represented in a request.`, {
          errorName: 'INVALID_TOPIC_EXCEPTION',
          code: 17,
          javaClassName: 'org.apache.kafka.common.errors.InvalidTopicException',
        }),
      )
    } else asked.push(name)
  }
  if (asked.length > 0) {
    void client
      .withRetries(() => topicsMetadata(client, asked), { deadline, operation: 'describeTopics' })
      .then(
        ({ response, brokers }) => {
          const node = (id: number): BrokerNode => brokers.get(id) ?? { nodeId: id, host: '', port: -1 }
          for (const name of asked) {
            const d = pending.get(name)!
            const t = response.topics.find((x) => x.name === name)
            if (t !== undefined && t.errorCode !== 0) {
              d.reject(kafkaErrorFromCode(t.errorCode))
              continue
            }
            if (t === undefined) {
              d.reject(
                new KafkaError(`Topic ${name} not found.`, {
                  code: 3,
                  errorName: 'UNKNOWN_TOPIC_OR_PARTITION',
                  retriable: true,
                }),
              )
              continue
            }
            d.resolve({
              name,
              topicId: t.topicId,
              isInternal: t.isInternal,
              partitions: [...t.partitions]
                .sort((a, b) => a.partitionIndex - b.partitionIndex)
                .map((p) => ({
                  partition: p.partitionIndex,
                  leader: p.leaderId < 0 ? null : node(p.leaderId),
                  replicas: p.replicaNodes.map(node),
                  isr: p.isrNodes.map(node),
                })),
            })
          }
        },
        (e: unknown) => {
          for (const name of asked) pending.get(name)!.reject(e)
        },
      )
  }
  return new Map([...pending].map(([k, d]) => [k, d.promise]))
}

/** Deletes topics by name through the controller; a topic's promise fails with the broker's error. */
export function deleteTopics(
  client: NetworkClient,
  names: readonly string[],
  deadline: number,
  timeoutMs: number,
): Map<string, Promise<void>> {
  const pending = new Map<string, ReturnType<typeof deferred<void>>>()
  for (const n of names) if (!pending.has(n)) pending.set(n, deferred())
  void client
    .withRetries(
      async () => {
        const md = await client.metadata([])
        const controller = md.brokers.find((b) => b.nodeId === md.controllerId) ?? md.brokers[0]
        if (controller === undefined) throw new KafkaError('No broker in metadata', { retriable: true })
        const conn = await client.connect(controller.host, controller.port)
        const version = conn.negotiateVersion(20)
        const list = [...pending.keys()]
        return conn.send(
          20,
          {
            topics: version >= 6 ? list.map((name) => ({ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' })) : [],
            topicNames: version >= 6 ? [] : list,
            timeoutMs,
          },
          { version },
        )
      },
      { deadline, operation: 'deleteTopics' },
    )
    .then(
      (res) => {
        for (const [name, d] of pending) {
          const r = res.responses.find((x) => x.name === name)
          if (r === undefined) d.reject(new KafkaError(`The response did not mention topic ${name}`))
          else if (r.errorCode !== 0) d.reject(kafkaErrorFromCode(r.errorCode, r.errorMessage))
          else d.resolve()
        }
      },
      (e: unknown) => {
        for (const d of pending.values()) d.reject(e)
      },
    )
  return new Map([...pending].map(([k, d]) => [k, d.promise]))
}
