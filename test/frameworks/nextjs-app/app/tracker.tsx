'use client'

import { useEffect, useState } from 'react'
import { Client } from 'isomorphic-analytics'
import { subscribe } from './actions'

export function Tracker() {
  const [subscribed, setSubscribed] = useState('')
  useEffect(() => {
    // The README's browser example, unchanged, in an effect: a client component is also
    // rendered on the server, where there is no localStorage or document.
    const analytics = new Client('YOUR_WRITE_KEY', { endpoint: 'https://collector.example.com' })
    const anonymousId = (localStorage.anonymousId ??= crypto.randomUUID())
    analytics.page({ anonymousId, name: document.title })
    analytics.track({ anonymousId, event: 'Signed Up', properties: { plan: 'pro' } })
    // A page() given nothing more: the client fills it from the document.
    analytics.page({ anonymousId })
  }, [])
  return (
    <>
      <button onClick={async () => setSubscribed(await subscribe('ada@example.com'))}>Subscribe</button>
      <output>{subscribed}</output>
    </>
  )
}
