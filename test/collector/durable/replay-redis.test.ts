/** Replay with a real redis-server as the queue server (started here on a free loopback port, in a temporary directory). */
import { startRedis } from '../../helpers/queue-servers.js'
import { durableReplaySuite } from './replay-suite.js'

durableReplaySuite('Redis', () => startRedis())
