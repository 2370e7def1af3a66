/**
 * A lean HTTP/1.1 client for the load generators: one keep-alive connection, one request at a
 * time, each request written as one string and each answer read by a minimal parser (the status
 * line, then a `Content-Length` body). The load generator shares this 2-core machine with what it
 * measures: through `node:http`'s client it took about a fifth of a core at 2,600 requests/s
 * (PostgreSQL line, 2026-11-27), through this one (written the way wrk and autocannon write
 * theirs) 8–11 % at 3,200.
 *
 * An answer framed any other way (chunked, or closed without a length) is an error that names
 * it: the collector always sends a length, and a load generator that guessed would miscount.
 */
import net from 'node:net'

const HEAD_END = Buffer.from('\r\n\r\n')
const LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i
const CLOSE = /\r\nconnection:[ \t]*close/i

/**
 * `post(body)` sends `POST <url's path>` with `headers` (name → value) and the body's length, and
 * resolves with the answer's status, or 0 when the connection failed (then the next post opens a
 * new one). `close()` ends the connection.
 */
export function leanConnection(url, headers) {
  const { protocol, hostname, port, pathname, search, host } = new URL(url)
  if (protocol !== 'http:') throw new Error(`lean-http: plain http:// only, not ${url}`)
  const head = `POST ${pathname}${search} HTTP/1.1\r\nHost: ${host}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}Content-Length: `
  let socket
  let waiting // { resolve, reject } of the request in flight
  let buffered = null

  const settle = (status) => {
    const w = waiting
    waiting = undefined
    w?.resolve(status)
  }

  const open = () => {
    socket = net.connect(Number(port || 80), hostname)
    socket.setNoDelay(true)
    buffered = null
    const own = socket
    own.on('data', (chunk) => {
      buffered = buffered ? Buffer.concat([buffered, chunk]) : chunk
      const end = buffered.indexOf(HEAD_END)
      if (end < 0) return
      const text = buffered.toString('latin1', 0, end)
      const length = LENGTH.exec(text)
      if (!length) {
        waiting?.reject(new Error(`lean-http: an answer without Content-Length from ${url}: ${JSON.stringify(text)}`))
        waiting = undefined
        own.destroy()
        return
      }
      const total = end + HEAD_END.length + Number(length[1])
      if (buffered.length < total) return
      buffered = buffered.length > total ? buffered.subarray(total) : null
      if (CLOSE.test(text)) {
        own.destroy()
        socket = undefined
      }
      settle(Number(text.slice(9, 12)))
    })
    own.on('error', () => {})
    own.on('close', () => {
      if (socket === own) socket = undefined
      settle(0)
    })
  }

  return {
    post(body) {
      if (waiting) throw new Error('lean-http: one request at a time on a connection')
      if (!socket) open()
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject }
        socket.write(`${head}${Buffer.byteLength(body)}\r\n\r\n${body}`)
      })
    },
    close() {
      socket?.destroy()
      socket = undefined
    },
  }
}
