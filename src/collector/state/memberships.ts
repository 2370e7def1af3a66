/**
 * Audience memberships: the members each audience had at its last sync on a source, the base of
 * the next sync's diff. `MemoryMemberships` keeps them in this process; `SharedMemberships` in
 * the queue server, so a restart or another process diffs against the same base.
 */
import type { SharedState } from './shared-state.js'

export interface MembershipStore {
  get(source: string, audience: string): Promise<readonly string[] | undefined>
  set(source: string, audience: string, members: readonly string[]): Promise<void>
}

const keyOf = (source: string, audience: string) => JSON.stringify([source, audience])

export class MemoryMemberships implements MembershipStore {
  readonly #members = new Map<string, readonly string[]>()

  async get(source: string, audience: string): Promise<readonly string[] | undefined> {
    return this.#members.get(keyOf(source, audience))
  }

  async set(source: string, audience: string, members: readonly string[]): Promise<void> {
    this.#members.set(keyOf(source, audience), members)
  }
}

export class SharedMemberships implements MembershipStore {
  constructor(private readonly state: SharedState) {}

  get(source: string, audience: string): Promise<readonly string[] | undefined> {
    return this.state.getMembers(keyOf(source, audience))
  }

  set(source: string, audience: string, members: readonly string[]): Promise<void> {
    return this.state.setMembers(keyOf(source, audience), members)
  }
}
