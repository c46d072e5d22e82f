/** A snapshot's legal actions (`Snapshot.legal`, common proto's
 * LegalActions) back to every action they allow — the way back of the
 * server's services/kit/legal.py `compact`, as its `expand` is. Boards that
 * offer choices take them from here, so they never offer a move the server
 * refuses. */
import type { Schemas } from "../../api/types";

export type Legal = Schemas["rodada.common.v1.LegalActions"];
export type Json = Record<string, unknown>;

/** The action without its `@type`. */
export function untyped(action: unknown): Json {
  const { "@type": _type, ...body } = (action ?? {}) as Json;
  void _type;
  return body;
}

/** `action` with `value` at the dotted `path` (a copy). */
export function withValue(action: Json, path: string, value: unknown): Json {
  const copy = structuredClone(action) as Json;
  const keys = path.split(".");
  let node = copy;
  for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Json;
  node[keys[keys.length - 1]!] = value;
  return copy;
}

/** Every `size`-element choice of `values`, in order. */
function choices(values: number[], size: number): number[][] {
  if (size === 0) return [[]];
  return values.flatMap((v, i) => choices(values.slice(i + 1), size - 1).map((rest) => [v, ...rest]));
}

/** Every action `legal` allows, each without `@type` (fields at their
 * default may be left out, as proto3 JSON allows). */
export function expand(legal: Partial<Legal> | undefined | null): Json[] {
  if (!legal) return [];
  const found = (legal.actions ?? []).map(untyped);
  for (const item of legal.ranges ?? []) {
    const action = untyped(item.action);
    for (let v = item.min ?? 0; v <= (item.max ?? 0); v++) found.push(withValue(action, item.path, v));
  }
  for (const item of legal.subsets ?? []) {
    const action = untyped(item.action);
    for (let size = item.min_size ?? 0; size <= (item.max_size ?? 0); size++) {
      for (const chosen of choices(item.values ?? [], size)) found.push(withValue(action, item.path, chosen));
    }
  }
  return found;
}
