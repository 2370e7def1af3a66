/** Replaced at build time (tsup `define`, vitest `define`) with the package version. */
declare const __VERSION__: string

/** The console's built assets (src/console/), embedded by the build: see scripts/console-assets.mjs. */
declare module 'virtual:console-assets' {
  /** Each asset's text, gzipped, in base64. */
  const assets: { js: string; css: string }
  export default assets
}
