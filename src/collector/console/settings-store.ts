/** The settings store's contract (a module of its own: ../config.ts takes one as an option). */
import type { SourceWebhooksConfig } from '../webhooks-config.js'

/**
 * Where settings changed in the console are kept. A store shared by several collector processes
 * (the `queue` server's) also has `load` (what was saved before, applied at start over the
 * config's) and `watch` (changes saved by another process, applied as they come).
 */
export interface SettingsStore {
  /** Where the settings are kept, as the console reports it. */
  readonly kind: 'memory' | 'file' | 'queue'
  /** Whether saved settings survive a restart. */
  readonly durable: boolean
  /** Keeps one source's settings; resolves with whether they were kept durably. May throw. */
  save(source: string, webhooks: SourceWebhooksConfig): Promise<boolean>
  /** The settings saved earlier, by source name. May throw (reported, the config's settings stay). */
  load?(): Promise<Record<string, SourceWebhooksConfig>>
  /** Calls `onChange` with each change another process saves; returns what stops watching. */
  watch?(onChange: (source: string, webhooks: SourceWebhooksConfig) => void): () => void
  /**
   * A shared store's compare-and-set, for a change sent with `If-Match`: keeps `webhooks` only if
   * the store still holds `previous` for the source (the settings this process last had from it,
   * by `load`, `watch` or its own save; `undefined`: none saved), in one atomic step. Without it,
   * the version is checked against this process's settings only, which another process's change
   * reaches a moment later. May throw.
   */
  saveIf?(source: string, webhooks: SourceWebhooksConfig, previous: SourceWebhooksConfig | undefined): Promise<SavedIf>
}

/** What `saveIf` did: kept the settings, or not, since the store holds others now (`held`). */
export type SavedIf = { kept: true; durable: boolean } | { kept: false; held: SourceWebhooksConfig | undefined }
