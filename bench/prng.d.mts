/** mulberry32: a seeded PRNG giving numbers in [0, 1) (bench/prng.mjs). */
export function prng(seed: number): () => number
