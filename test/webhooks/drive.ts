/** Runs a delivery to its end under fake timers: each scheduled retry's delay is advanced. */
import { vi } from 'vitest'
import type { DeliveryResult, WebhookDestination, WebhookDestinationEvents } from '../../src/webhooks/index.js'

export const FAKE_TIMERS = { toFake: ['setTimeout', 'clearTimeout', 'Date'] } as const

export function useFakeTimers(): void {
  vi.useFakeTimers({ toFake: [...FAKE_TIMERS.toFake] })
}

/** Resolves with the next `event` the destination emits. */
export function next<K extends keyof WebhookDestinationEvents>(
  destination: WebhookDestination,
  event: K,
): Promise<WebhookDestinationEvents[K]> {
  return new Promise((resolve) => {
    const listener = (info: WebhookDestinationEvents[K]) => {
      destination.off(event, listener)
      resolve(info)
    }
    destination.on(event, listener)
  })
}

/** Lets real I/O and promise callbacks run (setImmediate is not faked). */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export async function deliverToEnd(destination: WebhookDestination, payload: object): Promise<{ result: DeliveryResult; delays: number[] }> {
  const pending: number[] = []
  const delays: number[] = []
  let wake = () => {}
  const onRetry = ({ delayMs }: { delayMs: number }) => {
    pending.push(delayMs)
    delays.push(delayMs)
    wake()
  }
  destination.on('retry', onRetry)
  let done = false
  const promise = destination.deliver(payload)
  void promise.then(() => {
    done = true
    wake()
  })
  while (!done) {
    if (pending.length === 0) {
      await new Promise<void>((resolve) => (wake = resolve))
      continue
    }
    await vi.advanceTimersByTimeAsync(pending.shift()!)
  }
  destination.off('retry', onRetry)
  return { result: await promise, delays }
}
