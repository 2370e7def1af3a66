/**
 * The console's calls to the collector's admin endpoints (documented in the README). The admin
 * token lives in this module's memory only: it goes in the `Authorization` header, never in a URL
 * and never in storage.
 */
export interface ApiError {
  status: number
  code: string
  message: string
  field?: string
}

export class ApiFailure extends Error {
  constructor(readonly problem: ApiError) {
    super(problem.message)
  }
}

interface CallInit {
  method?: string
  body?: unknown
  headers?: Record<string, string>
  signal?: AbortSignal
}

let token = ''
let refused: ((failure: ApiFailure) => void) | undefined

export const setToken = (value: string) => {
  token = value
}

/**
 * `onRefused` is called with the first 401 answered to any call from now on (the collector no
 * longer takes the token: restarted with another one), once; `undefined` stops that.
 */
export const whenRefused = (onRefused: ((failure: ApiFailure) => void) | undefined) => {
  refused = onRefused
}

function request(path: string, init: CallInit): Promise<Response> {
  return fetch(`/${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body !== undefined && { 'content-type': 'application/json' }),
      ...init.headers,
    },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    ...(init.signal && { signal: init.signal }),
    cache: 'no-store',
  }).catch((error: unknown) => {
    throw new ApiFailure({ status: 0, code: 'NETWORK', message: `The collector did not answer: ${(error as Error).message}` })
  })
}

async function failure(response: Response): Promise<ApiFailure> {
  let body: unknown
  try {
    body = JSON.parse(await response.text())
  } catch {
    body = {}
  }
  const error = (body as { error?: Partial<ApiError> }).error ?? {}
  const failed = new ApiFailure({
    status: response.status,
    code: error.code ?? 'HTTP',
    message: error.message ?? `HTTP ${response.status}`,
    ...(error.field !== undefined && { field: error.field }),
  })
  if (failed.problem.status === 401 && refused) {
    const onRefused = refused
    refused = undefined
    onRefused(failed)
  }
  return failed
}

const json = JSON as JSON & { rawJSON?: (text: string) => unknown }
const DIGITS = /^-?\d+$/

/**
 * Parses an answer of the collector. It writes an integer beyond ±(2^53 − 1) digit for digit (an
 * int64 ID in a message), which `JSON.parse` alone rounds (`9223372036854775807` becomes
 * `9223372036854776000`). Where the browser hands the reviver each value's source text (JSON.parse
 * source text access: Chrome 114, Firefox 135, Safari 18.4, which all ship `JSON.rawJSON` with it),
 * such an integer becomes `JSON.rawJSON` of its digits: an object that `JSON.stringify` writes back
 * as those digits (the raw JSON view), and that nothing else in the page reads. Elsewhere it is
 * rounded, as `JSON.parse` does. Only text with 16 digits in a row can hold one: other answers
 * are parsed without a reviver.
 */
function parseAnswer(text: string): unknown {
  if (json.rawJSON === undefined || !/\d{16}/.test(text)) return JSON.parse(text)
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && context?.source !== undefined && DIGITS.test(context.source)
      ? json.rawJSON!(context.source)
      : value)
}

/** Calls `path` (relative to the collector's root) and returns its JSON; throws `ApiFailure`. */
export async function api<T>(path: string, init: CallInit = {}): Promise<T> {
  const response = await request(path, init)
  if (!response.ok) throw await failure(response)
  const text = await response.text()
  return (text === '' ? {} : parseAnswer(text)) as T
}

/**
 * Reads the event stream at `path` (Server-Sent Events, read with `fetch` so the token stays in
 * the header), calling `onData` with each event's parsed `data`, until the stream ends (resolves),
 * fails or `signal` aborts it (throws `ApiFailure`).
 */
export async function apiStream(path: string, onData: (data: unknown) => void, signal?: AbortSignal): Promise<void> {
  const response = await request(path, { ...(signal && { signal }) })
  if (!response.ok || response.body === null) throw await failure(response)
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffered = ''
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffered += chunk.value
      const events = buffered.split('\n\n')
      buffered = events.pop()!
      for (const event of events) {
        const data = event.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart())
        if (data.length > 0) onData(parseAnswer(data.join('\n')))
      }
    }
  } catch (error) {
    throw error instanceof ApiFailure ? error : new ApiFailure({ status: 0, code: 'NETWORK', message: `The live view lost the collector: ${(error as Error).message}` })
  }
}

// The shapes the admin endpoints answer: the collector's own types (type-only imports: no server
// code reaches the browser bundle).
import type { MinuteCounts } from '../collector/console/recorder.js'
import type { SourceView } from '../collector/console/settings.js'

export type { AttemptRecord, MessageRecord } from '../collector/console/recorder.js'
export type { SourceView } from '../collector/console/settings.js'
export type { MessagesAnswer } from '../collector/console/stream.js'
export type { WebhookUrlConfig as UrlSetting } from '../collector/config.js'

export interface SourcesAnswer {
  settings: { store: 'memory' | 'file' | 'queue'; durable: boolean; notice?: string }
  sources: SourceView[]
}


export interface ActivityAnswer {
  minutes: MinuteCounts[]
}
