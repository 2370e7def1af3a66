import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
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
})
