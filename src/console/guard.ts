/**
 * Guards of the console's actions: a button disabled while its request runs (a double click, or
 * Enter pressed again, sends once), and a confirmation that names what an action that removes or
 * deletes will do before it is sent.
 */
import { h, uid } from './dom.js'

/**
 * Runs `run` with `button` disabled meanwhile, and does nothing when it already is. Disabled with
 * `aria-disabled` (announced, and refused here) rather than `disabled`, which would take keyboard
 * focus off the button until the request ends.
 */
export async function whileBusy(button: HTMLButtonElement, run: () => Promise<void>): Promise<void> {
  if (button.getAttribute('aria-disabled') === 'true') return
  button.setAttribute('aria-disabled', 'true')
  try {
    await run()
  } finally {
    button.removeAttribute('aria-disabled')
  }
}

/**
 * Asks, in a modal dialog, whether to go ahead: `message` says what will happen, `yes` names the
 * action on its button. Resolves `true` only if that button is pressed (Escape or "Cancel": `false`).
 * Focus starts on "Cancel", and returns where it was once the dialog closes.
 */
export function confirmed(message: string, yes: string): Promise<boolean> {
  const textId = uid('confirm')
  const cancel = h('button', { type: 'button', autofocus: true }, 'Cancel')
  const accept = h('button', { type: 'button', class: 'danger' }, yes)
  const dialog = h('dialog', { 'aria-labelledby': textId, class: 'confirm' }, h('p', { id: textId }, message), cancel, accept)
  cancel.addEventListener('click', () => dialog.close('no'))
  accept.addEventListener('click', () => dialog.close('yes'))
  document.body.append(dialog)
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      dialog.remove()
      resolve(dialog.returnValue === 'yes')
    }, { once: true })
    dialog.showModal()
  })
}

/** `count` `noun`s, the noun in the plural unless there is one (`3 members`, `1 member`). */
export const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`

/** Up to `shown` of `names`, quoted, and how many more (`"a", "b" and 3 more`). */
export function someOf(names: readonly string[], shown = 5): string {
  const quoted = names.slice(0, shown).map((n) => JSON.stringify(n))
  const more = names.length - quoted.length
  if (more > 0) return `${quoted.join(', ')} and ${more} more`
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}` : quoted.join('')
}
