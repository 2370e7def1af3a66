/** The console with a real PostgreSQL as the queue server (a fresh cluster on a free loopback port, in a temporary directory). */
import { startPostgres } from '../../helpers/queue-servers.js'
import { durableConsoleSuite } from './console-suite.js'

durableConsoleSuite('PostgreSQL', () => startPostgres())
