/**
 * The console as the handler sees it: `GET /console` and its assets (a page saying how to enable
 * it when there is no admin token), and the console's admin endpoints under `/v1/admin/`.
 */
import { methodNotAllowed, notFound } from '../http/errors.js'
import { handleConsoleEndpoint, type ConsoleContext } from './endpoints.js'
import { consoleAsset } from './page.js'

export type { ConsoleContext } from './endpoints.js'
export { ConsoleRecorder, type DeliveryTrace } from './recorder.js'
export { memorySettings, SourceSettings, type SettingsHost, type SettingsStore } from './settings.js'

/** The console's answer to `request`, or `undefined` when `path` is not the console's. */
export function routeConsole(request: Request, path: string, context: ConsoleContext | undefined): Promise<Response> | undefined {
  if (path === '/console' || path.startsWith('/console/')) {
    if (request.method !== 'GET' && request.method !== 'HEAD') return Promise.reject(methodNotAllowed(request.method, path, 'GET'))
    const asset = consoleAsset(path, context !== undefined)
    return asset ? Promise.resolve(asset) : Promise.reject(notFound(path))
  }
  if (context !== undefined && path.startsWith('/v1/admin/')) return handleConsoleEndpoint(request, path, context)
  return undefined
}
