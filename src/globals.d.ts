/** Replaced at build time (tsup `define`, vitest `define`) with the package version. */
declare const __VERSION__: string

/** The console's built assets (src/console/), embedded by the build: see scripts/console-assets.mjs. */
declare module 'virtual:console-assets' {
  const assets: { js: string; css: string }
  export default assets
}
