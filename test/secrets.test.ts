import { describe, expect, it } from 'vitest'
import { hasMaskedCredential, maskSecret, maskUrl } from '../src/secrets.js'

describe('maskSecret', () => {
  it('shows at most the last four characters, and none of a short secret', () => {
    expect(maskSecret('wk_live_4f9a1b2c3d')).toBe('…2c3d')
    expect(maskSecret('123456789')).toBe('…6789')
    expect(maskSecret('12345678')).toBe('…')
    expect(maskSecret('KEY')).toBe('…')
  })
})

describe('maskUrl: credentials by rule, not by list', () => {
  // Issue 45: the old list missed these; they appeared whole in the console, the admin API and the DEBUG log.
  it.each([
    'client_secret', 'webhook_secret', 'secret_key', 'api-key', 'API_KEY', 'apikey', 'x-api-key', 'access-token', 'access_token',
    'refresh_token', 'id_token', 'jwt', 'JWT', 'X-Amz-Signature', 'X-Amz-Credential', 'X-Amz-Security-Token', 'X-Goog-Signature',
    'sig', 'signature', 'Signature', 'password', 'passwd', 'pass', 'passphrase', 'credential', 'credentials', 'session', 'sessionId',
    'SESSION_ID', 'code', 'auth_code', 'private_key', 'writeKey', 'token', 'hub.verify_token', 'sv_sig', 'client%5Fsecret',
  ])('?%s=… is masked', (name) => {
    const value = 'Cred3ntial-Value-0123456789'
    const masked = maskUrl(`https://hooks.example.com/in?event=order&${name}=${value}&page=2`)
    expect(masked).not.toContain(value)
    expect(masked).toMatch(/^https:\/\/hooks\.example\.com\/in\?event=order&/)
    expect(masked).toContain('&page=2')
  })

  it.each([
    ['a random value under any name', 'https://h/in?x=8f3Kd9Qm2Lp7Zr4TvB6n', 'https://h/in?x=…vB6n'],
    ['a hex value under any name', 'https://h/in?v=9f86d081884c7d659a2feaa0c55ad015', 'https://h/in?v=…d015'],
    ['an ordinary value', 'https://h/in?event=order-placed&utm_source=newsletter&page=2', 'https://h/in?event=order-placed&utm_source=newsletter&page=2'],
  ])('%s', (_, url, shown) => {
    expect(maskUrl(url)).toBe(shown)
  })

  it('shows nothing of an Authorization value in a URL (the admin token sent as ?authorization=Bearer …)', () => {
    const token = 'admin-token-for-tests-ABCDEFGH'
    for (const url of [`http://c/v1/stats?authorization=Bearer%20${token}`, `http://c/v1/stats?authorization=Bearer+${token}`, `http://c/v1/stats?Authorization=${token}`, `http://c/v1/stats?header=Bearer%20${token}`]) {
      const masked = maskUrl(url)
      expect(masked).not.toContain(token)
      expect(masked).not.toContain(token.slice(-4))
    }
  })
})

describe('maskUrl', () => {
  it('masks credential query parameters and leaves the rest of the URL as it is', () => {
    expect(maskUrl('http://127.0.0.1:8700/beacon/v1/batch?writeKey=wk_live_0123456789&x=1')).toBe('http://127.0.0.1:8700/beacon/v1/batch?writeKey=…6789&x=1')
    expect(maskUrl('http://h/v1/batch')).toBe('http://h/v1/batch')
    expect(maskUrl('http://h/p?token=short')).toBe('http://h/p?token=…')
    expect(maskUrl('https://hooks.example.com/in?api_key=ak_0123456789&access_token=at_0123456789&sig=abcdefghij#x'))
      .toBe('https://hooks.example.com/in?api_key=…6789&access_token=…6789&sig=…ghij#x')
    // By rule, a name containing `key` is a credential's: a harmless one caught too only loses its value in logs.
    expect(maskUrl('https://h/p?keyword=seo&monkey=1&page=2')).toBe('https://h/p?keyword=…&monkey=…&page=2')
    // An Azure Functions webhook carries its key as `?code=`; some receivers take `?auth=`.
    expect(maskUrl('https://fn.azurewebsites.net/api/hook?code=AzFnKey_0123456789==&clientId=default'))
      .toBe('https://fn.azurewebsites.net/api/hook?code=…89==&clientId=default')
    // `auth`: an Authorization value, of which nothing is shown.
    expect(maskUrl('https://h/in?auth=abcdefghijkl&postcode=12345&city=Lyon')).toBe('https://h/in?auth=…&postcode=…&city=Lyon')
  })

  // `ftp://u:PASSWORD@h` was echoed whole in the webhook URL's ConfigError, and the CLI's banner
  // printed a PostgreSQL `?password=` in full.
  it('masks the password of the userinfo, and a password query parameter', () => {
    expect(maskUrl('ftp://u:PASSWORD_SECRET_1234@h.example.com/')).toBe('ftp://u:…1234@h.example.com/')
    expect(maskUrl('redis://:REDISPASS_9999@127.0.0.1:6379/0')).toBe('redis://:…9999@127.0.0.1:6379/0')
    expect(maskUrl('postgres://u:p@ss@w0rd_LONG@h/db')).toBe('postgres://u:…LONG@h/db')
    expect(maskUrl('postgres://u:short@h')).toBe('postgres://u:…@h')
    expect(maskUrl('postgres://user@127.0.0.1:1/db?password=PGPASS_SECRET_9876')).toBe('postgres://user@127.0.0.1:1/db?password=…9876')
    expect(maskUrl('postgres://h/db?sslpassword=ABCDEFGHIJ&user=x')).toBe('postgres://h/db?sslpassword=…GHIJ&user=x')
    expect(maskUrl('https://user@h/p@x')).toBe('https://user@h/p@x')
    expect(maskUrl('https://h/p?a=b:c@d')).toBe('https://h/p?a=b:c@d')
  })

  // Webhook URLs whose path is the credential were shown whole by the admin API, the console, the CLI and DEBUG lines.
  it('masks a known webhook service\'s token in the path, whatever it looks like', () => {
    expect(maskUrl('https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX'))
      .toBe('https://hooks.slack.com/services/T00000000/B00000000/…XXXX')
    expect(maskUrl('https://hooks.slack.com/workflows/T024BE7LD/A04ABCDEF/123456789/wfSecretToken/'))
      .toBe('https://hooks.slack.com/workflows/T024BE7LD/A04ABCDEF/123456789/…oken/')
    expect(maskUrl('https://discord.com/api/webhooks/123456789012345678/AbCdEf-gHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01'))
      .toBe('https://discord.com/api/webhooks/123456789012345678/…yZ01')
    expect(maskUrl('https://canary.discordapp.com/api/v10/webhooks/123456789012345678/onlyletterstoken?wait=true'))
      .toBe('https://canary.discordapp.com/api/v10/webhooks/123456789012345678/…oken?wait=true')
    expect(maskUrl('https://hooks.zapier.com/hooks/catch/123456/abcdef1/')).toBe('https://hooks.zapier.com/hooks/catch/123456/…/')
    expect(maskUrl('https://hooks.zapier.com/hooks/catch/123456/abcdef1/silent/')).toBe('https://hooks.zapier.com/hooks/catch/123456/…/silent/')
    expect(maskUrl('https://hook.eu1.make.com/abcdefghijklmnopqrstuvwxyzabcdef')).toBe('https://hook.eu1.make.com/…cdef')
    expect(maskUrl('https://maker.ifttt.com/trigger/door_open/json/with/key/dAbCdEfGhIjKlMnOpQrStU'))
      .toBe('https://maker.ifttt.com/trigger/door_open/json/with/key/…rStU')
    // The host is compared without case, userinfo or port; the same path elsewhere is not Slack's.
    expect(maskUrl('https://u@HOOKS.Slack.com:443/services/T0/B0/plainwords')).toBe('https://u@HOOKS.Slack.com:443/services/T0/B0/…ords')
    expect(maskUrl('https://example.com/services/T0/B0/plainwords')).toBe('https://example.com/services/T0/B0/plainwords')
  })

  it('masks a path segment that looks random, on any host, and its credential query parameters', () => {
    expect(maskUrl('https://example.com/hooks/f3b2c1d0e9a8b7c6d5e4f3a2')).toBe('https://example.com/hooks/…f3a2')
    expect(maskUrl('https://webhook.site/3f2504e0-4f89-11d3-9a0c-0305e82c3301')).toBe('https://webhook.site/…3301')
    expect(maskUrl('https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage'))
      .toBe('https://api.telegram.org/…Dsaw/sendMessage')
    // Teams / Power Automate: the workflow's id in the path, the signature in `?sig=`.
    expect(maskUrl('https://prod-12.westus.logic.azure.com:443/workflows/0a1b2c3d4e5f60718293a4b5c6d7e8f9/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=AbCdEfGhIjKlMnOp_0123456789'))
      .toBe('https://prod-12.westus.logic.azure.com:443/workflows/…e8f9/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=…6789')
    // Google Chat: the space's id is short, the credentials are `?key=` and `?token=`.
    expect(maskUrl('https://chat.googleapis.com/v1/spaces/AAAAbCdEfGh/messages?key=AIzaSyDdI0hCZtE6vySjMm&token=aBcDeFgHiJkLmNoP%3D'))
      .toBe('https://chat.googleapis.com/v1/spaces/AAAAbCdEfGh/messages?key=…SjMm&token=…P%3D')
    // The rule's edges: 16 characters or more; the kind of character changes at least once per four.
    expect(maskUrl('https://h/a1B2c3D4e5F6g7H')).toBe('https://h/a1B2c3D4e5F6g7H')
    expect(maskUrl('https://h/a1B2c3D4e5F6g7H8')).toBe('https://h/…g7H8')
    expect(maskUrl('https://h/aaa111aaa111aaaa')).toBe('https://h/…aaaa')
    expect(maskUrl('https://h/aaaa1111aaaa1111')).toBe('https://h/aaaa1111aaaa1111')
    // As the README says, a long name of short capitalised words changes kind often enough to be masked.
    expect(maskUrl('https://h/getUserByIdAndName')).toBe('https://h/…Name')
  })

  it('leaves ordinary paths as they are', () => {
    for (const url of ORDINARY) expect(maskUrl(url)).toBe(url)
  })

  it('changes nothing in a URL it masked (as written or percent-encoded by `new URL`)', () => {
    for (const url of [...WITH_CREDENTIALS, ...ORDINARY]) {
      const masked = maskUrl(url)
      expect(maskUrl(masked)).toBe(masked)
      expect(maskUrl(new URL(masked).href)).toBe(new URL(masked).href)
    }
    expect(maskUrl('https://h/p?token=…6789&sig=%E2%80%A6ghij')).toBe('https://h/p?token=…6789&sig=%E2%80%A6ghij')
    // Only the shape maskSecret makes is taken as masked: a longer value after `…` is masked again.
    expect(maskUrl('https://h/p?token=…0123456789')).toBe('https://h/p?token=…6789')
  })
})

/** URLs with credentials of each kind maskUrl masks. */
const WITH_CREDENTIALS = [
  'https://h/in?token=s3cret', 'https://h/in?api_key=ak_0123456789&x=1', 'ftp://u:PASSWORD_1234@h/',
  'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
  'https://discord.com/api/webhooks/123456789012345678/AbCdEf-gHiJkL_mNoPqRsTuVwXyZ0123456789',
  'https://hooks.zapier.com/hooks/catch/123456/abcdef1/',
  'https://prod-12.westus.logic.azure.com:443/workflows/0a1b2c3d4e5f60718293a4b5c6d7e8f9/triggers/manual/paths/invoke?api-version=2016-06-01&sig=AbCdEfGhIjKlMnOp',
  'https://chat.googleapis.com/v1/spaces/AAAAbCdEfGh/messages?key=AIzaSyDdI0hCZtE6vySjMm&token=aBcDeFgHiJkLmNoP%3D',
  'https://example.com/hooks/f3b2c1d0e9a8b7c6d5e4f3a2',
]
/** URLs with nothing to mask: words, versions, dates, numbers, short ids. */
const ORDINARY = [
  'https://example.com/hook', 'https://example.com/v1/webhooks/orders', 'https://example.com/api/events/2024-01-01',
  'https://example.com/webhook-receiver-v2-2024/customer_subscription_updated', 'https://example.com/orders/123456789012345678',
  'https://example.com/handleStripeEvents', 'https://example.com/2024-01-01T00-00-00Z/ipv6-only-k8s-cluster',
  'https://example.com/api/webhooks/123/short', 'https://hooks.slack.com/', 'https://h/in?team=…',
]

describe('hasMaskedCredential', () => {
  it('tells a URL as maskUrl shows it (as written or percent-encoded) from one to send to', () => {
    for (const url of [...WITH_CREDENTIALS, ...ORDINARY]) {
      expect(hasMaskedCredential(url)).toBe(false)
      expect(hasMaskedCredential(maskUrl(url))).toBe(maskUrl(url) !== url)
      expect(hasMaskedCredential(new URL(maskUrl(url)).href)).toBe(maskUrl(url) !== url)
    }
    expect(WITH_CREDENTIALS.filter((url) => maskUrl(url) === url)).toEqual([])
    expect(hasMaskedCredential('https://h/in?x=1&sig=%E2%80%A6ghij')).toBe(true)
    expect(hasMaskedCredential('https://h/in')).toBe(false)
    expect(hasMaskedCredential('https://hooks.slack.com/services/T0/B0/%E2%80%A6XXXX')).toBe(true)
    expect(hasMaskedCredential('https://example.com/a/…/b')).toBe(true)
  })
})
