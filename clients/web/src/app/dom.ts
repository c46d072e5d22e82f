/** A tiny element builder: the page is small enough to redraw from state. */
export type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | ((event: Event) => void) | null | undefined>;

export function h(tag: string, attrs: Attrs = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(key.replace(/^on/, ""), value);
    else if (value === true) element.setAttribute(key, "");
    else element.setAttribute(key, String(value));
  }
  append(element, children);
  return element;
}

function append(parent: HTMLElement, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : String(child));
  }
}

/** A real button (keyboard and screen readers for free). */
export function button(label: Child, onclick: () => void, attrs: Attrs = {}): HTMLElement {
  return h("button", { type: "button", ...attrs, onclick: () => onclick() }, label);
}

/** A die face as a character (⚀…⚅) with its number for reading. */
export function die(value: number): string {
  return value >= 1 && value <= 6 ? `${"⚀⚁⚂⚃⚄⚅"[value - 1]}${value}` : "·";
}
