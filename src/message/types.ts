/** The six calls' message types, as callers pass them and as they are sent. */

/** A plain object with string keys, as `context` and the untyped traits are. */
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

/** Fields every call takes. */
export interface CommonFields {
  /** Deep-merged over the client's `context` option; the client adds `library`. */
  context?: JsonObject
  /** Which destinations get the message, merged over the client's `integrations` option. */
  integrations?: Integrations
  /** When the call happened (historical import). Date, or an ISO 8601 string. Default: now. */
  timestamp?: Date | string
  /** Unique id the server de-duplicates on. Default: a random UUID v4. */
  messageId?: string
}

/**
 * Who the call is about: every call but alias needs a `userId` or an `anonymousId` (or both). Both
 * are optional in the type because a client with option `identity` (on by default in browser
 * pages and workers) fills them in; elsewhere a call with neither throws a `ValidationError`.
 */
export type Identity = { userId?: string; anonymousId?: string }

/** What {@link Client.identify} takes: who the user is (`userId` or `anonymousId`) and their `traits`. */
export type IdentifyMessage = CommonFields & Identity & { traits?: Properties }
/** What {@link Client.track} takes: the `event` name (required), the user, and the event's `properties`. */
export type TrackMessage = CommonFields & Identity & { event: string; properties?: Properties }
/** What {@link Client.page} takes: the user, and the page's optional `name`, `category` and `properties`. */
export type PageMessage = CommonFields &
  Identity & {
    name?: string
    category?: string
    properties?: Properties
    /** Go v2's name for `properties` (v2 sent Page `Traits` as `properties`). */
    traits?: Properties
  }
/** What {@link Client.screen} takes: the user, and the screen's optional `name`, `category`, `properties`. */
export type ScreenMessage = CommonFields &
  Identity & { name?: string; category?: string; properties?: Properties }
/** What {@link Client.group} takes: the user, the `groupId` (required) and the group's `traits`. */
export type GroupMessage = CommonFields & Identity & { groupId: string; traits?: Properties }
/**
 * What {@link Client.alias} takes: `userId` and `previousId`, both required, for one user known by
 * two ids.
 */
export type AliasMessage = CommonFields & { userId: string; previousId: string; anonymousId?: string }

/** The six message types, one per call. */
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

/** `context.library` of a sent message: the package that sent it. */
export interface LibraryInfo {
  /** `'isomorphic-analytics'`. */
  name: string
  /** The package's version. */
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
