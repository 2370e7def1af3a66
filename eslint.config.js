// Lint: one rule set that matters here — shared code stays isomorphic. `process`, `window`,
// `document`, `navigator`, `Deno`, `Bun` and `node:` modules are for src/platform/ only (and the
// Node-only collector server and CLI); everything else uses web-standard globals.
import tseslint from 'typescript-eslint'

const runtimeGlobals = ['process', 'window', 'document', 'navigator', 'localStorage', 'Deno', 'Bun', 'Buffer', 'require', 'global', '__dirname'].map(
  (name) => ({ name, message: `\`${name}\` is runtime-specific: probe it in src/platform/ and inject it.` }),
)

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.runtimes/**', '.tmp/**'] },
  {
    files: ['src/**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      'no-restricted-globals': ['error', ...runtimeGlobals],
      'no-restricted-imports': ['error', {
        patterns: [{ regex: '^node:', message: 'Node modules are for src/platform/, the collector server and the CLI only.' }],
        paths: ['fs', 'http', 'https', 'net', 'os', 'path', 'crypto', 'zlib', 'stream', 'buffer', 'url', 'util', 'events', 'child_process'].map(
          (name) => ({ name, message: 'Node modules are for src/platform/, the collector server and the CLI only.' }),
        ),
      }],
    },
  },
  {
    // The collector's console: browser code, served to the browser only (never imported by an entry).
    files: ['src/console/**/*.ts'],
    rules: { 'no-restricted-globals': 'off' },
  },
  {
    // (The queue's Node byte store, ./src/queue/, holds messages in `Buffer`s: chosen only with the
    // Node transport.)
    files: ['src/platform/**/*.ts', 'src/cli/**/*.ts', 'src/collector/server/**/*.ts', 'src/queue/byte-store.ts'],
    rules: { 'no-restricted-globals': 'off', 'no-restricted-imports': 'off' },
  },
)
