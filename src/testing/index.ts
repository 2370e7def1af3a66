/**
 * `isomorphic-analytics/testing`: a fake collector for tests, built on msw (a peer the user
 * installs). Its handlers run the collector's own ingest rules, record what arrives, and can
 * answer with scripted faults.
 *
 * @packageDocumentation
 * @module isomorphic-analytics/testing
 */
export {
  createFakeCollector,
  type FakeCollector,
  type FakeCollectorOptions,
  type RecordedRequest,
  type ScriptedReply,
} from './fake-collector.js'
export type { Message as CollectedMessage } from '../collector/ingest/parse.js'
