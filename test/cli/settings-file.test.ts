/** `--config FILE` as the console's settings store: written back atomically, other keys kept. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { fileSettings } from '../../src/cli/settings-file.js'
import { createCollector } from '../../src/collector/index.js'

let dir: string
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('fileSettings', () => {
  it("writes a source's webhooks back into the config file, atomically, keeping everything else", async () => {
    dir = mkdtempSync(join(tmpdir(), 'settings-file-'))
    const path = join(dir, 'collector.json')
    writeFileSync(path, JSON.stringify({ port: 8800, adminToken: 'admin-token-123456', sources: [{ writeKey: 'K1', name: 'web' }, { writeKey: 'K2', name: 'app' }] }))
    const store = fileSettings(path)
    expect(store).toMatchObject({ kind: 'file', durable: true })
    expect(await store.save('app', { enabled: true, urls: [{ url: 'https://hooks.test/in', headers: { 'X-Team': 'a' } }], sharedSecret: 's' })).toBe(true)
    const written = JSON.parse(readFileSync(path, 'utf8'))
    expect(written).toEqual({
      port: 8800,
      adminToken: 'admin-token-123456',
      sources: [{ writeKey: 'K1', name: 'web' }, { writeKey: 'K2', name: 'app', webhooks: { enabled: true, urls: [{ url: 'https://hooks.test/in', headers: { 'X-Team': 'a' } }], sharedSecret: 's' } }],
    })
    expect(readdirSync(dir)).toEqual(['collector.json'])
    // The file still makes a valid collector: the next start uses the settings.
    expect(() => createCollector({ sources: written.sources })).not.toThrow()
  })

  it('keeps a source that is not in the file (given by --write-key) in memory only', async () => {
    dir = mkdtempSync(join(tmpdir(), 'settings-file-'))
    const path = join(dir, 'collector.json')
    const text = JSON.stringify({ sources: [{ writeKey: 'K1', name: 'web' }] })
    writeFileSync(path, text)
    expect(await fileSettings(path).save('default', { enabled: false })).toBe(false)
    expect(readFileSync(path, 'utf8')).toBe(text)
  })

  // JSON.parse's message quoted the text around the problem: here, the write key.
  it('a file edited since the start into something that is not JSON: refused with the position, not the text', async () => {
    dir = mkdtempSync(join(tmpdir(), 'settings-file-'))
    const path = join(dir, 'collector.json')
    const text = '{"sources":[{"name":"web","writeKey":WRITEKEY_SECRET_abcd1234}]}'
    writeFileSync(path, text)
    await expect(fileSettings(path).save('web', { enabled: false })).rejects.toThrow(
      new Error(`${path} is no longer valid JSON: expected a value (an object, array, string, number, true, false or null) at position 37 (line 1, column 38); the change is not written.`),
    )
    expect(readFileSync(path, 'utf8')).toBe(text)
  })
})
