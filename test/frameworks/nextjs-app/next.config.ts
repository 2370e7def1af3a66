import type { NextConfig } from 'next'

const nextConfig: NextConfig = {
  // Next 16's template turns this on; it refuses a route segment's `runtime` option, and
  // app/api/edge/route.ts sets `runtime = 'edge'`.
  cacheComponents: false,
}

export default nextConfig
