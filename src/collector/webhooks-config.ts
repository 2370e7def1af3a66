/** A source's Webhooks settings as configured (and as the console changes them: ./console/). */

export interface WebhookUrlConfig {
  url: string
  /** Static headers sent to this URL only. */
  headers?: Record<string, string>
}

export interface SourceWebhooksConfig {
  /** Default `true` when `urls` are given. */
  enabled?: boolean
  /** 1 to 5 receivers, http or https. */
  urls?: WebhookUrlConfig[]
  /** Signs every forwarded body (`X-Signature`, HMAC-SHA1, hex). */
  sharedSecret?: string
  /** ms allowed for one delivery attempt (default 5000). */
  timeout?: number
  /** ms during which failed deliveries are retried (default 4 hours). */
  retryWindow?: number
}
