/** A source's Webhooks settings as configured (and as the console changes them: ./console/). */

/** One webhook URL of a source's destination. */
export interface WebhookUrlConfig {
  /** Full http(s) URL, without credentials; each URL once per destination. */
  url: string
  /**
   * Static headers sent to this URL only; they may not override `User-Agent`, `Content-Type` or
   * `X-Signature`. Shown masked in the console and logs.
   */
  headers?: Record<string, string>
}

/** A source's Webhooks destination: where its messages are forwarded, signed, and for how long retried. */
export interface SourceWebhooksConfig {
  /** The destination on or off. Default `true` when `urls` are given. A disabled one is still checked. */
  enabled?: boolean
  /** 1 to 5 receivers, http or https. */
  urls?: WebhookUrlConfig[]
  /** Signs every forwarded body (`X-Signature`, HMAC-SHA1, hex). */
  sharedSecret?: string
  /** One or two `whsec_…` secrets: Standard Webhooks signatures beside `X-Signature`. */
  standardSecrets?: string[]
  /** ms allowed for one delivery attempt (default 5000). */
  timeout?: number
  /** ms during which failed deliveries are retried (default 4 hours). */
  retryWindow?: number
}
