/**
 * One source's Webhooks settings: up to five URLs with static headers (values, and a URL's
 * credentials, shown masked: a line or a URL left as it is keeps its value, a new value replaces
 * it), the shared secret (shown masked; replace or remove it) and the on/off toggle. The collector validates (the config's own
 * rules and messages); an error is shown next to the field it names and nothing changes. A save
 * carries the version the panel shows (`If-Match`): settings changed elsewhere meanwhile are not
 * overwritten (409); the panel says so and shows them as they are now.
 */
import { api, ApiFailure, type SourceView, type SourcesAnswer, type UrlSetting } from './api.js'
import { h, replace, uid } from './dom.js'
import { whileBusy } from './guard.js'
import { speak } from './labels.js'
import { differences } from './conflict.js'

interface UrlRow {
  url: HTMLInputElement
  headers: HTMLTextAreaElement
  urlError: HTMLElement
  headersError: HTMLElement
}

function headerText(headers: Record<string, string> | undefined): string {
  return Object.entries(headers ?? {}).map(([name, value]) => `${name}: ${value}`).join('\n')
}

/**
 * `Name: value` lines → headers; a line without a colon is an error naming the line. A name given
 * twice (in any case) cannot be sent as an object: refused here with the collector's own message
 * (`option`: the field's path, `sources[0].webhooks.urls[1].headers`).
 */
function parseHeaders(text: string, option: string): Record<string, string> {
  const headers: Record<string, string> = {}
  const seen = new Set<string>()
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return
    const colon = line.indexOf(':')
    if (colon <= 0) throw new Error(`Expected \`Name: value\` on line ${i + 1}, got "${line}".`)
    const name = line.slice(0, colon).trim()
    if (seen.has(name.toLowerCase())) throw new Error(`Header \`${name}\` appears twice in \`${option}\` (names are case-insensitive).`)
    seen.add(name.toLowerCase())
    headers[name] = line.slice(colon + 1).trim()
  })
  return headers
}

/** Said after a 409. */
const NOT_SAVED = 'These settings were changed elsewhere (in another tab, by another admin or through another collector process) since this page read them, so your change was not saved.'

function fieldError(): HTMLElement {
  return h('p', { class: 'field-error', id: uid('err'), hidden: true })
}

function showError(target: HTMLInputElement | HTMLTextAreaElement | HTMLElement, error: HTMLElement, message: string): void {
  error.textContent = speak(message)
  error.hidden = false
  target.setAttribute('aria-invalid', 'true')
  target.setAttribute('aria-describedby', error.id)
}

/** `index`: the source's place in the config (`sources[index]` in the collector's messages). */
export function sourcePanel(source: SourceView, index: number, settings: SourcesAnswer['settings']): HTMLElement {
  const path = `v1/admin/sources/${encodeURIComponent(source.name)}/webhooks`
  let version = source.version
  let rows: UrlRow[] = []
  const list = h('div', { class: 'urls' })
  const listError = fieldError()
  const enabled = h('input', { type: 'checkbox', id: uid('enabled') })
  const secretShown = h('span', {})
  const secretHelp = uid('secret-help')
  const secretInput = h('input', { type: 'password', id: uid('secret'), autocomplete: 'off' })
  const removeSecret = h('input', { type: 'checkbox', id: uid('nosecret') })
  const secretError = fieldError()
  const formError = fieldError()
  // What concerns the whole form (a 409 among them) is announced.
  formError.setAttribute('role', 'alert')
  const status = h('p', { role: 'status', class: 'status' })

  function renderRows(): void {
    replace(list, ...rows.map((row, i) => h('fieldset', { class: 'url' },
      h('legend', {}, `URL ${i + 1}`),
      h('label', { for: row.url.id }, `URL ${i + 1}`), row.url, row.urlError,
      h('label', { for: row.headers.id }, `Headers for URL ${i + 1}`), row.headers, row.headersError,
      h('button', { type: 'button', onclick: () => removeRow(i) }, `Remove URL ${i + 1}`),
    )))
  }

  /** Removes URL `i + 1`; focus goes to the URL field before it, or to "Add URL" when none is. */
  function removeRow(i: number): void {
    rows.splice(i, 1)
    renderRows()
    ;(rows[i - 1]?.url ?? addButton).focus()
  }

  function addRow(setting: UrlSetting = { url: '' }): void {
    const url = h('input', { type: 'url', id: uid('url'), placeholder: 'https://example.com/hook' })
    url.value = setting.url
    const headers = h('textarea', { id: uid('headers'), rows: 2, placeholder: 'X-Name: value' })
    headers.value = headerText(setting.headers)
    rows.push({ url, headers, urlError: fieldError(), headersError: fieldError() })
  }

  /** Shows `view` (the settings as the collector has them now), dropping what was typed. */
  function fill(view: SourceView): void {
    version = view.version
    enabled.checked = view.webhooks.enabled
    secretShown.textContent = view.webhooks.sharedSecret ?? 'not set'
    secretInput.value = ''
    removeSecret.checked = false
    rows = []
    for (const setting of view.webhooks.urls) addRow(setting)
    renderRows()
  }

  /** After a 409: what was typed stays; the page lists how it differs from what is saved now. */
  const conflict = h('ul', { class: 'conflict', 'aria-label': 'Yours and saved', hidden: true })
  const useSaved = h('button', { type: 'button', hidden: true, onclick: () => void whileBusy(useSaved, async () => {
    fill((await api<{ source: SourceView }>(path)).source)
    conflict.hidden = useSaved.hidden = true
    clearErrors(form)
  }) }, 'Use the saved settings')

  async function reload(): Promise<void> {
    try {
      const saved = (await api<{ source: SourceView }>(path)).source
      const typed = {
        enabled: enabled.checked,
        urls: rows.map((row) => ({ url: row.url.value, headers: row.headers.value })),
        secret: secretInput.value !== '' ? 'typed' as const : removeSecret.checked ? 'removed' as const : 'kept' as const,
      }
      // Saving again now replaces what was saved meanwhile: deliberately, with the difference shown.
      version = saved.version
      secretShown.textContent = saved.webhooks.sharedSecret ?? 'not set'
      const listed = differences(typed, saved.webhooks, headerText)
      replace(conflict, ...listed.map((line) => h('li', {}, line)))
      conflict.hidden = useSaved.hidden = false
      place(undefined, `${NOT_SAVED} What you typed is kept${listed.length > 0 ? '; it differs from what is saved now as listed below' : ''}. Save again to replace the saved settings with yours, or use the saved settings.`)
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error
      place(undefined, `${NOT_SAVED} Reading them again failed (${error.problem.message}): reload the page.`)
    }
  }

  function clearErrors(form: HTMLElement): void {
    for (const error of form.querySelectorAll<HTMLElement>('.field-error')) error.hidden = true
    for (const field of form.querySelectorAll('[aria-invalid]')) {
      field.removeAttribute('aria-invalid')
      field.removeAttribute('aria-describedby')
    }
  }

  /** Places a collector error next to the field its path names (`sources[0].webhooks.urls[1].url`). */
  function place(field: string | undefined, message: string): void {
    const at = (field ?? '').replace(/^sources\[\d+\]\.webhooks\.?/, '')
    const url = /^urls\[(\d+)\](?:\.(url|headers))?/.exec(at)
    const row = url ? rows[Number(url[1])] : undefined
    if (row && url?.[2] === 'headers') showError(row.headers, row.headersError, message)
    else if (row) showError(row.url, row.urlError, message)
    else if (at.startsWith('urls')) showError(list, listError, message)
    else if (at === 'sharedSecret') showError(secretInput, secretError, message)
    else showError(form, formError, message)
  }

  async function save(): Promise<void> {
    clearErrors(form)
    status.textContent = ''
    conflict.hidden = useSaved.hidden = true
    const urls: UrlSetting[] = []
    for (const [i, row] of rows.entries()) {
      try {
        const headers = parseHeaders(row.headers.value, `sources[${index}].webhooks.urls[${i}].headers`)
        urls.push(Object.keys(headers).length > 0 ? { url: row.url.value.trim(), headers } : { url: row.url.value.trim() })
      } catch (error) {
        place(`urls[${i}].headers`, (error as Error).message)
        return
      }
    }
    const saving = [...rows]
    const sent = saving.map((row) => [row.url.value, row.headers.value])
    const body: Record<string, unknown> = { enabled: enabled.checked, urls }
    if (removeSecret.checked) body.sharedSecret = null
    else if (secretInput.value !== '') body.sharedSecret = secretInput.value
    try {
      const answer = await api<{ source: SourceView; persisted: boolean }>(path, { method: 'PUT', body, headers: { 'if-match': `"${version}"` } })
      version = answer.source.version
      secretInput.value = ''
      removeSecret.checked = false
      secretShown.textContent = answer.source.webhooks.sharedSecret ?? 'not set'
      // Values and URLs typed are shown masked from now on, like the others (a field edited meanwhile stays as it is).
      answer.source.webhooks.urls.forEach((setting, i) => {
        const row = saving[i]
        if (row?.url.value === sent[i][0]) row.url.value = setting.url
        if (row?.headers.value === sent[i][1]) row.headers.value = headerText(setting.headers)
      })
      status.textContent = answer.persisted ? 'Saved.' : 'Saved (in memory only: lost on restart).'
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error
      if (error.problem.status === 409) await reload()
      else place(error.problem.field, error.problem.message)
    }
  }

  const addButton = h('button', { type: 'button', onclick: () => (addRow(), renderRows()) }, 'Add URL')
  // `novalidate`: the collector's rules speak (a URL without a scheme gets the config's message
  // next to the field), not the browser's own check of `type=url`.
  const saveButton = h('button', { type: 'submit' }, 'Save settings')
  const form: HTMLFormElement = h('form', { class: 'settings', novalidate: true, onsubmit: (event: Event) => (event.preventDefault(), void whileBusy(saveButton, () => save())) },
    h('p', { class: 'toggle' }, enabled, h('label', { for: enabled.id }, 'Forward to webhooks')),
    h('p', { class: 'muted' }, 'Header values and the credentials in URLs (?token=…, or a webhook token in the path) are shown masked: leave one as it is to keep it, or type a new value.'),
    list, listError,
    addButton,
    h('p', {}, 'Shared secret: ', secretShown),
    h('label', { for: secretInput.id }, 'New shared secret'), secretInput, secretError,
    h('p', { class: 'muted', id: secretHelp }, 'With a shared secret, every delivery carries X-Signature: the hex HMAC-SHA1 of the raw request body, keyed with the secret. A receiver verifies it with verifySignature from isomorphic-analytics/webhooks (on the raw body, before parsing it).'),
    h('p', { class: 'toggle' }, removeSecret, h('label', { for: removeSecret.id }, 'Remove shared secret')),
    formError,
    conflict,
    useSaved,
    saveButton,
    status,
  )
  fill(source)
  const headingId = uid('source')
  return h('section', { class: 'source', 'aria-labelledby': headingId },
    h('h3', { id: headingId }, `Source ${source.name}`),
    h('p', { class: 'muted' }, `Write key ${source.writeKey}`),
    settings.notice ? h('p', { class: 'notice' }, settings.notice) : null,
    form,
  )
}
