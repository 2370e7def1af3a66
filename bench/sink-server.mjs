// A generic HTTP sink for benchmarks: answers 200 to every POST (after reading the body), 405 to
// anything else. Listens on 127.0.0.1 on a free port (or $PORT) and reports the port on stdout and,
// when forked, through the IPC channel. Stops on SIGTERM, SIGINT or when the parent disconnects.
import { createServer } from 'node:http'

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
