// The modules `npm run mutation` checks (scripts/mutation.mjs), each with its minimum mutation
// score and the unit tests that pin it: only those run, so a full check takes minutes on two cores.
// A module is a file, or with `region` one top-level declaration in it (`class Limiter`: from that
// line to the `}` that closes it), mutated and scored alone.
// Signatures and ingest parsing guard what a defect would cost the most (a forged delivery
// accepted, a write key forwarded): their bar is higher.
export const MODULES = [
  { name: 'retry-policy', file: 'src/transport/retry-policy.ts', threshold: 85, tests: ['test/transport/retry-policy.test.ts'] },
  { name: 'retry-after', file: 'src/transport/retry-after.ts', threshold: 85, tests: ['test/transport/retry-after.test.ts'] },
  { name: 'wire', file: 'src/message/wire.ts', threshold: 85, tests: ['test/message/wire.test.ts', 'test/client/build-message.test.ts', 'test/queue/contract.test.ts'] },
  { name: 'limiter', file: 'src/client/delivery.ts', region: 'class Limiter', threshold: 85, tests: ['test/client/limiter.test.ts'] },
  {
    name: 'validate',
    file: 'src/message/validate.ts',
    threshold: 85,
    tests: ['test/message/validate.test.ts', 'test/message/iso-instant.test.ts', 'test/message/serialize.test.ts', 'test/message/json-shape.test.ts'],
  },
  {
    name: 'signature',
    file: 'src/webhooks/signature.ts',
    threshold: 90,
    tests: ['test/webhooks/signature.test.ts', 'test/webhooks/signature-portable.test.ts'],
  },
  {
    name: 'parse',
    file: 'src/collector/ingest/parse.ts',
    threshold: 90,
    tests: [
      'test/collector/ingest/parse.test.ts',
      'test/collector/ingest/message-limits.test.ts',
      'test/collector/ingest/envelope.test.ts',
      'test/collector/ingest/event-time.test.ts',
    ],
  },
]

/**
 * The modules named in `list` (comma-separated names, e.g. `signature,parse`), or all of them;
 * throws naming an unknown one.
 */
export function selectModules(list) {
  if (!list) return MODULES
  return list.split(',').map((name) => {
    const found = MODULES.find((module) => module.name === name.trim())
    if (!found) throw new Error(`Unknown module \`${name}\`; expected some of ${MODULES.map((m) => m.name).join(', ')}.`)
    return found
  })
}

/**
 * What Stryker mutates for `module`: its file, or with `region` the lines of that declaration
 * (`file:first-last`, 1-based); throws when the file has no such declaration.
 */
export function mutateTarget(module, text) {
  if (!module.region) return module.file
  const lines = text.split('\n')
  const first = lines.findIndex((line) => line.startsWith(module.region) || line.startsWith(`export ${module.region}`))
  const last = lines.findIndex((line, i) => i > first && line === '}')
  if (first < 0 || last < 0) throw new Error(`No \`${module.region}\` in ${module.file} for module \`${module.name}\`.`)
  return `${module.file}:${first + 1}-${last + 1}`
}
