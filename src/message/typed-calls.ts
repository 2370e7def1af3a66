/**
 * Compile-time tracking plans: `new Client<Events, Traits, GroupTraits>()` narrows what `track`,
 * `identify` and `group` accept. Without type arguments the defaults below give back exactly the
 * untyped messages of ./types.ts, so existing code is unaffected.
 */
import type { StandardSchemaV1 } from './standard-schema.js'
import type { CommonFields, GroupMessage, Identity, IdentifyMessage, JsonObject, TrackMessage } from './types.js'

/** The default: any event name, any properties. */
export type AnyEvents = Record<string, JsonObject>

/**
 * `properties` is required when the event's properties type has a required key, optional
 * otherwise (`{}`, all-optional, or `undefined` for an event without properties).
 */
type PropertiesField<P> = [P] extends [undefined] ? { properties?: undefined }
  : {} extends P ? { properties?: P }
  : { properties: P }

/**
 * One `track()` input per event of the map, discriminated by `event` (so editors complete it).
 * A map with no named events (the default, `unknown`, `{}`) accepts any event, as untyped.
 */
export type TypedTrackMessage<Events> = string extends keyof Events ? TrackMessage
  : [keyof Events & string] extends [never] ? TrackMessage
  : { [K in keyof Events & string]: CommonFields & Identity & { event: K } & PropertiesField<Events[K]> }[keyof Events & string]

/**
 * Traits with no named keys (the default `JsonObject`, `{}`, `unknown`) are untyped. A traits type
 * whose keys are all optional, as traits usually are, is checked like any other: `JsonObject`
 * would be assignable to it, so that is not the test.
 */
type Untyped<Traits> = string extends keyof Traits ? true : [keyof Traits] extends [never] ? true : false

/**
 * What `identify()` takes on a `Client<Events, Traits>`: with a `Traits` type that names its keys,
 * `traits` must fit it; otherwise (the default) it is {@link IdentifyMessage}.
 */
export type TypedIdentifyMessage<Traits> = Untyped<Traits> extends true
  ? IdentifyMessage
  : CommonFields & Identity & { traits?: Traits }

/**
 * What `group()` takes on a `Client<Events, Traits, GroupTraits>`: with a `GroupTraits` type that
 * names its keys, `traits` must fit it; otherwise (the default) it is {@link GroupMessage}.
 */
export type TypedGroupMessage<Traits> = Untyped<Traits> extends true
  ? GroupMessage
  : CommonFields & Identity & { groupId: string; traits?: Traits }

/** Option `schema`: a Standard Schema validator per event name; its input type is the event's properties. */
export type EventSchemas<Events> = { readonly [K in keyof Events]?: StandardSchemaV1<Events[K], unknown> }
