/**
 * The preload (`node --import ./redirect.mjs`) of the tests that run the README's code as pasted.
 * It sends every request for a host other than 127.0.0.1 (or for port 8700) to the loopback
 * recorder at `DOCS_RECORDER` (`https://host/path` becomes `${DOCS_RECORDER}/host/path`), at both
 * layers the code's requests go through: global `fetch`, and `node:http`/`node:https` (the
 * client's default transport on Node, which looks `request` up on the module at call time). A
 * redirected `https:` request goes out as plain `http:` to the recorder, without its agent.
 */
export const REDIRECT = `import http from 'node:http'
import https from 'node:https'
import { syncBuiltinESMExports } from 'node:module'
const recorder = process.env.DOCS_RECORDER
const elsewhere = (url) => url.hostname !== '127.0.0.1' || url.port === '8700'
const redirected = (url) => new URL(recorder + '/' + url.host + url.pathname + url.search)

const original = globalThis.fetch
globalThis.fetch = (input, init) => {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url)
  if (elsewhere(url)) input = redirected(url).href
  return original(input, init)
}

// request(url[, options][, callback]) or request(options[, callback]), as node:http takes them.
const httpRequest = http.request
for (const [mod, protocol] of [[http, 'http:'], [https, 'https:']]) {
  const request = mod.request
  mod.request = (...args) => {
    const hasUrl = typeof args[0] === 'string' || args[0] instanceof URL
    const options = hasUrl ? (typeof args[1] === 'object' && args[1] !== null ? args[1] : {}) : (args[0] ?? {})
    const callback = args.find((a) => typeof a === 'function')
    const url = hasUrl
      ? new URL(args[0])
      : new URL((options.protocol ?? protocol) + '//' + (options.hostname ?? options.host ?? 'localhost') + (options.port ? ':' + options.port : '') + (options.path ?? '/'))
    if (!elsewhere(url)) return request.apply(mod, args)
    const { agent, host, hostname, port, path, protocol: given, ...rest } = options
    return httpRequest.call(http, redirected(url), rest, callback)
  }
  mod.get = (...args) => {
    const req = mod.request(...args)
    req.end()
    return req
  }
}
syncBuiltinESMExports()
`
