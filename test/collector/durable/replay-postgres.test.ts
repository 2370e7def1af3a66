/** Replay with a real PostgreSQL as the queue server (a fresh cluster on a free loopback port, in a temporary directory). */
import { startPostgres } from '../../helpers/queue-servers.js'
import { durableReplaySuite } from './replay-suite.js'

durableReplaySuite('PostgreSQL', () => startPostgres())
