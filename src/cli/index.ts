#!/usr/bin/env node
/**
 * The `isomorphic-analytics` command. Exit codes: 0 success (including a clean stop on
 * SIGINT/SIGTERM), 1 runtime failure (port in use, …), 2 bad arguments or configuration.
 */
import { isConfigError } from '../errors.js'
import { HELP, parseCommand } from './args.js'
import { collect, type CollectIo } from './collect.js'
import { UsageError } from './usage-error.js'

function stopSignal(onAgain: (signal: string) => void): Promise<string> {
  return new Promise((resolve) => {
    let stopping = false
    const handler = (signal: NodeJS.Signals) => {
      if (stopping) {
        onAgain(signal)
        process.exit(1)
      }
      stopping = true
      resolve(signal)
    }
    process.on('SIGINT', handler)
    process.on('SIGTERM', handler)
  })
}

export async function main(argv: readonly string[]): Promise<number> {
  const out = (text: string) => void process.stdout.write(text)
  const err = (text: string) => void process.stderr.write(text)
  try {
    const command = parseCommand(argv, { ANALYTICS_QUEUE_URL: process.env.ANALYTICS_QUEUE_URL })
    if (command.kind === 'help') return out(HELP), 0
    if (command.kind === 'version') return out(`${__VERSION__}\n`), 0
    const io: CollectIo = { out, err, isTTY: process.stdout.isTTY === true, debug: process.env.DEBUG, stopSignal }
    return await collect(command.args, io)
  } catch (error) {
    if (error instanceof UsageError || isConfigError(error)) {
      err(`isomorphic-analytics: ${(error as Error).message}\nRun "isomorphic-analytics collect --help" for usage.\n`)
      return 2
    }
    err(`isomorphic-analytics: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    return 1
  }
}

// Exit once done: an idle keep-alive socket of the webhook fetch must not hold the process open.
// stdout and stderr writes to files, pipes and terminals are synchronous on POSIX, so none is lost.
void main(process.argv.slice(2)).then((code) => process.exit(code))
