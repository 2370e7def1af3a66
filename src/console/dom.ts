/**
 * The console's only way to make DOM: `h(tag, attributes, ...children)`. Children are nodes or
 * strings, and strings always become text nodes: message content is data, never markup (no
 * `innerHTML` anywhere in the console).
 */
export type Child = Node | string | number | false | null | undefined

type Attributes = Record<string, string | number | boolean | EventListener | undefined>

function apply(element: Element, attributes: Attributes): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value)
    else element.setAttribute(name, value === true ? '' : String(value))
  }
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)))
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  apply(element, attributes)
  append(element, children)
  return element
}

const SVG = 'http://www.w3.org/2000/svg'

export function svg(tag: string, attributes: Attributes = {}, ...children: Child[]): SVGElement {
  const element = document.createElementNS(SVG, tag)
  apply(element, attributes)
  append(element, children)
  return element
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild)
  append(parent, children)
}

let ids = 0
/** A fresh id for `for`/`aria-describedby` pairs. */
export const uid = (prefix: string) => `${prefix}-${++ids}`
