/**
 * The browser SDKs as their users ship them: the npm package bundled by esbuild into one script
 * that puts the SDK's entry class on `window`, and an empty page to load it in.
 */
import { build } from 'esbuild'
import { ROOT } from '../../runtimes/support/runtimes.js'

async function bundle(entry: string, exportName: string, globalName: string): Promise<string> {
  const result = await build({
    stdin: { contents: `import { ${exportName} } from '${entry}'\nwindow.${globalName} = ${exportName}`, resolveDir: ROOT, sourcefile: `${globalName}.js` },
    bundle: true, format: 'iife', platform: 'browser', target: 'es2020', write: false, logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  return result.outputFiles[0].text
}

/** Generated files for `startPageServer(extra)`: `/<name>.html` loads `/<name>.js`. */
export async function sdkPages(): Promise<Record<string, string>> {
  const page = (name: string) => `<!doctype html><title>${name}</title><script src="/${name}.js"></script><script>document.title = 'ready'</script>`
  return {
    '/segment.js': await bundle('@segment/analytics-next', 'AnalyticsBrowser', 'SegmentAnalyticsBrowser'),
    '/segment.html': page('segment'),
    '/rudder.js': await bundle('@rudderstack/analytics-js/bundled', 'RudderAnalytics', 'RudderAnalytics'),
    '/rudder.html': page('rudder'),
  }
}
