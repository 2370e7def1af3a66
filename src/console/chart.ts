/**
 * Delivered / retrying / failed per minute for the last hour: a stacked bar per minute in SVG
 * (made with DOM calls, so the strict CSP needs no inline style) stretched to fill its box, a time
 * axis under it (HTML, so its text is not stretched), and the totals as text. With a queue server
 * the counts are every process's: each console hears every followed attempt, and the successes
 * past the follow bound are told as counts (collector/console/shared.ts).
 */
import { api, type ActivityAnswer } from './api.js'
import { h, replace, svg } from './dom.js'
import { polled } from './polled.js'

const SERIES = ['delivered', 'retrying', 'failed'] as const
const WIDTH = 600
const HEIGHT = 120

export function activityChart(): { element: HTMLElement; start(): void; stop(): void } {
  // `none`: the bars fill the box's width whatever its shape (the default kept the middle of it).
  const plot = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': 'Deliveries per minute, last hour', class: 'chart' })
  const axis = h('div', { class: 'axis', 'aria-label': 'Time axis' })
  const totals = h('p', { class: 'totals' })

  function draw(answer: ActivityAnswer): void {
    const minutes = answer.minutes
    const max = Math.max(1, ...minutes.map((m) => m.delivered + m.retrying + m.failed))
    const bar = WIDTH / Math.max(1, minutes.length)
    const bars = minutes.flatMap((minute, i) => {
      let y = HEIGHT
      return SERIES.map((series) => {
        const height = (minute[series] / max) * (HEIGHT - 4)
        y -= height
        return svg('rect', { x: i * bar + 1, y, width: Math.max(1, bar - 2), height, class: series },
          svg('title', {}, `${new Date(minute.at).toLocaleTimeString()}: ${minute[series]} ${series}`))
      })
    })
    replace(plot, ...bars)
    // The start of the first minute, then every quarter hour, the last at the current minute.
    const ticks = [0, 15, 30, 45, minutes.length - 1].filter((i) => i < minutes.length)
    replace(axis, ...ticks.map((i) => h('span', {}, new Date(minutes[i].at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }))))
    const sum = (series: (typeof SERIES)[number]) => minutes.reduce((n, m) => n + m[series], 0)
    replace(totals, ...SERIES.map((series) => h('span', { class: `key ${series}` }, `${sum(series)} ${series}`)))
  }

  async function refresh(): Promise<void> {
    try {
      draw(await api<ActivityAnswer>('v1/admin/activity'))
    } catch {
      // The live view reports the collector being unreachable; the chart keeps its last picture.
    }
  }

  const element = h('section', { 'aria-labelledby': 'activity-heading' },
    h('h2', { id: 'activity-heading' }, 'Deliveries per minute (last hour)'),
    plot,
    axis,
    totals,
  )
  return polled(element, refresh)
}
