/**
 * Audience memberships: the members each audience had at its last sync on a source, the base of
 * the next sync's diff. `MemoryMemberships` keeps them in this process; `SharedMemberships`
 * (./shared-memberships.ts, durable mode) in the queue server, so a restart or another process
 * diffs against the same base, and the syncs of one audience on several processes take turns (`turn`).
 */

export interface MembershipStore {
  get(source: string, audience: string): Promise<readonly string[] | undefined>
  set(source: string, audience: string, members: readonly string[]): Promise<void>
  /**
   * Several processes: waits until no other process is syncing the audience and takes its turn,
   * ended by the function it resolves with (once the sync's membership is remembered). Rejects
   * with an `AudienceBusyError` when another process held it `AUDIENCE_TURN_WAIT_MS`.
   */
  turn?(source: string, audience: string): Promise<() => Promise<void>>
}

/** How long a sync waits for another process's sync of its audience before it is refused. */
export const AUDIENCE_TURN_WAIT_MS = 10_000
/**
 * How long a process holds an audience's turn at most: a sync waits for room 5 s at most (then
 * fails, ending its turn), so only a process that died holding it reaches this.
 */
export const AUDIENCE_TURN_TTL_MS = 60_000

/**
 * Another process's sync of the audience did not end in time: `syncAudience` rejects with it
 * (exported by `isomorphic-analytics/collector`); over HTTP it is 503 `AUDIENCE_BUSY`. Send the
 * sync again later.
 */
export class AudienceBusyError extends Error {
  override name = 'AudienceBusyError'
  readonly code = 'AUDIENCE_BUSY'
}

/** The key of an audience's membership on a source. */
export const keyOf = (source: string, audience: string): string => JSON.stringify([source, audience])

export class MemoryMemberships implements MembershipStore {
  readonly #members = new Map<string, readonly string[]>()

  async get(source: string, audience: string): Promise<readonly string[] | undefined> {
    return this.#members.get(keyOf(source, audience))
  }

  async set(source: string, audience: string, members: readonly string[]): Promise<void> {
    this.#members.set(keyOf(source, audience), members)
  }
}
