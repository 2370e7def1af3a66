/**
 * What `#node-http` resolves to under the `browser` condition (package.json `imports`): no Node
 * transport, so a browser bundle holds neither `node:` imports nor the code that would use them.
 * `platformTransport` then uses fetch (it never asks for this module outside Node anyway).
 */
export const nodeRequest = undefined
