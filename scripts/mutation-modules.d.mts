export interface MutationModule {
  name: string
  file: string
  threshold: number
  tests: string[]
}
export const MODULES: MutationModule[]
export function selectModules(list: string | undefined): MutationModule[]
