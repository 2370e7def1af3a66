/**
 * The Standard Schema v1 interface (https://standardschema.dev), declared here so that zod,
 * valibot, arktype and any other conforming library work without us depending on one of them.
 * Only what we use: `validate` (sync, or a Promise) and the `types` carrier for inference.
 */

/**
 * A validator that follows [Standard Schema](https://standardschema.dev) v1, as zod, valibot and
 * arktype schemas do: what option `schema` takes per event. Only its `'~standard'` member is read.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The validator: `version`, `vendor`, `validate` (sync or a Promise), and `types` for inference. */
  readonly '~standard': StandardSchemaProps<Input, Output>
}

export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1
  readonly vendor: string
  readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>
  readonly types?: { readonly input: Input; readonly output: Output } | undefined
}

/** What a {@link StandardSchemaV1} validator returns: the `value` when valid, else the `issues`. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> }

/** One problem a {@link StandardSchemaV1} validator found. */
export interface StandardIssue {
  /** What is wrong, as the schema library words it. */
  readonly message: string
  /** Where in the validated value, as keys from its root. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
}

/** The type a schema accepts (its input), as `track()` properties. */
export type InferInput<S> = S extends StandardSchemaV1<infer I, unknown> ? I : never
