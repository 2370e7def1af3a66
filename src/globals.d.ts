/** Replaced at build time (tsup `define`, vitest `define`) with the package version. */
declare const __VERSION__: string
