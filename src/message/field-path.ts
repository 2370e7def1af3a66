/** One field name from a path of keys: `properties.items[0].sku`, `properties["a b"]`. */

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

export function fieldPath(path: Iterable<PropertyKey | { readonly key: PropertyKey }> | undefined, base = 'properties'): string {
  let field = base
  for (const segment of path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment
    if (typeof key === 'number') field += `[${key}]`
    else if (typeof key === 'string' && IDENTIFIER.test(key)) field += `.${key}`
    else field += `[${JSON.stringify(typeof key === 'symbol' ? key.toString() : key)}]`
  }
  return field
}
