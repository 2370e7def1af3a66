/** The durable mode on a real PostgreSQL (a fresh cluster on a free loopback port, in a temporary directory). */
import { startPostgres } from '../../helpers/queue-servers.js'
import { durableSuite } from './suite.js'

durableSuite('PostgreSQL', () => startPostgres())
