/**
 * `startServer`'s and `createRequestListener`'s arguments, checked before anything listens: a
 * `ConfigError` naming the argument or the option. Node's `listen` takes a port that is not a
 * number (`'8701x'`) as the name of a pipe: the server listened on a socket file of that name in
 * the working directory and said it was at `http://127.0.0.1:8701x`.
 */
import { refuseUnknownKeys } from '../../closest.js'
import { ConfigError } from '../../errors.js'
import { describe, isPlainObject } from '../../message/validate.js'

export interface ResolvedServerOptions {
  readonly port: number
  readonly host: string
  readonly maxHeaderSize: number
  readonly requestTimeout: number
  readonly onError: ((error: unknown) => void) | undefined
}

/** The defaults, as the README gives them. */
export const SERVER_DEFAULTS = Object.freeze({ port: 8700, host: '127.0.0.1', maxHeaderSize: 16_384, requestTimeout: 30_000 })

/** Every option: another is a typo (`Port`, `hostname`) that would listen on the default silently. */
const KNOWN = new Set([...Object.keys(SERVER_DEFAULTS), 'onError'])

function integer(option: string, value: unknown, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`
    throw new ConfigError(option, `Expected \`${option}\` to be an integer ${range}, got ${describe(value)}${typeof value === 'string' ? ' (a string: pass a number)' : ''}.`)
  }
  return value
}

/** Throws unless `target` is something a server can answer with: a collector or a fetch handler. */
export function checkTarget(target: unknown, call: 'startServer' | 'createRequestListener'): void {
  if (typeof target === 'function') return
  if (typeof target === 'object' && target !== null && typeof (target as { fetch?: unknown }).fetch === 'function') return
  throw new ConfigError('collector', `Expected the first argument of \`${call}\` to be a collector (\`createCollector(…)\`) or a fetch handler \`(request) => Promise<Response>\`, got ${describe(target)}.`)
}

export function resolveServerOptions(input: unknown): ResolvedServerOptions {
  if (input === undefined) input = {}
  if (!isPlainObject(input)) throw new ConfigError('options', `Expected the options of \`startServer\` to be an object { port?, host?, … }, got ${describe(input)}.`)
  refuseUnknownKeys(input, KNOWN, '')
  const { host, onError } = input
  if (host !== undefined && (typeof host !== 'string' || host.trim() === '')) {
    throw new ConfigError('host', `Expected \`host\` to be a host name or IP address (\`127.0.0.1\`, \`0.0.0.0\`, \`::\`), got ${describe(host)}.`)
  }
  if (onError !== undefined && typeof onError !== 'function') throw new ConfigError('onError', `Expected \`onError\` to be a function, got ${describe(onError)}.`)
  return Object.freeze({
    port: integer('port', input.port, SERVER_DEFAULTS.port, 0, 65_535),
    host: host ?? SERVER_DEFAULTS.host,
    maxHeaderSize: integer('maxHeaderSize', input.maxHeaderSize, SERVER_DEFAULTS.maxHeaderSize, 1),
    requestTimeout: integer('requestTimeout', input.requestTimeout, SERVER_DEFAULTS.requestTimeout, 0),
    onError: onError as ResolvedServerOptions['onError'],
  })
}
