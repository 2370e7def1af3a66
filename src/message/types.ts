/** The six calls' message types, as callers pass them and as they are sent. */

export type JsonObject = Record<string, unknown>

/**
 * What a property or trait may hold: JSON's values, plus `bigint` (sent as its digits, a JSON
 * number of any size) and `Date` (sent as its ISO 8601 string). Not allowed: `Map` and `Set`
 * (JSON would turn them into `{}`; pass `Object.fromEntries(map)` or `[...set]`), functions and
 * symbols. `undefined` members are left out, as JSON does.
 */
export type PropertyValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | bigint
  | Date
  | readonly PropertyValue[]
  | { readonly [key: string]: PropertyValue }

/** `properties` of track, page and screen; `traits` of identify and group. */
export type Properties = { [key: string]: PropertyValue }

/** Destination flags: `All: false` turns every destination off unless named `true`. */
export type Integrations = Record<string, boolean | JsonObject>

export interface CommonFields {
  context?: JsonObject
  integrations?: Integrations
  /** When the call happened (historical import). Date, or an ISO 8601 string. Default: now. */
  timestamp?: Date | string
  /** Unique id the server de-duplicates on. Default: a random UUID v4. */
  messageId?: string
}

/** Every call but alias needs a `userId` or an `anonymousId` (or both). */
export type Identity =
  | { userId: string; anonymousId?: string }
  | { userId?: string; anonymousId: string }

export type IdentifyMessage = CommonFields & Identity & { traits?: Properties }
export type TrackMessage = CommonFields & Identity & { event: string; properties?: Properties }
export type PageMessage = CommonFields &
  Identity & {
    name?: string
    category?: string
    properties?: Properties
    /** Go v2's name for `properties` (v2 sent Page `Traits` as `properties`). */
    traits?: Properties
  }
export type ScreenMessage = CommonFields &
  Identity & { name?: string; category?: string; properties?: Properties }
export type GroupMessage = CommonFields & Identity & { groupId: string; traits?: Properties }
export type AliasMessage = CommonFields & { userId: string; previousId: string; anonymousId?: string }

export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias'

export const MESSAGE_TYPES: readonly MessageType[] = ['identify', 'track', 'page', 'screen', 'group', 'alias']

export interface MessageInputs {
  identify: IdentifyMessage
  track: TrackMessage
  page: PageMessage
  screen: ScreenMessage
  group: GroupMessage
  alias: AliasMessage
}

export interface LibraryInfo {
  name: string
  version: string
}

/**
 * A message as it is sent: the caller's fields plus `type`, `messageId`, `timestamp`, `context`.
 * Distributes over `T`, so `SentMessage` is a union discriminated by `type`.
 */
export type SentMessage<T extends MessageType = MessageType> = T extends MessageType
  ? Omit<MessageInputs[T], 'timestamp' | 'traits'> & {
      type: T
      messageId: string
      timestamp: string
      context: JsonObject & { library: LibraryInfo }
      traits?: Properties
    }
  : never
