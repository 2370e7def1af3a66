export interface MutationModule {
  name: string
  file: string
  /** One top-level declaration of `file` (`class Limiter`), mutated and scored alone. */
  region?: string
  threshold: number
  tests: string[]
}
export const MODULES: MutationModule[]
export function selectModules(list: string | undefined): MutationModule[]
export function mutateTarget(module: MutationModule, text: string): string
