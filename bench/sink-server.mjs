// A generic HTTP sink for benchmarks: answers 200 to every POST (after reading the body), 405 to
// anything else. Run as a script, it listens on 127.0.0.1 on a free port (or $PORT) and reports the
// port on stdout and, when forked, through the IPC channel; it stops on SIGTERM, SIGINT or when the
// parent disconnects. Imported, `startSink(path)` forks it and resolves to its URL and a stop().
import { fork } from 'node:child_process'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'

const SELF = fileURLToPath(import.meta.url)

/** This sink in a child process; `url` is `path` on it. */
export function startSink(path = '/') {
  const child = fork(SELF, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    child.once('message', ({ port }) => resolve({ url: `http://127.0.0.1:${port}${path}`, stop: () => child.kill('SIGTERM') }))
    child.once('exit', (code) => reject(new Error(`sink exited with ${code}`)))
  })
}

if (process.argv[1] === SELF) {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(req.method === 'POST' ? 200 : 405, { 'Content-Length': '0' })
      res.end()
    })
  })
  server.keepAliveTimeout = 30_000

  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address()
    console.log(`sink listening on http://127.0.0.1:${port}/`)
    process.send?.({ port })
  })

  const stop = () => server.close(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  process.on('disconnect', stop)
}
