/**
 * `--config FILE` as the console's settings store: a source's Webhooks settings changed in the
 * console are written back to that source's entry in the file, atomically (a temporary file in
 * the same directory, then a rename), so the next start uses them. A source that is not in the
 * file (given by `--write-key`) keeps its changes in memory only.
 */
import { readFile, rename, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { SettingsStore, SourceWebhooksConfig } from '../collector/index.js'
import { describeJsonSyntaxError } from '../message/json-syntax.js'

/** The file as JSON; when it is not (edited since the start), said without JSON.parse's quote of it (secrets). */
function parseFile(path: string, text: string): { sources?: Array<{ name?: unknown; webhooks?: unknown }> } {
  try {
    return JSON.parse(text) as { sources?: Array<{ name?: unknown; webhooks?: unknown }> }
  } catch {
    throw new Error(`${path} is no longer valid JSON: ${describeJsonSyntaxError(text)}; the change is not written.`)
  }
}

export function fileSettings(path: string): SettingsStore {
  let sequence = 0
  return {
    kind: 'file',
    durable: true,
    async save(source: string, webhooks: SourceWebhooksConfig): Promise<boolean> {
      const config = parseFile(path, await readFile(path, 'utf8'))
      const entry = Array.isArray(config.sources) ? config.sources.find((s) => s?.name === source) : undefined
      if (entry === undefined) return false
      entry.webhooks = webhooks
      const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${++sequence}.tmp`)
      await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
      await rename(temporary, path)
      return true
    },
  }
}
