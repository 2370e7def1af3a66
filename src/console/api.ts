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

let token = ''

export const setToken = (value: string) => {
  token = value
}

/** Calls `path` (relative to the collector's root) and returns its JSON; throws `ApiFailure`. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  let response: Response
  try {
    response = await fetch(`/${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
      cache: 'no-store',
    })
  } catch (error) {
    throw new ApiFailure({ status: 0, code: 'NETWORK', message: `The collector did not answer: ${(error as Error).message}` })
  }
  const text = await response.text()
  let body: unknown
  try {
    body = text === '' ? {} : JSON.parse(text)
  } catch {
    body = {}
  }
  if (!response.ok) {
    const error = (body as { error?: Partial<ApiError> }).error ?? {}
    throw new ApiFailure({
      status: response.status,
      code: error.code ?? 'HTTP',
      message: error.message ?? `HTTP ${response.status}`,
      ...(error.field !== undefined && { field: error.field }),
    })
  }
  return body as T
}

// The shapes the admin endpoints answer: the collector's own types (type-only imports: no server
// code reaches the browser bundle).
import type { MessageRecord, MinuteCounts } from '../collector/console/recorder.js'
import type { SourceView } from '../collector/console/settings.js'

export type { AttemptRecord, MessageRecord } from '../collector/console/recorder.js'
export type { SourceView } from '../collector/console/settings.js'
export type { WebhookUrlConfig as UrlSetting } from '../collector/config.js'

export interface SourcesAnswer {
  settings: { store: 'memory' | 'file' | 'queue'; durable: boolean; notice?: string }
  sources: SourceView[]
}

export interface MessagesAnswer {
  version: number
  messages: MessageRecord[]
}

export interface ActivityAnswer {
  minutes: MinuteCounts[]
}
