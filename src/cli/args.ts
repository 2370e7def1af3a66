/**
 * Command-line arguments of `isomorphic-analytics collect`, parsed with `node:util` parseArgs and
 * turned into a collector config. Every problem is a `UsageError` (exit code 2) that says what
 * is wrong and how to fix it.
 */
import { parseArgs } from 'node:util'
import type { CollectorConfig, SourceConfig, WebhookUrlConfig } from '../collector/index.js'
import { MAX_WEBHOOK_URLS } from '../webhooks/index.js'
import { describeArgvError } from './argv-errors.js'
import { readConfigFile } from './config-file.js'
import { duration } from './duration.js'
import { sourceFlagNames, type FlagNames } from './flag-names.js'
import { UsageError } from './usage-error.js'

/** The admin endpoints an admin token enables, as the banner lists them; --help lists each too. */
export const ADMIN_ENDPOINTS = ['POST /v1/deletions', 'POST /v1/audiences', 'GET /v1/stats', '/v1/admin/...'] as const

export const HELP = `Usage: isomorphic-analytics collect [options]

Runs the analytics collector: accepts batches from clients (POST /v1/batch and
the single calls) and forwards every message to the source's webhook URLs.

Source (give --write-key, or --config, or both):
  --write-key KEY         write key clients send (Basic auth user, or "writeKey")
  --name NAME             name of that source (default: "default")
  --webhook URL           forward to this http(s) URL; repeat for up to 5 URLs
  --header 'Name: value'  static header sent to every --webhook URL; repeatable
  --shared-secret SECRET  sign forwarded bodies (X-Signature, HMAC-SHA1 hex)
  --standard-secret WHSEC also sign them the Standard Webhooks way (webhook-id,
                          webhook-timestamp, webhook-signature) with this
                          whsec_… secret; give it twice during a rotation
  --config FILE           JSON file: { "sources": [...], "adminToken"?, "port"?, "host"? }
                          (same shape as createCollector's config; keeps secrets
                          off the command line)

Server:
  --port N                port to listen on (default: 8700; 0 picks a free one)
  --host ADDR             address to bind (default: 127.0.0.1, loopback only)
  --admin-token TOKEN     enable the console (GET /console) and the admin
                          endpoints (POST /v1/deletions, POST /v1/audiences,
                          GET /v1/stats, /v1/admin/...), authenticated with
                          "Authorization: Bearer TOKEN"; settings changed in
                          the console are kept in the --queue server (shared),
                          else written back to the --config file; at
                          least 16 characters (openssl rand -hex 32), and
                          more than 10 wrong tokens a minute from one
                          address are answered 429
  --trust-proxy           behind a reverse proxy: count wrong admin tokens
                          per address in X-Forwarded-For (the last one),
                          not per connection
  --allow-private-webhook-urls
                          let URLs set in the console reach loopback and
                          private addresses (local development; URLs
                          given here or in --config always may)
  --drain-timeout MS      on SIGINT/SIGTERM, wait this long for deliveries
                          in flight before giving up (default: 10000)
  --retention DURATION    keep forwarded payloads this long for replay
                          (POST /v1/admin/replay, the console's Replay):
                          24h, 30m, 90s or ms (default: 24h; needs
                          --admin-token)
  --queue URL             keep deliveries in a queue server, shared by every
                          collector on it: redis://… or postgres://… (default:
                          $ANALYTICS_QUEUE_URL, else this process's memory)
  --disable-after TIME    disable a webhook URL after this long of nothing
                          but failed attempts, until enabled again in the
                          console (default: 24h; 0: never; e.g. 30m, 7d)
  --progress-interval MS  when output is not a terminal, print counts this
                          often if they changed (default: 5000)

  -h, --help              show this help
  -v, --version           show the version

Set DEBUG=analytics for a log line per request, delivery and retry.

Example:
  isomorphic-analytics collect --port 8700 --write-key KEY \\
    --webhook https://example.com/hook --shared-secret s3cret
`

export interface CollectArgs {
  port: number
  host: string
  drainTimeout: number
  progressInterval: number
  config: CollectorConfig
  /** `--config FILE`: where the console writes settings back. */
  configFile: string | undefined
  /** The config paths that flags (or `ANALYTICS_QUEUE_URL`) set, named as the user wrote them, for messages. */
  flagNames: FlagNames
}

const OPTIONS = {
  'write-key': { type: 'string' },
  name: { type: 'string' },
  webhook: { type: 'string', multiple: true },
  header: { type: 'string', multiple: true },
  'shared-secret': { type: 'string' },
  'standard-secret': { type: 'string', multiple: true },
  config: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'admin-token': { type: 'string' },
  'trust-proxy': { type: 'boolean' },
  'allow-private-webhook-urls': { type: 'boolean' },
  'drain-timeout': { type: 'string' },
  retention: { type: 'string' },
  queue: { type: 'string' },
  'progress-interval': { type: 'string' },
  'disable-after': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const

/** The values' names in --help, for "--port needs a value (--port N)". */
const VALUE_NAMES: Record<string, string> = {
  'write-key': 'KEY', name: 'NAME', webhook: 'URL', header: "'Name: value'", 'shared-secret': 'SECRET', 'standard-secret': 'WHSEC', config: 'FILE',
  port: 'N', host: 'ADDR', 'admin-token': 'TOKEN', 'drain-timeout': 'MS', retention: 'DURATION', queue: 'URL', 'progress-interval': 'MS', 'disable-after': 'TIME',
}

/** The flags that take one value: given twice, the first was dropped without a word. */
const SINGLE_VALUED = Object.entries(OPTIONS).filter(([, option]) => option.type === 'string' && !('multiple' in option)).map(([name]) => name)

type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number]

/** Refuses a single-valued flag given more than once, naming it (not its values: they may be secrets). */
function refuseRepeated(tokens: readonly Token[]): void {
  const seen = new Set<string>()
  for (const token of tokens) {
    if (token.kind !== 'option' || !SINGLE_VALUED.includes(token.name)) continue
    if (seen.has(token.name)) {
      const more = token.name === 'write-key' ? ' (one source per --write-key; more sources go in --config)' : ''
      throw new UsageError(`--${token.name} is given more than once; give it once${more}.`)
    }
    seen.add(token.name)
  }
}

/**
 * The message for an argument that is no flag's value. After a flag's value it is most likely the
 * rest of an unquoted value (`--header X-Api-Key: VALUE`), so it is not shown: it may be a secret.
 */
function unexpectedArgument(tokens: readonly Token[]): string {
  const at = tokens.findIndex((token, i) => token.kind === 'positional' && tokens.slice(0, i).some((t) => t.kind === 'positional'))
  const [before, token] = [tokens[at - 1], tokens[at] as Extract<Token, { kind: 'positional' }>]
  if (before?.kind !== 'option' || before.value === undefined) return `Unexpected argument "${token.value}".`
  if (before.name === 'header') {
    const colon = before.value.indexOf(':')
    const name = colon > 0 ? before.value.slice(0, colon).trim() : 'Name'
    return `Unexpected argument after --header ${name} (not shown: it may be a credential); a header is one argument, its value quoted with its name: --header '${name}: value'.`
  }
  return `Unexpected argument after --${before.name} ${VALUE_NAMES[before.name] ?? 'VALUE'} (not shown: it may be part of a secret); quote a value that holds spaces.`
}

function integer(flag: string, text: string, min: number, max: number): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${flag} expects an integer from ${min} to ${max}, got "${text}".`)
  }
  return value
}

function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':')
  // Not the text itself: a header is where credentials go (`Authorization Bearer …` without its colon).
  if (colon <= 0) throw new UsageError(`--header expects 'Name: value', and one has ${colon === 0 ? 'no name before its colon' : 'no colon'} (its text is not shown: headers carry credentials).`)
  return [text.slice(0, colon).trim(), text.slice(colon + 1).trim()]
}

/** Header names are case-insensitive: one given twice would silently keep only its last value. */
function parseHeaders(texts: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {}
  const seen = new Set<string>()
  for (const [name, value] of texts.map(parseHeader)) {
    if (seen.has(name.toLowerCase())) throw new UsageError(`--header ${name} is given twice; give each header once.`)
    seen.add(name.toLowerCase())
    headers[name] = value
  }
  return headers
}

export type Command = { kind: 'help' } | { kind: 'version' } | { kind: 'collect'; args: CollectArgs }

/** `env.ANALYTICS_QUEUE_URL`: the queue server when `--queue` is not given. */
export function parseCommand(argv: readonly string[], env: { ANALYTICS_QUEUE_URL?: string } = {}): Command {
  let parsed
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true, tokens: true })
  } catch (error) {
    throw new UsageError(describeArgvError(error, argv, OPTIONS, VALUE_NAMES))
  }
  const { values, positionals, tokens } = parsed
  if (values.help) return { kind: 'help' }
  if (values.version) return { kind: 'version' }
  refuseRepeated(tokens)
  // main() adds 'Run "isomorphic-analytics collect --help" for usage.' to every UsageError.
  if (positionals.length === 0) throw new UsageError('Missing command; the command is "collect".')
  if (positionals[0] !== 'collect') throw new UsageError(`Unknown command "${positionals[0]}"; the command is "collect".`)
  if (positionals.length > 1) throw new UsageError(unexpectedArgument(tokens))
  if (values.host !== undefined && values.host.trim() === '') throw new UsageError('--host expects an address (--host ADDR, e.g. 127.0.0.1 or 0.0.0.0), got "".')

  const file = values.config === undefined ? {} : readConfigFile(values.config)
  const { port: filePort, host: fileHost, ...fileConfig } = file
  const sources: SourceConfig[] = Array.isArray(fileConfig.sources) ? [...fileConfig.sources] : []
  const webhooks = values.webhook ?? []
  const headers = parseHeaders(values.header ?? [])
  const flagNames = new Map<string, string>()
  const key = values['write-key']
  if (key === undefined) {
    for (const flag of ['webhook', 'header', 'shared-secret', 'standard-secret', 'name'] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} needs --write-key (it configures that source).`)
    }
  } else {
    if (webhooks.length === 0 && (values.header !== undefined || values['shared-secret'] !== undefined || values['standard-secret'] !== undefined)) {
      throw new UsageError('--header, --shared-secret and --standard-secret apply to --webhook URLs; give at least one --webhook.')
    }
    if (webhooks.length > MAX_WEBHOOK_URLS) {
      throw new UsageError(`--webhook is given ${webhooks.length} times; a source forwards to at most ${MAX_WEBHOOK_URLS} URLs.`)
    }
    for (const [path, flag] of sourceFlagNames(sources.length, { webhooks, headerNames: Object.keys(headers), name: values.name })) flagNames.set(path, flag)
    const urls: WebhookUrlConfig[] = webhooks.map((url) => (values.header ? { url, headers } : { url }))
    sources.push({
      writeKey: key,
      name: values.name ?? 'default',
      ...(urls.length > 0 && {
        webhooks: {
          enabled: true,
          urls,
          ...(values['shared-secret'] !== undefined && { sharedSecret: values['shared-secret'] }),
          ...(values['standard-secret'] !== undefined && { standardSecrets: values['standard-secret'] }),
        },
      }),
    })
  }
  if (sources.length === 0) throw new UsageError('No source: give --write-key KEY (and --webhook URL), or --config FILE.')

  const adminToken = values['admin-token'] ?? fileConfig.adminToken
  if (values['admin-token'] !== undefined) flagNames.set('adminToken', '`--admin-token`')
  const trustProxy = values['trust-proxy'] ?? fileConfig.trustProxy
  const allowPrivateWebhookUrls = values['allow-private-webhook-urls'] ?? fileConfig.allowPrivateWebhookUrls
  const queue = values.queue ?? (env.ANALYTICS_QUEUE_URL || undefined) ?? fileConfig.queue
  if (values.queue !== undefined) flagNames.set('queue', '`--queue`')
  else if (env.ANALYTICS_QUEUE_URL) flagNames.set('queue', '`ANALYTICS_QUEUE_URL`')
  const drainTimeout = values['drain-timeout'] === undefined
    ? (fileConfig.drainTimeout ?? 10_000)
    : integer('drain-timeout', values['drain-timeout'], 0, 3_600_000)
  const retention = values.retention === undefined ? fileConfig.retention : duration('retention', values.retention, 365 * 86_400_000)
  const disableAfter = values['disable-after'] === undefined ? fileConfig.disableAfter : duration('disable-after', values['disable-after'], 365 * 86_400_000)
  return {
    kind: 'collect',
    args: {
      port: values.port === undefined ? (filePort ?? 8700) : integer('port', values.port, 0, 65_535),
      host: values.host ?? fileHost ?? '127.0.0.1',
      drainTimeout,
      progressInterval: values['progress-interval'] === undefined ? 5_000 : integer('progress-interval', values['progress-interval'], 100, 3_600_000),
      config: { ...fileConfig, sources, drainTimeout, ...(adminToken !== undefined && { adminToken }), ...(trustProxy !== undefined && { trustProxy }), ...(allowPrivateWebhookUrls !== undefined && { allowPrivateWebhookUrls }), ...(queue !== undefined && { queue }), ...(retention !== undefined && { retention }), ...(disableAfter !== undefined && { disableAfter }) },
      configFile: values.config,
      flagNames,
    },
  }
}
