/**
 * `--config FILE`: `createCollector`'s config as JSON, plus `port` and `host`. Options that JSON
 * cannot hold (functions) are refused here, and a mistyped key gets a guess, before the
 * collector's resolver checks the rest under the same JSON paths.
 */
import { readFileSync } from 'node:fs'
import type { CollectorConfig } from '../collector/index.js'
import { describe } from '../message/validate.js'
import { describeJsonSyntaxError } from '../message/json-syntax.js'
import { closest } from '../closest.js'
import { UsageError } from './usage-error.js'

export interface ConfigFile extends Partial<CollectorConfig> {
  port?: number
  host?: string
}

/**
 * Each `createCollector` option: `true` when a file can set it, else what it takes instead.
 * `satisfies` makes a new option fail to compile here until it is sorted one way or the other.
 */
const FROM_FILE = {
  sources: true,
  adminToken: true,
  // For tests only: a file (or a flag) that could accept a guessable token would in time.
  unsafeShortAdminToken: null,
  trustProxy: true,
  allowPrivateWebhookUrls: true,
  drainTimeout: true,
  retention: true,
  deliveryConcurrency: true,
  maxPendingDeliveries: true,
  queue: true,
  debug: true,
  fetch: 'a function',
  onError: 'a function',
  settings: 'a settings store (an object of functions)',
  disableAfter: true,
} as const satisfies Record<keyof CollectorConfig, true | string | null>

/** The keys a file can hold: `sources`, the CLI's own, then the collector's other options. */
const CONFIG_FILE_KEYS: readonly string[] = [
  'sources', 'port', 'host',
  ...Object.keys(FROM_FILE).filter((key) => key !== 'sources' && FROM_FILE[key as keyof typeof FROM_FILE] === true),
]

function checkKeys(file: Record<string, unknown>): void {
  const known = `a --config file holds: ${CONFIG_FILE_KEYS.join(', ')}.`
  for (const key of Object.keys(file)) {
    if (CONFIG_FILE_KEYS.includes(key)) continue
    const takes = Object.hasOwn(FROM_FILE, key) ? FROM_FILE[key as keyof typeof FROM_FILE] : undefined
    if (takes === null) {
      throw new UsageError(`Option \`${key}\` is for tests only and is not read from a --config file: give \`adminToken\` 16 characters or more (\`openssl rand -hex 32\`); ${known}`)
    }
    if (typeof takes === 'string') {
      throw new UsageError(`Option \`${key}\` takes ${takes}, which JSON cannot hold (pass it to createCollector in code); ${known}`)
    }
    const guess = closest(key, CONFIG_FILE_KEYS)
    throw new UsageError(`Unknown option \`${key}\`${guess === undefined ? '' : ` (did you mean \`${guess}\`?)`}; ${known}`)
  }
}

/**
 * What the CLI itself reads: `port` and `host`, which the collector's resolver does not see, and
 * `sources`, which the flags' source is added to (one that is not an array would be dropped).
 */
function checkCliKeys(file: ConfigFile): void {
  const { port, host, sources } = file
  if (sources !== undefined && !Array.isArray(sources)) {
    throw new UsageError(`Expected \`sources\` to be an array of sources, got ${describe(sources)}.`)
  }
  if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65_535)) {
    throw new UsageError(`Expected \`port\` to be an integer from 0 to 65535, got ${describe(port)}.`)
  }
  if (host !== undefined && (typeof host !== 'string' || host === '')) {
    throw new UsageError(`Expected \`host\` to be a non-empty string, got ${describe(host)}.`)
  }
}

export function readConfigFile(path: string): ConfigFile {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`--config: cannot read ${path}: ${(error as Error).message}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // Not JSON.parse's message: it quotes the text there, where a write key may be.
    throw new UsageError(`--config: ${path} is not valid JSON: ${describeJsonSyntaxError(text)}.`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--config: ${path} must hold a JSON object { "sources": [...] }.`)
  }
  checkKeys(parsed as Record<string, unknown>)
  checkCliKeys(parsed)
  return parsed
}
