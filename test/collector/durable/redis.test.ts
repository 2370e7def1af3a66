/** The durable mode on a real redis-server (started here on a free loopback port, in a temporary directory). */
import { startRedis } from '../../helpers/queue-servers.js'
import { durableSuite } from './suite.js'

durableSuite('Redis', () => startRedis())
