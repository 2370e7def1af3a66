/**
 * The collector's console (`GET /console`): sign in with the admin token, then each source's
 * Webhooks settings, the live view of messages and their deliveries, the deliveries chart, and
 * audience syncs and deletion requests. Plain DOM, no framework: the whole console is a few
 * kilobytes and has no dependency to audit or keep up to date. A 401 to any call once signed in
 * (the collector restarted with another admin token) stops every request and signs the page out.
 */
import { actionsView } from './actions.js'
import { api, ApiFailure, setToken, whenRefused, type SourcesAnswer } from './api.js'
import { activityChart } from './chart.js'
import { h, replace } from './dom.js'
import { whileBusy } from './guard.js'
import { healthView } from './health.js'
import { liveView } from './live.js'
import { replayView } from './replay.js'
import { sourcePanel } from './sources.js'

const root = document.getElementById('console')!

/** The sign-in form; `notice`: why the page was signed out. */
function signIn(notice = ''): void {
  const token = h('input', { type: 'password', id: 'token', autocomplete: 'current-password', required: true })
  const error = h('p', { role: 'alert', class: 'field-error' }, notice)
  const button = h('button', { type: 'submit' }, 'Sign in')
  const form = h('form', { 'aria-label': 'Sign in', class: 'sign-in' },
    h('h2', {}, 'Sign in'),
    h('label', { for: 'token' }, 'Admin token'), token,
    button,
    error,
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void whileBusy(button, () => {
      setToken(token.value)
      return signingIn(token, error)
    })
  })
  replace(root, form)
  token.focus()
}

/** Signs in with the token typed; a refusal is said next to it. */
function signingIn(token: HTMLInputElement, error: HTMLElement): Promise<void> {
  return api<SourcesAnswer>('v1/admin/sources').then(
    (answer) => show(answer),
    (failure: unknown) => {
      setToken('')
      error.textContent = failure instanceof ApiFailure && failure.problem.status === 401
        ? 'Wrong admin token.'
        : (failure as Error).message
      token.setAttribute('aria-invalid', 'true')
      token.focus()
    },
  )
}

/** The signed-in page; focus starts on its first heading, so a keyboard user begins at the top. */
function show(answer: SourcesAnswer): void {
  const live = liveView()
  const chart = activityChart()
  const health = healthView()
  // Signing out (or being signed out) forgets the token: it is only ever held in memory.
  const stop = () => {
    whenRefused(undefined)
    live.stop()
    chart.stop()
    health.stop()
    setToken('')
  }
  const heading = h('h2', { id: 'sources-heading', tabindex: -1 }, 'Sources and the Webhooks destination')
  replace(root,
    h('nav', { 'aria-label': 'Console', class: 'bar' },
      h('button', { type: 'button', onclick: () => (stop(), signIn('Signed out.')) }, 'Sign out')),
    health.element,
    h('section', { 'aria-labelledby': 'sources-heading' },
      heading,
      // Right after the heading focus starts on: one Tab, then Enter, passes every form.
      h('a', { href: '#messages', class: 'skip' }, 'Skip to messages'),
      ...answer.sources.map((source, index) => sourcePanel(source, index, answer.settings))),
    chart.element,
    live.element,
    actionsView(answer.sources, live.show),
    replayView(answer.sources),
  )
  whenRefused(() => {
    stop()
    signIn('Signed out: the collector no longer accepts this admin token (restarted with another one?). Sign in again.')
  })
  live.start()
  chart.start()
  health.start()
  heading.focus()
}

signIn()
