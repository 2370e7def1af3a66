/** Replaced at build time (tsup `define`, vitest `define`) with the package version. */
declare const __VERSION__: string

/**
 * `true` in the package's browser build (`dist/index.browser.js`, the `<script>` file), where the
 * server runtimes' paths compile away; not defined anywhere else. Read it as `typeof __BROWSER__ === 'boolean' && __BROWSER__`, which every
 * bundler folds (see src/platform/runtime.ts).
 */
declare const __BROWSER__: boolean | undefined

/** The console's built assets (src/console/), embedded by the build: see scripts/console-assets.mjs. */
declare module 'virtual:console-assets' {
  /** Each asset's text, gzipped, in base64. */
  const assets: { js: string; css: string }
  export default assets
}
