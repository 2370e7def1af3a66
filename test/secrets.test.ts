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

describe('maskUrl', () => {
  it('masks credential query parameters and leaves the rest of the URL as it is', () => {
    expect(maskUrl('http://127.0.0.1:8700/beacon/v1/batch?writeKey=wk_live_0123456789&x=1')).toBe('http://127.0.0.1:8700/beacon/v1/batch?writeKey=…6789&x=1')
    expect(maskUrl('http://h/v1/batch')).toBe('http://h/v1/batch')
    expect(maskUrl('http://h/p?token=short')).toBe('http://h/p?token=…')
    expect(maskUrl('https://hooks.example.com/in?api_key=ak_0123456789&access_token=at_0123456789&sig=abcdefghij#x'))
      .toBe('https://hooks.example.com/in?api_key=…6789&access_token=…6789&sig=…ghij#x')
    expect(maskUrl('https://h/p?keyword=seo&monkey=1')).toBe('https://h/p?keyword=seo&monkey=1')
    // An Azure Functions webhook carries its key as `?code=`; some receivers take `?auth=`.
    expect(maskUrl('https://fn.azurewebsites.net/api/hook?code=AzFnKey_0123456789==&clientId=default'))
      .toBe('https://fn.azurewebsites.net/api/hook?code=…89==&clientId=default')
    expect(maskUrl('https://h/in?auth=abcdefghijkl&postcode=12345')).toBe('https://h/in?auth=…ijkl&postcode=12345')
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
})

describe('hasMaskedCredential', () => {
  it('tells a URL as maskUrl shows it (as written or percent-encoded) from one to send to', () => {
    for (const url of ['https://h/in?token=s3cret', 'https://h/in?api_key=ak_0123456789&x=1', 'ftp://u:PASSWORD_1234@h/', 'https://h/in?team=…']) {
      expect(hasMaskedCredential(url)).toBe(false)
      expect(hasMaskedCredential(maskUrl(url))).toBe(maskUrl(url) !== url)
    }
    expect(hasMaskedCredential('https://h/in?x=1&sig=%E2%80%A6ghij')).toBe(true)
    expect(hasMaskedCredential('https://h/in')).toBe(false)
  })
})
