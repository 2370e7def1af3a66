/**
 * Server runtimes only (Node, Bun, Deno; not in the browser build): the client option `spill`.
 * What a client still holds when its process exits is written, synchronously, to a file of its
 * own in the spill directory; the next client made with the same directory and write key claims
 * each such file (a rename: one process wins it), reads it, removes it and sends its messages.
 *
 * The file system is reached through `process.getBuiltinModule` (Node 20.16+, Bun, Deno): no
 * `import` of `node:fs` that a bundler for a worker or an edge runtime would have to resolve.
 * Files are JSON Lines (a message's JSON text has no raw line break), written under a temporary
 * name and renamed, so a reader never sees half a file.
 */

interface FsLike {
  mkdirSync(path: string, options: { recursive: true }): unknown
  readdirSync(path: string): string[]
  readFileSync(path: string, encoding: 'utf8'): string
  writeFileSync(path: string, text: string, options: { mode: number }): void
  renameSync(from: string, to: string): void
  unlinkSync(path: string): void
}

interface PathLike {
  resolve(...paths: string[]): string
  join(...paths: string[]): string
}

const builtin = <T>(id: string): T | undefined =>
  (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process?.getBuiltinModule?.(id) as T | undefined

/** `dir` made absolute against the working directory (as given where there is no `node:path`). */
export const absolutePath = (dir: string): string => builtin<PathLike>('node:path')?.resolve(dir) ?? dir

/** Names files of one write key apart: FNV-1a of the key, 32 bits (not a secret's hash: the key stays out of file names). */
export function keyTag(writeKey: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < writeKey.length; i++) hash = Math.imul(hash ^ writeKey.charCodeAt(i), 0x01000193)
  return (hash >>> 0).toString(16).padStart(8, '0')
}

const PREFIX = 'isomorphic-analytics-'

export interface Spill {
  readonly dir: string
  /** Messages (JSON texts) left by exited processes for this write key: claimed, read and removed. */
  recover(): string[]
  /** Writes `texts` to a new file, synchronously; throws when it cannot. */
  write(texts: readonly string[]): void
}

/**
 * The spill directory `dir` of the clients of `writeKey`, made if missing. Throws when this
 * runtime has no file system or the directory cannot be made.
 */
export function openSpill(dir: string, writeKey: string): Spill {
  const fs = builtin<FsLike>('node:fs')
  const path = builtin<PathLike>('node:path')
  if (!fs || !path) throw new Error('this runtime has no `process.getBuiltinModule` for `node:fs` (Node 20.16+, Bun and Deno have it)')
  fs.mkdirSync(dir, { recursive: true })
  const mine = `${PREFIX}${keyTag(writeKey)}-`
  let written = 0
  return {
    dir,
    recover() {
      const texts: string[] = []
      for (const name of fs.readdirSync(dir)) {
        if (!name.startsWith(mine) || !name.endsWith('.jsonl')) continue
        const claimed = path.join(dir, `${name}.${process.pid}.claimed`)
        try {
          fs.renameSync(path.join(dir, name), claimed)
        } catch {
          // Claimed by another process first.
          continue
        }
        const text = fs.readFileSync(claimed, 'utf8')
        fs.unlinkSync(claimed)
        for (const line of text.split('\n')) if (line) texts.push(line)
      }
      return texts
    },
    write(texts) {
      const name = `${mine}${process.pid}-${Date.now()}-${written++}`
      const temporary = path.join(dir, `${name}.tmp`)
      // Messages may hold personal data: readable by the process's user only.
      fs.writeFileSync(temporary, texts.join('\n') + '\n', { mode: 0o600 })
      fs.renameSync(temporary, path.join(dir, `${name}.jsonl`))
    },
  }
}
