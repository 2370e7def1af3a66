/**
 * parseArgs' errors in the CLI's words. Its messages are written for a program's author
 * (`Option '--port <value>' argument missing`, advice about `--` with an unbalanced quote); these
 * name the flag, say what to type, and guess a mistyped name.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { closest } from '../closest.js'

type Options = NonNullable<ParseArgsConfig['options']>

/** What parseArgs itself does not accept as a value without `=`: `-x`, `--x` (but `-` alone is a value). */
const optionLike = (value: string) => value.length > 1 && value.startsWith('-')

/**
 * The message for `error`, thrown by a strict parseArgs of `args`. Its `code` says what is wrong;
 * which flag, its message alone says, so the flag is found among the tokens of a lenient parse
 * (the first one with that problem: the strict parse stops at the first problem).
 * `valueNames` are the values' names in --help (`port` → `N`).
 */
export function describeArgvError(error: unknown, args: readonly string[], options: Options, valueNames: Record<string, string>): string {
  const code = (error as { code?: unknown }).code
  const { tokens } = parseArgs({ args: [...args], options, allowPositionals: true, strict: false, tokens: true })
  for (const token of tokens) {
    if (token.kind !== 'option') continue
    const option = options[token.name] as Options[string] | undefined
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option === undefined) {
      // Single-letter flags are -h and -v only: no guess for those.
      const guess = token.rawName.startsWith('--') ? closest(token.name, Object.keys(options)) : undefined
      return `Unknown option ${token.rawName}${guess === undefined ? '' : ` (did you mean --${guess}?)`}.`
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined) {
      const flag = `--${token.name}`
      const usage = `${flag} ${valueNames[token.name] ?? 'VALUE'}`
      if (option.type === 'boolean' && token.value !== undefined) return `${flag} takes no value.`
      if (option.type === 'string' && token.value === undefined) return `${flag} needs a value (${usage}).`
      if (option.type === 'string' && !token.inlineValue && optionLike(token.value!)) {
        // Not the value itself: it may be a secret.
        return `${flag} needs a value (${usage}); the argument after it starts with "-", so it is read as an option. If that is the value, write ${flag}=VALUE.`
      }
    }
  }
  // A code this does not know (a newer Node): its own message.
  return (error as Error).message
}
