'use client'

import { useState } from 'react'
import { Client } from 'isomorphic-analytics'
import { subscribe } from './actions'

// The README's browser example, unchanged, at module level. A client component is also rendered
// on the server (prerendering), where there is no page: there this client sends nothing (option
// `identity` needs a page), and the browser sends when it runs this module.
const analytics = new Client('YOUR_WRITE_KEY', {
  endpoint: 'https://collector.example.com',
  identity: { storage: 'localStorage' },
})
analytics.page()
analytics.track({ event: 'Signed Up', properties: { plan: 'pro' } })

export function Tracker() {
  const [subscribed, setSubscribed] = useState('')
  const onSubscribe = async () => {
    // The visitor named: this and later calls carry their userId beside the kept anonymousId.
    analytics.identify({ userId: 'ada@example.com', traits: { newsletter: true } })
    setSubscribed(await subscribe('ada@example.com'))
  }
  return (
    <>
      <button onClick={onSubscribe}>Subscribe</button>
      <output>{subscribed}</output>
    </>
  )
}
