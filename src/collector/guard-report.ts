/**
 * The application's `onError` as the collector and its server call it: it cannot throw into them.
 * It is called from BullMQ's and ioredis's event listeners, promise handlers and a request's
 * `catch`; one that threw there crashed the process (an uncaught exception from the emitter) or
 * turned a 500 answer into a rejected `collector.fetch`. What it throws is printed with the error
 * it was reporting, on the console's error stream as the default `onError` prints.
 */
export function guardReport(onError: (error: unknown) => void, who: 'collector' | 'server'): (error: unknown) => void {
  return (error) => {
    try {
      onError(error)
    } catch (thrown) {
      console.error(`isomorphic-analytics ${who}: onError threw`, thrown, '\nwhile reporting', error)
    }
  }
}
