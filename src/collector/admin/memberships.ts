/**
 * Audience memberships: the members each audience had at its last sync on a source, the base of
 * the next sync's diff. `MemoryMemberships` keeps them in this process.
 */
export interface MembershipStore {
  get(source: string, audience: string): readonly string[] | undefined
  set(source: string, audience: string, members: readonly string[]): void
}

export class MemoryMemberships implements MembershipStore {
  readonly #members = new Map<string, readonly string[]>()

  get(source: string, audience: string): readonly string[] | undefined {
    return this.#members.get(JSON.stringify([source, audience]))
  }

  set(source: string, audience: string, members: readonly string[]): void {
    this.#members.set(JSON.stringify([source, audience]), members)
  }
}
