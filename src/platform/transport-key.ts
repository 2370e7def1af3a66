/**
 * A fetch may carry the transport it is built on under this key (`nodeFetch` carries
 * `nodeRequest`): the webhook attempt then calls that directly and skips building a WHATWG
 * `Response` it would only read the status, headers and text of. A module of its own so that
 * ./node-http.ts imports nothing else: the collector build makes it an entry apart (tsup.config.ts).
 */
export const TRANSPORT_OF_FETCH: unique symbol = Symbol.for('isomorphic-analytics.transport')
