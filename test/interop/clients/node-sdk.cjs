/**
 * Sends the interop messages with one vendor Node SDK, by its documented API, then flushes and
 * exits: `node --harmony-json-parse-with-source node-sdk.cjs <sdk> <collector url> <write key>`.
 * The flag gives Node 20 `JSON.rawJSON` (Node ≥ 21 has it without one), which is how a JS app
 * sends an int64: a `bigint` whose `toJSON` returns its digits as raw JSON.
 */
'use strict'
const [sdk, url, writeKey] = process.argv.slice(2)

BigInt.prototype.toJSON = function () {
  return JSON.rawJSON(this.toString())
}

const COUNT = 5
const properties = (n) => ({ n, plan: 'pro', price: 19.99, tweetId: 9223372036854775807n, nested: { list: [1, 'two', null, true], empty: {} } })

const clients = {
  async '@segment/analytics-node'() {
    const { Analytics } = require('@segment/analytics-node')
    const analytics = new Analytics({ writeKey, host: url, maxEventsInBatch: 3, flushInterval: 100, maxRetries: 3 })
    analytics.on('error', (error) => console.error('sdk error', error))
    for (let n = 0; n < COUNT; n++) analytics.track({ userId: 'interop-user', event: 'Interop Event', properties: properties(n), messageId: `seg-node-${n}` })
    analytics.identify({ userId: 'interop-user', traits: { n: COUNT, plan: 'pro' }, messageId: `seg-node-${COUNT}` })
    await analytics.closeAndFlush({ timeout: 10_000 })
  },
  async 'analytics-node'() {
    const Analytics = require('analytics-node')
    const analytics = new Analytics(writeKey, { host: url, flushAt: 3, flushInterval: 100, retryCount: 3, errorHandler: (error) => console.error('sdk error', error) })
    for (let n = 0; n < COUNT; n++) analytics.track({ userId: 'interop-user', event: 'Interop Event', properties: properties(n), messageId: `ajs-node-${n}` })
    analytics.identify({ userId: 'interop-user', traits: { n: COUNT, plan: 'pro' }, messageId: `ajs-node-${COUNT}` })
    await analytics.flush()
  },
  async '@rudderstack/rudder-sdk-node'() {
    const Analytics = require('@rudderstack/rudder-sdk-node')
    // Defaults (gzip on), except quicker flushing for the test.
    const client = new Analytics(writeKey, { dataPlaneUrl: url, flushAt: 3, flushInterval: 100, errorHandler: (error) => console.error('sdk error', error) })
    for (let n = 0; n < COUNT; n++) client.track({ userId: 'interop-user', event: 'Interop Event', properties: properties(n), messageId: `rs-node-${n}` })
    client.identify({ userId: 'interop-user', traits: { n: COUNT, plan: 'pro' }, messageId: `rs-node-${COUNT}` })
    await client.flush()
    await client.flush()
  },
}

clients[sdk]().then(
  () => console.log('done'),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
