import { describe, expect, it } from 'vitest'
import { HELP } from '../../src/cli/args.js'
import { COLLECTOR_DEFAULTS } from '../../src/collector/config.js'
import { readDoc } from '../helpers/docs.js'

const collectorPage = readDoc('docs/collector.md')
const cliPage = readDoc('docs/cli.md')

function tableRows(heading: string): Map<string, string[]> {
  const section = collectorPage.split(heading)[1].split('\n\n').find((block) => block.startsWith('|'))!
  const rows = new Map<string, string[]>()
  for (const line of section.split('\n').slice(2)) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim())
    rows.set(cells[0].replace(/`/g, ''), cells.slice(1))
  }
  return rows
}

describe('docs: collector and CLI', () => {
  it('documents every numeric default as the resolver applies it', () => {
    const rows = tableRows('## Configuration')
    for (const [option, value] of Object.entries(COLLECTOR_DEFAULTS)) {
      if (typeof value !== 'number') continue
      expect(rows.get(option)?.[0], option).toBe(`\`${value}\``)
    }
  })

  it('documents every CLI flag of --help', () => {
    const flags = new Set([...HELP.matchAll(/^\s+(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]))
    flags.delete('--help')
    flags.delete('--version')
    expect(flags.size).toBeGreaterThan(8)
    for (const flag of flags) expect(cliPage, flag).toContain(`\`${flag}`)
  })
})
