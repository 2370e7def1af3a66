/**
 * The Standard Schema v1 interface (https://standardschema.dev), declared here so that zod,
 * valibot, arktype and any other conforming library work without us depending on one of them.
 * Only what we use: `validate` (sync, or a Promise) and the `types` carrier for inference.
 */

export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaProps<Input, Output>
}

export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1
  readonly vendor: string
  readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>
  readonly types?: { readonly input: Input; readonly output: Output } | undefined
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> }

export interface StandardIssue {
  readonly message: string
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
}

/** The type a schema accepts (its input), as `track()` properties. */
export type InferInput<S> = S extends StandardSchemaV1<infer I, unknown> ? I : never
