export const CONSOLE_MODULE: string
export function buildConsoleAssets(): Promise<{ js: string; css: string }>
export const consoleAssetsEsbuild: import('esbuild').Plugin
export const consoleAssetsVite: import('vite').Plugin
