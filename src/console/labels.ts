/**
 * The settings form speaks the page's language: a config path in a collector message
 * (`sources[0].webhooks.urls[1].headers["X-Team"]`) becomes the label of the field it names
 * ("header X-Team in Headers for URL 2"), so the operator reads what they see on the page.
 */

/** The page's name for `path` (relative to `sources[i].webhooks`), or `undefined` when it has none. */
function labelOf(path: string): string | undefined {
  const url = /^urls\[(\d+)\](?:\.(url|headers)(?:\[("(?:[^"\\]|\\.)*")\])?)?$/.exec(path)
  if (url) {
    const n = Number(url[1]) + 1
    if (url[3] !== undefined) return `header ${JSON.parse(url[3]) as string} in Headers for URL ${n}`
    return url[2] === 'headers' ? `Headers for URL ${n}` : `URL ${n}`
  }
  return { urls: 'the URLs', sharedSecret: 'New shared secret', enabled: 'Forward to webhooks', '': 'these settings' }[path]
}

/** `message` with every backquoted config path of a source's webhooks named by its label on the page. */
export function speak(message: string): string {
  return message.replace(/`sources\[\d+\]\.webhooks\.?([^`]*)`/g, (whole, path: string) => {
    const label = labelOf(path)
    return label === undefined ? whole : `"${label}"`
  })
}
