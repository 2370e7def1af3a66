/** A view read again every 5 s while shown: `start` reads it at once, then on the interval; `stop` ends that. */
export function polled(element: HTMLElement, refresh: () => Promise<void>): { element: HTMLElement; start(): void; stop(): void } {
  let timer: ReturnType<typeof setInterval> | undefined
  return {
    element,
    start() {
      void refresh()
      timer = setInterval(() => void refresh(), 5000)
    },
    stop() {
      clearInterval(timer)
    },
  }
}
