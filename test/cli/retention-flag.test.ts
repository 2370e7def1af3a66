/** `--retention`: a duration (24h, 30m, 90s, ms) turned into the collector's `retention` option; anything else exits 2 naming it. */
import { describe, expect, it } from 'vitest'
import { parseCommand } from '../../src/cli/args.js'
import { UsageError } from '../../src/cli/usage-error.js'
import { resolveConfig } from '../../src/collector/config.js'

const args = (...more: string[]) => ['collect', '--write-key', 'K', '--admin-token', 'admin-token-0123456789', ...more]
const retention = (argv: string[]) => {
  const command = parseCommand(argv)
  if (command.kind !== 'collect') throw new Error('not collect')
  return command.args.config.retention
}

describe('--retention', () => {
  it.each<[string, number]>([['24h', 86_400_000], ['30m', 1_800_000], ['90s', 90_000], ['2d', 172_800_000], ['1500', 1_500], ['250ms', 250], ['0', 0]])('%s is %i ms', (text, ms) => {
    expect(retention(args('--retention', text))).toBe(ms)
  })

  it('absent: the default applies (24 hours)', () => {
    expect(retention(args())).toBeUndefined()
    expect(resolveConfig({ sources: [{ writeKey: 'K', name: 'web' }] }).retention).toBe(86_400_000)
  })

  it.each(['1 week', '24H', '-1h', '1.5h', '', '400d'])('refuses %j, naming the flag', (text) => {
    expect(() => retention(args(`--retention=${text}`))).toThrow(UsageError)
    expect(() => retention(args(`--retention=${text}`))).toThrow(/^--retention expects a duration such as 24h, 30m, 90s or 86400000 \(ms\), at most 365 days, got ".*"\.$/)
  })

  it('the option refuses what is not an integer ≥ 0, naming it', () => {
    expect(() => resolveConfig({ sources: [{ writeKey: 'K', name: 'web' }], retention: -1 })).toThrow(/`retention`.*integer ≥ 0.*-1/)
    expect(() => resolveConfig({ sources: [{ writeKey: 'K', name: 'web' }], retention: '24h' as never })).toThrow(/`retention`/)
  })
})
