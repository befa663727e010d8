/**
 * `topograph/plugin`: the topology description plugin SDK (KIP-1331). The SPI (types, interface,
 * exceptions, validation), the coordinator-side guard that normalises plugin calls, and the loader.
 * Plugin authors need only the SPI; docs/plugins.md describes the contract.
 */
export {
  type GlobalStoreDescription,
  isPermanentFailure,
  isTopologyDescription,
  isTransientFailure,
  type ProcessorNode,
  type SinkNode,
  type SourceNode,
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionPlugin,
  StreamsTopologyDescriptionPermanentFailureException,
  StreamsTopologyDescriptionTransientFailureException,
  type SubtopologyDescription,
  type TopologyNode,
  topologyDescriptionProblem,
} from './spi.js'
export {
  type GuardedTopologyDescriptionPlugin,
  type GuardOptions,
  guardPlugin,
  PLUGIN_FAILED_MESSAGE,
  PLUGIN_NO_CAUSE_MESSAGE,
  type PluginFailure,
  type PluginFailureOrigin,
  type PluginOutcome,
  rejectionOutcome,
} from './guard.js'
export {
  loadGuardedTopologyDescriptionPlugin,
  loadTopologyDescriptionPlugin,
  PLUGIN_CLASS_KEY,
  PLUGIN_TIMEOUT_KEY,
  PluginLoadError,
  pluginTimeoutMs,
} from './loader.js'
