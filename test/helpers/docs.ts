/**
 * The documentation as tests read it: the README and every page of docs/ (not the generated API
 * reference, nor the site's build), with their code blocks labelled `file:line`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const ROOT = new URL('../..', import.meta.url).pathname

/** README.md, then docs/*.md in name order: repository paths. */
export const DOC_FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]

/** A documentation file's text, by repository path (`docs/client.md`). */
export function readDoc(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8')
}

export interface Block {
  file: string
  lang: string
  code: string
  line: number
}

/** Every fenced code block of one file, or of every documentation file. */
export function codeBlocks(files: string[] = DOC_FILES): Block[] {
  return files.flatMap((file) => {
    const text = readDoc(file)
    return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)].map((m) => ({
      file,
      lang: m[1],
      code: m[2],
      line: text.slice(0, m.index).split('\n').length,
    }))
  })
}

/** The section of `text` under `heading` (a whole heading line), up to the next heading of its level or higher. */
export function section(text: string, heading: string): string {
  const start = text.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`no heading "${heading}"`)
  const level = heading.indexOf(' ')
  const rest = text.slice(start + heading.length + 2)
  const end = rest.search(new RegExp(`^#{1,${level}} `, 'm'))
  return end < 0 ? rest : rest.slice(0, end)
}
