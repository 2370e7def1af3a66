import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { TABLES, tableText } from '../bench/readme.mjs'
import { readResults } from '../bench/results.mjs'
import { generatedBlocks } from '../scripts/readme-generated.mjs'
import { DEFAULTS } from '../src/client/options.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

/** Rows of the "### Options" table: option name → default cell. */
function optionsTable(): Map<string, string> {
  const section = readme.split('### Options')[1].split('\n\n')[1]
  const rows = new Map<string, string>()
  for (const line of section.split('\n').slice(2)) {
    const cells = line.split('|').map((c) => c.trim())
    rows.set(cells[1].replace(/`/g, ''), cells[3])
  }
  return rows
}

describe('README', () => {
  it('documents every default exactly as the resolver applies it', () => {
    const rows = optionsTable()
    for (const [option, value] of Object.entries(DEFAULTS)) {
      const cell = rows.get(option)
      expect(cell, `README has no row for \`${option}\``).toBeDefined()
      const shown = typeof value === 'string' ? `\`'${value}'\`` : `\`${value}\``
      expect(cell, `README default of \`${option}\``).toBe(shown)
    }
  })

  it('shows the two commands', () => {
    expect(readme).toContain('npm install && npm start')
    expect(readme).toContain('npm test')
  })

  it('the first screen shows the two commands and what `npm start` prints, before anything else', () => {
    const firstSection = readme.split('\n## ')[1]
    expect(firstSection.startsWith('The two commands\n')).toBe(true)
    expect(firstSection).toMatch(/```sh\nnpm install && npm start .*\nnpm test .*\n```/)
    expect(firstSection).toContain('```text\nisomorphic-analytics: the whole pipeline on loopback')
  })

  it('refers to no document a user does not have', () => {
    // The source documents the port was made from, and the project's own planning files, are
    // not in the repository or the package: the README must say what it means itself.
    expect(readme).not.toMatch(/\bseed\b|API\.md|STYLE\.md|BRIEF|\bissue #?\d/i)
    // Every repository path it names exists (dist/ once built, so only its sources are checked).
    const tracked = new Set(execFileSync('git', ['ls-files'], { cwd: new URL('..', import.meta.url), encoding: 'utf8' }).split('\n'))
    const paths = [...readme.matchAll(/`((?:examples|scripts|test|bench|src|\.ci)\/[^`\s]*)`/g)].map((m) => m[1])
    expect(paths.length).toBeGreaterThan(3)
    for (const path of paths) {
      const exists = path.endsWith('/') ? [...tracked].some((file) => file.startsWith(path)) : tracked.has(path)
      expect(exists, `README names \`${path}\`, which is not in the repository`).toBe(true)
    }
    // Every in-page link lands on a heading.
    const anchors = new Set([...readme.matchAll(/^#+ (.+)$/gm)].map((m) => m[1].toLowerCase().replace(/[^\p{L}\p{N} -]/gu, '').replace(/ /g, '-')))
    for (const [, anchor] of readme.matchAll(/\]\(#([^)]+)\)/g)) expect(anchors, `link to #${anchor}`).toContain(anchor)
  })

  it('the Performance tables are what bench/readme.mjs writes from bench/results.json (no figure typed by hand)', () => {
    const blocks = generatedBlocks(readme)
    const results = readResults()
    for (const table of TABLES) {
      expect(blocks.get(table.id)?.script, `README.md has no generated block "${table.id}"`).toBe('bench/readme.mjs')
      expect(blocks.get(table.id)?.text, `README.md's "${table.id}" table is not what bench/results.json gives: run \`node bench/readme.mjs\``).toBe(
        tableText(results, table),
      )
    }
    // Every measured row is in a table, and every module's figures are there.
    const shown = [...blocks.values()].map((b) => b.text).join('\n')
    for (const row of results.rows) expect(shown, `bench row "${row.name}"`).toContain(row.group ?? row.name)
  })
})
