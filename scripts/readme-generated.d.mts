export function withGenerated(readme: string, id: string, text: string): string
export function generatedBlocks(readme: string): Map<string, { script: string; text: string }>
