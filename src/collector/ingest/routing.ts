/**
 * Which destinations a message goes to, by its `integrations` object (Go v2 §4.3): every
 * destination is on by default; `All: false` turns all off except those set `true`; a destination
 * set `false` is off. Keys are case-sensitive: `webhooks` is not `Webhooks`.
 */
import { isPlainObject } from '../../message/validate.js'

/** The destination's name in `integrations`. */
export const WEBHOOKS_INTEGRATION = 'Webhooks'

/**
 * Whether a message's `integrations` object lets it reach the destination `name` (default
 * `'Webhooks'`): every destination is on unless `All: false` or the destination set `false`; the
 * destination's own entry (`true`, or an options object) wins over `All`. Keys are case-sensitive.
 */
export function integrationEnabled(integrations: unknown, name: string = WEBHOOKS_INTEGRATION): boolean {
  if (!isPlainObject(integrations)) return true
  const own = integrations[name]
  // An object holds the destination's own options: it is on.
  if (own !== undefined && own !== null) return own !== false
  return integrations.All !== false
}
