/**
 * Option `browserContext` (browser pages and workers): what each message gets under its own
 * `context`, read at each call, as a page's path and title change while it lives: `page` (`path`,
 * `referrer`, `search`, `title`, `url`), `userAgent`, `locale`, `timezone` and `screen`; and the
 * page's properties, which `page()` fills in where the caller left them out. Where a part does
 * not apply (a worker has no page or screen), it is left out.
 */
import { mergeUnder } from '../message/merge.js'
import type { JsonObject } from '../message/types.js'
import type { MessageDefaults } from './build-message.js'

/** Which parts are added (each `true` unless turned off). */
export interface BrowserContextParts {
  page?: boolean
  userAgent?: boolean
  locale?: boolean
  timezone?: boolean
  screen?: boolean
}

export const BROWSER_CONTEXT_PARTS = ['page', 'userAgent', 'locale', 'timezone', 'screen'] as const

const g = globalThis as unknown as {
  location?: { pathname: string; search: string; href: string }
  document?: { title: string; referrer: string }
  navigator?: { userAgent?: string; language?: string }
  screen?: { width: number; height: number }
  devicePixelRatio?: number
}

/** A page's `path`, `referrer`, `search`, `title` and `url` (without its fragment); none in a worker. */
function pageProperties(): JsonObject | undefined {
  const { location, document } = g
  return location && document
    ? { path: location.pathname, referrer: document.referrer, search: location.search, title: document.title, url: location.href.replace(/#.*/, '') }
    : undefined
}

/** The time zone, read once (it does not change while a page lives). */
let timezone: string | undefined

function browserContext(parts: BrowserContextParts, page: JsonObject | undefined): JsonObject {
  const { navigator, screen } = g
  const context: JsonObject = {
    page,
    userAgent: parts.userAgent === false ? undefined : navigator?.userAgent,
    locale: parts.locale === false ? undefined : navigator?.language,
    screen: parts.screen === false || !screen ? undefined : { width: screen.width, height: screen.height, density: g.devicePixelRatio ?? 1 },
  }
  if (parts.timezone !== false) {
    try {
      context.timezone = timezone ??= Intl.DateTimeFormat().resolvedOptions().timeZone
    } catch {
      // No time zone data.
    }
  }
  // (Parts that do not apply, undefined, are left out of the JSON.)
  return context
}

/**
 * A call's defaults with the browser's context under the client's own `context` (which wins), and,
 * for a `page()`, the page's properties to fill in.
 */
export function withBrowserContext(defaults: MessageDefaults, parts: BrowserContextParts, pageCall: boolean): MessageDefaults {
  // Read once: `context.page` and a `page()`'s properties are the same values.
  const page = parts.page === false ? undefined : pageProperties()
  return {
    context: mergeUnder(browserContext(parts, page), defaults.context) as JsonObject,
    integrations: defaults.integrations,
    page: pageCall ? page : undefined,
  }
}
