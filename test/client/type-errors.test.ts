/**
 * What the compiler tells a user who leaves a required field out: the field they left out, not
 * another member of the identity union (a `track()` without `event` once read "Property
 * 'anonymousId' is missing"). Compiled with the TypeScript API against the sources.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = new URL('../..', import.meta.url).pathname
mkdirSync(join(ROOT, '.tmp'), { recursive: true })
const dir = mkdtempSync(join(ROOT, '.tmp', 'type-errors-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const SNIPPETS = {
  track: "client.track({ userId: 'u' })",
  trackAnonymous: "client.track({ anonymousId: 'a' })",
  group: "client.group({ userId: 'u' })",
  noIdentity: "client.track({ event: 'E' })",
  maybeUserId: "declare const maybe: string | undefined\nclient.track({ event: 'E', userId: maybe, anonymousId: 'a' })",
}

/** The compiler's messages (whole chains) for each snippet, all compiled in one program. */
function compile(): Record<keyof typeof SNIPPETS, string[]> {
  const files = Object.entries(SNIPPETS).map(([name, body]) => {
    const file = join(dir, `${name}.ts`)
    writeFileSync(file, `import { Client } from '../../src/index.js'\nconst client = new Client('key')\n${body}\nexport {}\n`)
    return [name, file] as const
  })
  const program = ts.createProgram(files.map(([, file]) => file), {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: ['node'], skipLibCheck: true,
  })
  const all = ts.getPreEmitDiagnostics(program)
  return Object.fromEntries(files.map(([name, file]) => [name, all.filter((d) => d.file?.fileName === file).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))])) as Record<keyof typeof SNIPPETS, string[]>
}

let messages: Record<keyof typeof SNIPPETS, string[]>
beforeAll(() => {
  messages = compile()
}, 120_000)

describe('type errors name the field that is missing', () => {
  it.each([
    ['track', 'event'],
    ['trackAnonymous', 'event'],
    ['group', 'groupId'],
  ] as const)('%s', (name, field) => {
    expect(messages[name]).toHaveLength(1)
    expect(messages[name][0]).toContain(`Property '${field}' is missing`)
  })

  it('a call with neither userId nor anonymousId compiles (option identity fills them in; a server throws at the call), as does a maybe-undefined userId', () => {
    expect(messages.noIdentity).toEqual([])
    expect(messages.maybeUserId).toEqual([])
  })
})
