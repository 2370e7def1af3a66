/** `--disable-after TIME`: a duration with a unit (or ms alone) into the collector's `disableAfter`. */
import { describe, expect, it } from 'vitest'
import { parseCommand } from '../../src/cli/args.js'
import { UsageError } from '../../src/cli/usage-error.js'

const config = (...flags: string[]) => {
  const command = parseCommand(['collect', '--write-key', 'KEY', ...flags])
  if (command.kind !== 'collect') throw new Error(`not collect: ${command.kind}`)
  return command.args.config
}

describe('--disable-after', () => {
  it.each([['24h', 86_400_000], ['30m', 1_800_000], ['90s', 90_000], ['1500ms', 1_500], ['7d', 604_800_000], ['0', 0], ['2500', 2_500]])('%s is %i ms', (text, ms) => {
    expect(config('--disable-after', text).disableAfter).toBe(ms)
  })

  it('absent: the collector\'s default (not set here)', () => {
    expect('disableAfter' in config()).toBe(false)
  })

  it.each(['1.5h', 'soon', '', '24 hours', '400d'])('refuses %j, naming the flag and the forms', (text) => {
    expect(() => config('--disable-after', text)).toThrow(UsageError)
    expect(() => config('--disable-after', text)).toThrow(`--disable-after expects a duration such as 24h, 30m, 90s or 86400000 (ms), at most 365 days, got "${text}".`)
  })
})
