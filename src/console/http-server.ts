/**
 * The console's HTTP server: the UI bundle, the JSON API (docs/console.md) and Prometheus' /metrics.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from '../clients/admin/index.js'
import { ConsoleApiError, type ConsoleApi, apiError } from './api.js'
import type { ConsoleAssets } from './assets.js'

/** What /metrics serves: prom-client's Registry has this shape. */
export interface MetricsRegistry {
  readonly contentType: string
  metrics(): Promise<string>
}

export interface HttpServerOptions {
  readonly api: ConsoleApi
  readonly assets: () => Promise<ConsoleAssets>
  readonly metrics: MetricsRegistry | null
  readonly logger: Logger
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...extra,
  })
  res.end(body)
}

const sendJson = (
  res: ServerResponse,
  status: number,
  value: unknown,
  extra: Record<string, string> = {},
): void => send(res, status, 'application/json; charset=utf-8', JSON.stringify(value), extra)

/** `my group` → `my_group`: a file name for Content-Disposition from any group id. */
const fileNameFor = (groupId: string): string => groupId.replace(/[^A-Za-z0-9._-]/g, '_') || 'group'

export function createConsoleHttpServer(opts: HttpServerOptions): ReturnType<typeof createServer> {
  const { api, assets, metrics, logger } = opts

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://console.invalid')
    const path = url.pathname
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(
        res,
        405,
        { errorName: 'METHOD_NOT_ALLOWED', message: `${req.method} is not served` },
        { allow: 'GET, HEAD' },
      )
      return
    }
    if (path === '/' || path === '/index.html' || path === '/app.js' || path === '/app.css') {
      const name = path === '/' ? 'index.html' : (path.slice(1) as 'index.html' | 'app.js' | 'app.css')
      const a = await assets()
      send(res, 200, CONTENT_TYPES[name]!, a[name])
      return
    }
    if (path === '/metrics') {
      if (metrics === null) {
        sendJson(res, 404, { errorName: 'NOT_FOUND', message: 'No metrics registry' })
        return
      }
      send(res, 200, metrics.contentType, await metrics.metrics())
      return
    }
    if (path === '/api/topics') {
      sendJson(res, 200, await api.topics())
      return
    }
    if (path === '/api/transactions') {
      sendJson(res, 200, await api.transactions())
      return
    }
    if (path === '/api/consumer-groups') {
      sendJson(res, 200, await api.consumerGroups())
      return
    }
    const cg = /^\/api\/consumer-groups\/([^/]+)$/.exec(path)
    if (cg !== null) {
      let groupId: string
      try {
        groupId = decodeURIComponent(cg[1]!)
      } catch {
        sendJson(res, 400, {
          errorName: 'BAD_REQUEST',
          message: 'The group id is not valid percent-encoding',
        })
        return
      }
      sendJson(res, 200, await api.consumerGroup(groupId))
      return
    }
    if (path === '/api/groups') {
      sendJson(res, 200, await api.groups())
      return
    }
    const m = /^\/api\/groups\/([^/]+)(\/topology-description\.json)?$/.exec(path)
    if (m !== null) {
      let groupId: string
      try {
        groupId = decodeURIComponent(m[1]!)
      } catch {
        sendJson(res, 400, {
          errorName: 'BAD_REQUEST',
          message: 'The group id is not valid percent-encoding',
        })
        return
      }
      if (m[2] === undefined) {
        sendJson(res, 200, await api.group(groupId))
      } else {
        const body = await api.descriptionDownload(groupId)
        sendJson(res, 200, body, {
          'content-disposition': `attachment; filename="${fileNameFor(groupId)}-topology-description.json"`,
        })
      }
      return
    }
    sendJson(res, 404, { errorName: 'NOT_FOUND', message: `Nothing at ${path}` })
  }

  return createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      if (res.headersSent) {
        res.destroy()
        return
      }
      if (e instanceof ConsoleApiError) {
        sendJson(res, e.status, e.body)
        return
      }
      logger.warn?.({ err: e, url: req.url }, 'Console request failed')
      sendJson(res, 502, apiError(e))
    })
  })
}

export type { AddressInfo }
