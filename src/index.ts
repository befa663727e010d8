// The `topograph` package entry: embed the server in a Node process.
export {
  type ExtensionContext,
  type RunningServer,
  type ServerExtension,
  type StartedExtension,
  type StartServerOptions,
  startServer,
} from './server/server.js'
export {
  type AclOperationName,
  type AdvertisedNode,
  type ApiHandler,
  type Authorizer,
  defineHandler,
  type RequestContext,
  type ServerContext,
  type SupportedApi,
} from './server/router.js'
export type { TopicCatalog, TopicInfo } from './server/topics/catalog.js'
export { ConfigError, loadConfigFromSources, parseConfig, type TopographConfig } from './server/config.js'
