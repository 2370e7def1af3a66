/**
 * Each source's Webhooks settings as the console sees and changes them. A change is validated
 * exactly as the config is (`resolveSourceWebhooks` and the destination's own rules: the same
 * option paths and messages), kept by the settings store, then applied: the next message goes to
 * the new destination, without a restart. Secrets, static header values, write keys and the
 * credentials in URLs are shown masked; a masked value sent back keeps the value it stands for
 * (./masked.ts). Each source's
 * settings have a version (./versions.ts): a change sent with `If-Match` is refused (409) when
 * they changed since they were read, here or, with a shared store, through another process.
 */
import { ConfigError, isConfigError } from '../../errors.js'
import { describe, isPlainObject } from '../../message/validate.js'
import type { WebhookDestination } from '../../webhooks/index.js'
import { resolveSourceWebhooks, type ResolvedSource, type SourceWebhooksConfig, type WebhookUrlConfig } from '../config.js'
import { HttpProblem, notFound } from '../http/errors.js'
import { ALLOW_PRIVATE } from '../../webhooks/public-address.js'
import { maskUrl } from '../../secrets.js'
import { mask, maskHeaders, unmask } from './masked.js'
import { etag, fingerprint, ifMatches } from './versions.js'
import type { SettingsStore } from './settings-store.js'

export type { SavedIf, SettingsStore } from './settings-store.js'

/** The embedded default: settings live in this process only. */
export const memorySettings: SettingsStore = { kind: 'memory', durable: false, save: async () => false }

/**
 * One source's Webhooks settings as the console and `GET /v1/admin/sources` show them: the write
 * key, shared secret, header values and URL credentials masked, with the settings' version.
 */
export interface SourceView {
  /** The source's name. */
  name: string
  /** Masked: its last four characters at most. */
  writeKey: string
  /** The settings' version (./versions.ts): sent back in `If-Match` as `"<version>"`. */
  version: string
  /** Header values, the shared secret and the URLs' credentials (`?token=…1234`) masked, like the write key. */
  webhooks: { enabled: boolean; urls: WebhookUrlConfig[]; sharedSecret: string | null }
}

const CHANGE_KEYS = new Set(['enabled', 'urls', 'sharedSecret'])

export interface SettingsHost {
  /** The sources as configured (the config's input form, so a disabled destination keeps its URLs). */
  sources: ReadonlyArray<{ writeKey: string; name: string; webhooks?: SourceWebhooksConfig }>
  /** Builds a source's destination (`undefined` when not enabled); throws the config's `ConfigError`. */
  build(source: ResolvedSource, index: number): WebhookDestination | undefined
  /** Why source `index` may not be sent to `url` (set through the console), or `undefined`. */
  refuseUrl(index: number, url: string): string | undefined
  /** Puts a new destination (or none) in place for the source's next message. */
  apply(index: number, destination: WebhookDestination | undefined): void
}

export class SourceSettings {
  readonly #host: SettingsHost
  readonly #current: Array<SourceWebhooksConfig | undefined>
  /** What the store last gave or took for each source (`undefined`: nothing yet): `saveIf`'s `previous`. */
  readonly #stored: Array<SourceWebhooksConfig | undefined>
  readonly #report: (error: unknown) => void
  #writes: Promise<unknown> = Promise.resolve()

  readonly #stopWatching: (() => void) | undefined
  /** Settles once the store's saved settings are applied (at once without `load`); never rejects. */
  readonly ready: Promise<void>

  /** With a shared store, loads its settings (later changes wait for them) and watches it; `report` gets what fails there. */
  constructor(host: SettingsHost, readonly store: SettingsStore, report: (error: unknown) => void = () => {}) {
    this.#host = host
    this.#current = host.sources.map((s) => s.webhooks)
    this.#stored = host.sources.map(() => undefined)
    this.#report = report
    const adopt = (name: string, webhooks: SourceWebhooksConfig) => {
      try {
        this.#adopt(name, webhooks)
      } catch (error) {
        report(error)
      }
    }
    if (store.load) {
      const load = store.load.bind(store)
      this.#writes = load().then(
        (saved) => Object.entries(saved).forEach(([name, webhooks]) => adopt(name, webhooks)),
        (error: unknown) => report(new Error(`Could not load the saved console settings (${store.kind} store); the config's settings stay`, { cause: error })),
      )
    }
    this.ready = this.#writes.then(() => {})
    this.#stopWatching = store.watch?.((name, webhooks) => {
      this.#writes = this.#writes.then(() => adopt(name, webhooks))
    })
  }

  /** Stops watching the store. */
  close(): void {
    this.#stopWatching?.()
  }

  view(): SourceView[] {
    return this.#host.sources.map((source, i) => this.#view(i))
  }

  /** One source's settings; a 404 when no source has that name. */
  viewOf(name: string): SourceView {
    return this.#view(this.#indexOf(name))
  }

  get notice(): string | undefined {
    return this.store.durable ? undefined : 'Settings changed here are kept in memory only: they will not survive a restart of the collector.'
  }

  /**
   * Validates `input` (`{ enabled?, urls?, sharedSecret? }`; `sharedSecret` absent keeps the
   * current one, `null` removes it; a masked value as shown, the secret's, a header's or a URL's,
   * keeps the value it stands for) for source `name`, keeps it and applies it. A 400 naming the field
   * (the config's path and message) changes nothing. With `ifMatch` (an `If-Match` header), a 409
   * when the settings are no longer of that version; without it, the change applies to whatever
   * they are now.
   */
  update(name: string, input: unknown, ifMatch?: string): Promise<{ source: SourceView; persisted: boolean }> {
    const next = this.#writes.then(() => this.#update(name, input, ifMatch))
    this.#writes = next.catch(() => {})
    return next
  }

  async #update(name: string, input: unknown, ifMatch: string | undefined): Promise<{ source: SourceView; persisted: boolean }> {
    const index = this.#indexOf(name)
    if (ifMatch !== undefined && !ifMatches(ifMatch, this.#view(index).version)) throw this.#changed(index)
    const at = `sources[${index}].webhooks`
    if (!isPlainObject(input)) throw invalid(new ConfigError(at, `Expected \`${at}\` to be an object { enabled?, urls, sharedSecret? }, got ${describe(input)}.`))
    for (const key of Object.keys(input)) {
      if (!CHANGE_KEYS.has(key)) throw invalid(new ConfigError(`${at}.${key}`, `Unknown option \`${at}.${key}\`; known: ${[...CHANGE_KEYS].join(', ')}.`))
    }
    const current = this.#current[index] ?? {}
    let destination: WebhookDestination | undefined
    let webhooks: SourceWebhooksConfig
    try {
      const { sharedSecret, ...change } = unmask(input, current, at)
      webhooks = { ...current, ...change }
      if (sharedSecret === null) delete webhooks.sharedSecret
      else if (sharedSecret !== undefined) webhooks.sharedSecret = sharedSecret as string
      this.#refusePrivate(index, webhooks, at)
      destination = this.#build(index, webhooks)
    } catch (error) {
      throw isConfigError(error) ? invalid(error) : error
    }
    const persisted = await this.#save(index, webhooks, ifMatch !== undefined)
    this.#stored[index] = webhooks
    this.#apply(index, webhooks, destination)
    return { source: this.#view(index), persisted }
  }

  /** A URL that may not be reached from here (a private address, unless allowed) is a `ConfigError` naming it. */
  #refusePrivate(index: number, webhooks: SourceWebhooksConfig, at: string): void {
    webhooks.urls?.forEach((entry, i) => {
      const url = (entry as Partial<WebhookUrlConfig> | undefined)?.url
      const reason = typeof url === 'string' ? this.#host.refuseUrl(index, url) : undefined
      if (reason === undefined) return
      const option = `${at}.urls[${i}].url`
      throw new ConfigError(option, `Expected \`${option}\` to reach a public address; its host is ${reason}. ${ALLOW_PRIVATE}`)
    })
  }

  /** Keeps `webhooks` in the store; `conditional`: only if no other process changed them (`saveIf`). */
  async #save(index: number, webhooks: SourceWebhooksConfig, conditional: boolean): Promise<boolean> {
    const { name } = this.#host.sources[index]
    if (!conditional || this.store.saveIf === undefined) return this.store.save(name, webhooks)
    const saved = await this.store.saveIf(name, webhooks, this.#stored[index])
    if (saved.kept) return saved.durable
    // Changed through another process, whose notice has not come yet: applied now, so that the
    // settings read again are those.
    this.#stored[index] = saved.held
    if (saved.held !== undefined) {
      try {
        this.#adopt(name, saved.held)
      } catch (error) {
        this.#report(error)
      }
    }
    throw this.#changed(index)
  }

  #changed(index: number): HttpProblem {
    const { name } = this.#host.sources[index]
    const { version } = this.#view(index)
    return new HttpProblem(409, 'CONFLICT',
      `The Webhooks settings of source ${JSON.stringify(name)} changed since they were read (in another tab, by another admin or through another collector process); nothing was saved. Read them again and make the change on them.`,
      { headers: { etag: etag(version) } })
  }

  #indexOf(name: string): number {
    const index = this.#host.sources.findIndex((s) => s.name === name)
    if (index === -1) throw notFound(`/v1/admin/sources/${name}`, `No source is named ${JSON.stringify(name)}.`)
    return index
  }

  /** Applies settings saved elsewhere (the store's): checked as the config is; a `ConfigError` changes nothing. */
  #adopt(name: string, webhooks: SourceWebhooksConfig): void {
    const index = this.#host.sources.findIndex((s) => s.name === name)
    if (index === -1) return // A source this process does not serve.
    this.#stored[index] = webhooks
    this.#apply(index, webhooks, this.#build(index, webhooks))
  }

  #build(index: number, webhooks: SourceWebhooksConfig): WebhookDestination | undefined {
    const source = this.#host.sources[index]
    const resolved = resolveSourceWebhooks(webhooks, index)
    // `configured`: a disabled destination's settings are checked too (they are shown, and may be turned on).
    return this.#host.build({ writeKey: source.writeKey, name: source.name, webhooks: resolved, configured: webhooks }, index)
  }

  #apply(index: number, webhooks: SourceWebhooksConfig, destination: WebhookDestination | undefined): void {
    this.#current[index] = webhooks
    this.#host.apply(index, destination)
  }

  #view(index: number): SourceView {
    const { name, writeKey } = this.#host.sources[index]
    const webhooks = this.#current[index] ?? {}
    const urls = webhooks.urls ?? []
    const shown = {
      enabled: webhooks.enabled ?? urls.length > 0,
      urls: urls.map((u) => ({ url: maskUrl(u.url), ...(u.headers && { headers: maskHeaders(u.headers) }) })),
      sharedSecret: webhooks.sharedSecret === undefined ? null : mask(webhooks.sharedSecret),
    }
    return { name, writeKey: mask(writeKey), version: fingerprint(JSON.stringify(shown)), webhooks: shown }
  }
}

/** The config's error, as a 400 naming the field. */
const invalid = (error: ConfigError) => new HttpProblem(400, 'VALIDATION', error.message, { field: error.option })
