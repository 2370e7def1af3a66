/**
 * The collector's `ConfigError`s name config paths (`sources[0].webhooks.urls[0].url`). For a
 * value that came from a flag, that path means nothing to the user: the message is reworded to
 * name the flag instead (`--webhook`), keeping the rest. Values from `--config` keep their paths.
 */
import type { ConfigError } from '../errors.js'

/** Config path → how a message names it, backticks included: `sources[1].writeKey` → `` `--write-key` ``. */
export type FlagNames = ReadonlyMap<string, string>

const ORDINALS = ['1st', '2nd', '3rd', '4th', '5th']

export interface SourceFlags {
  webhooks: readonly string[]
  headerNames: readonly string[]
  /** `undefined` when --name was not given (the name is then `default`). */
  name: string | undefined
}

/** The names of the paths set by the flags of the source built from them, at `sources[index]`. */
export function sourceFlagNames(index: number, { webhooks, headerNames, name }: SourceFlags): Array<[string, string]> {
  const at = `sources[${index}]`
  const names: Array<[string, string]> = [
    [`${at}.writeKey`, '`--write-key`'],
    [`${at}.name`, name === undefined ? '`--name` (not given: `default`)' : '`--name`'],
    [`${at}.webhooks.sharedSecret`, '`--shared-secret`'],
    [`${at}.webhooks.standardSecrets`, '`--standard-secret`'],
    [`${at}.webhooks.standardSecrets[0]`, '`--standard-secret`'],
    [`${at}.webhooks.standardSecrets[1]`, 'the second `--standard-secret`'],
  ]
  webhooks.forEach((_, i) => {
    const urls = `${at}.webhooks.urls[${i}]`
    names.push([`${urls}.url`, webhooks.length === 1 ? '`--webhook`' : `the ${ORDINALS[i] ?? `#${i + 1}`} \`--webhook\``])
    names.push([`${urls}.headers`, '`--header`'])
    for (const header of headerNames) names.push([`${urls}.headers[${JSON.stringify(header)}]`, `the value of \`--header ${header}\``])
  })
  return names
}

/**
 * `error`'s message with each config path set by a flag replaced by the flag's name. The
 * destination's own names are relative to the source's `webhooks` (`urls[0].headers["X"]`), and
 * its message then comes prefixed with the full path (`sources[0].webhooks.urls[0].headers: …`):
 * those names are resolved under that source, and the prefix dropped once a flag is named.
 */
export function nameFlags(error: ConfigError, flags: FlagNames): string {
  const scope = /^sources\[\d+\]\.webhooks\./.exec(error.option)?.[0] ?? ''
  let named = false
  const message = error.message.replace(/`([^`]*)`/g, (quoted, path: string) => {
    const flag = flags.get(path) ?? (scope === '' ? undefined : flags.get(scope + path))
    if (flag === undefined) return quoted
    named = true
    return flag
  })
  const prefix = `${error.option}: `
  // Once a flag is named, the prefix only repeats the path it replaced.
  return named && message.startsWith(prefix) ? message.slice(prefix.length) : message
}
