/**
 * Audience memberships in the queue server (durable mode): every process and a restart diff
 * against the same base, and the syncs of one audience on several processes take turns.
 */
import { AUDIENCE_TURN_TTL_MS, AUDIENCE_TURN_WAIT_MS, AudienceBusyError, keyOf, type MembershipStore } from './memberships.js'
import type { SharedState } from './shared-state.js'

export class SharedMemberships implements MembershipStore {
  /** `turnWaitMs`: how long `turn` waits for another process's sync (tests shorten it). */
  constructor(private readonly state: SharedState, private readonly turnWaitMs = AUDIENCE_TURN_WAIT_MS) {}

  get(source: string, audience: string): Promise<readonly string[] | undefined> {
    return this.state.getMembers(keyOf(source, audience))
  }

  set(source: string, audience: string, members: readonly string[]): Promise<void> {
    return this.state.setMembers(keyOf(source, audience), members)
  }

  async turn(source: string, audience: string): Promise<() => Promise<void>> {
    const end = await this.state.turn(`audience:${keyOf(source, audience)}`, AUDIENCE_TURN_TTL_MS, this.turnWaitMs)
    if (end) return end
    throw new AudienceBusyError(`Source "${source}": audience ${JSON.stringify(audience)} is being synced by another collector process, still after ${this.turnWaitMs / 1000} s.`)
  }
}
