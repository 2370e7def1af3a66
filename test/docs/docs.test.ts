/** The README and docs/: what they state agrees with the code and the scripts that measure it. */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { TABLES, tableText } from '../../bench/docs-tables.mjs'
import { readResults } from '../../bench/results.mjs'
import { generatedBlocks } from '../../scripts/generated-blocks.mjs'
import { DEFAULTS } from '../../src/client/options.js'
import { DOC_FILES, ROOT, readDoc, section } from '../helpers/docs.js'

const readme = readDoc('README.md')

/** Rows of the client's options table: option name → default cell. */
function optionsTable(): Map<string, string> {
  const table = section(readDoc('docs/client.md'), '## Options').split('\n\n').find((block) => block.trimStart().startsWith('|'))!.trim()
  const rows = new Map<string, string>()
  for (const line of table.split('\n').slice(2)) {
    const cells = line.split('|').map((c) => c.trim())
    rows.set(cells[1].replace(/`/g, ''), cells[3])
  }
  return rows
}

describe('README', () => {
  it('is the way in, not the reference: at most 300 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300)
  })

  it('the first screen shows the two commands and what `npm start` prints, before anything else', () => {
    const firstSection = readme.split('\n## ')[1]
    expect(firstSection.startsWith('The two commands\n')).toBe(true)
    expect(firstSection).toMatch(/```sh\nnpm install && npm start .*\nnpm test .*\n```/)
    expect(firstSection).toContain('```text\nisomorphic-analytics: the whole pipeline on loopback')
  })

  it('names each of the four entries and links every page of docs/', () => {
    for (const entry of ['isomorphic-analytics', 'isomorphic-analytics/webhooks', 'isomorphic-analytics/collector', 'isomorphic-analytics/testing']) {
      expect(readme).toContain(`| \`${entry}\` |`)
    }
    for (const page of DOC_FILES.filter((f) => !['README.md', 'docs/index.md', 'docs/changelog.md'].includes(f))) expect(readme, page).toContain(`](${page})`)
  })
})

describe('docs', () => {
  it('the client page documents every default exactly as the resolver applies it', () => {
    const rows = optionsTable()
    for (const [option, value] of Object.entries(DEFAULTS)) {
      const cell = rows.get(option)
      expect(cell, `docs/client.md has no row for \`${option}\``).toBeDefined()
      const shown = typeof value === 'string' ? `\`'${value}'\`` : `\`${value}\``
      expect(cell, `docs/client.md default of \`${option}\``).toBe(shown)
    }
  })

  it('refer to no document a user does not have, and to no file the repository lacks', () => {
    const tracked = new Set(execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n'))
    let named = 0
    for (const file of DOC_FILES) {
      const text = readDoc(file)
      // The source documents the port was made from, and the project's own planning files, are
      // not in the repository or the package: the docs must say what they mean themselves.
      expect(text, file).not.toMatch(/\bseed\b|API\.md|STYLE\.md|BRIEF|\bissue #?\d/i)
      // Every repository path they name exists (dist/ once built, so only its sources are checked).
      for (const [, path] of text.matchAll(/`((?:examples|scripts|test|bench|src|\.ci)\/[^`\s]*)`/g)) {
        named++
        const exists = path.endsWith('/') ? [...tracked].some((f) => f.startsWith(path)) : tracked.has(path) || existsSync(join(ROOT, path))
        expect(exists, `${file} names \`${path}\`, which is not in the repository`).toBe(true)
      }
    }
    expect(named).toBeGreaterThan(10)
  })

  it('every relative link names a file that exists', () => {
    for (const file of DOC_FILES) {
      for (const [, target] of readDoc(file).matchAll(/\]\((?!https?:|#|mailto:)([^)#\s]+)(?:#[^)]*)?\)/g)) {
        expect(existsSync(join(ROOT, file, '..', target)), `${file} links to ${target}`).toBe(true)
      }
    }
  })

  it('the performance tables are what bench/docs-tables.mjs writes from bench/results.json (no figure typed by hand)', () => {
    const page = readDoc('docs/performance.md')
    const blocks = generatedBlocks(page)
    const results = readResults()
    for (const table of TABLES) {
      expect(blocks.get(table.id)?.script, `docs/performance.md has no generated block "${table.id}"`).toBe('bench/docs-tables.mjs')
      expect(blocks.get(table.id)?.text, `docs/performance.md's "${table.id}" table is not what bench/results.json gives: run \`node bench/docs-tables.mjs\``).toBe(
        tableText(results, table),
      )
    }
    // Every measured row is in a table, and every module's figures are there.
    const shown = [...blocks.values()].map((b) => b.text).join('\n')
    for (const row of results.rows) expect(shown, `bench row "${row.name}"`).toContain(row.group ?? row.name)
  })
})
