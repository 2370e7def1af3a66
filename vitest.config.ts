import { readFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'
import { consoleAssetsVite } from './scripts/console-assets.mjs'

const { version } = JSON.parse(readFileSync('./package.json', 'utf8')) as { version: string }

export default defineConfig({
  plugins: [consoleAssetsVite],
  define: { __VERSION__: JSON.stringify(version) },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 20_000,
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
  },
})
