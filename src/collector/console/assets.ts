/**
 * The console's built assets (each gzipped, in base64; scripts/console-assets.mjs), in a module of
 * their own. The collector imports it only when a console asset is asked for, so a bundle of the
 * collector (a worker serving it) keeps these 8 KB out of its main chunk; the build emits it as
 * `dist/console-assets.js` (tsup.config.ts).
 */
import assets from 'virtual:console-assets'

export default assets
