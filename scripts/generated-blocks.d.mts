export function withGenerated(page: string, id: string, text: string): string
export function generatedBlocks(page: string): Map<string, { script: string; text: string }>
