/** Any game, drawn from what every snapshot carries: its view as readable
 * fields, and what the seat may do now (`Snapshot.legal`) as controls — a
 * button per action, a number field per range (Dudo's bid quantities), a
 * row of check boxes per subset (the dice to keep). Nothing here knows a
 * game: a game without a drawn board of its own is played with this one. */
import { useState } from "preact/hooks";
import type { Action } from "../../api/types";
import { t } from "../i18n";
import { type Json, type Legal, untyped, withValue } from "./legal";
import type { Board, GameEvent, GameUi } from "./types";

/** A field's name in words: "max_take" → "max take". */
const words = (name: string) => name.replace(/_/g, " ");

/** A value in one short line: lists joined, objects as their fields. */
function inline(value: unknown): string {
  if (Array.isArray(value)) return value.map(inline).join(", ");
  if (value && typeof value === "object") {
    return Object.entries(value as Json).filter(([k]) => k !== "@type")
      .map(([k, v]) => (v && typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length ? words(k) : `${words(k)} ${inline(v)}`))
      .join(" · ");
  }
  if (typeof value === "boolean") return value ? t.generic.yes : t.generic.no;
  return String(value);
}

/** A game's view, field by field; nested objects and lists of objects nest. */
function Fields({ value }: { value: Json }) {
  const entries = Object.entries(value).filter(([k]) => k !== "@type");
  return (
    <dl class="generic-fields">
      {entries.map(([key, v]) => (
        <div data-field={key}>
          <dt>{words(key)}</dt>
          <dd>
            {Array.isArray(v) && v.some((x) => x && typeof x === "object") ? (
              <ol start={0}>{v.map((x) => <li>{x && typeof x === "object" ? <Fields value={x as Json} /> : inline(x)}</li>)}</ol>
            ) : v && typeof v === "object" && !Array.isArray(v) ? <Fields value={v as Json} /> : inline(v)}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** ``action``'s label without the field at ``path`` (what the control picks). */
function labelWithout(action: Json, path: string): string {
  const keys = path.split(".");
  const copy = structuredClone(action) as Json;
  let node = copy;
  for (const key of keys.slice(0, -1)) node = (node[key] ?? {}) as Json;
  delete node[keys[keys.length - 1]!];
  return inline(copy);
}

function RangeForm({ item, board }: { item: Legal["ranges"][number]; board: Board }) {
  const action = untyped(item.action);
  const [value, setValue] = useState(item.min);
  const field = words(item.path.split(".").pop()!);
  return (
    <form class="generic-range" data-path={item.path}
      onSubmit={(e) => { e.preventDefault(); board.act(withValue(action, item.path, value) as Action); }}>
      <span>{labelWithout(action, item.path)}</span>
      <label>
        {field}{" "}
        <input type="number" min={item.min} max={item.max} step={1} value={value} required
          onInput={(e) => setValue(Number((e.target as HTMLInputElement).value))} />
      </label>
      <span class="muted"> ({item.min}–{item.max})</span>
      <button type="submit" disabled={board.busy}>{t.generic.send}</button>
    </form>
  );
}

function SubsetForm({ item, board }: { item: Legal["subsets"][number]; board: Board }) {
  const action = untyped(item.action);
  const [chosen, setChosen] = useState<number[]>([]);
  const field = words(item.path.split(".").pop()!);
  const fits = chosen.length >= item.min_size && chosen.length <= item.max_size;
  return (
    <form class="generic-subset" data-path={item.path}
      onSubmit={(e) => {
        e.preventDefault();
        if (fits) board.act(withValue(action, item.path, [...chosen].sort((a, b) => a - b)) as Action);
      }}>
      <span>{labelWithout(action, item.path)}</span>
      <fieldset>
        <legend>{field} <span class="muted">({t.generic.between(item.min_size, item.max_size)})</span></legend>
        {item.values.map((v) => (
          <label>
            <input type="checkbox" value={v} checked={chosen.includes(v)}
              onChange={(e) => setChosen((e.target as HTMLInputElement).checked ? [...chosen, v] : chosen.filter((c) => c !== v))} />
            {v}
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={board.busy || !fits}>{t.generic.send}</button>
    </form>
  );
}

/** What the seat may do now, from the snapshot's legal actions. */
export function LegalControls({ board }: { board: Board }) {
  const legal = (board.snapshot as { legal?: Legal }).legal;
  if (!legal || board.over) return null;
  const count = legal.actions.length + legal.ranges.length + legal.subsets.length;
  if (!count) return null;
  return (
    <div class="controls generic-controls" role="group" aria-label={t.generic.choices}>
      <h3>{t.generic.choices}</h3>
      {legal.actions.map((raw) => {
        const action = untyped(raw);
        return (
          <button type="button" data-action={Object.keys(action)[0]} disabled={board.busy}
            onClick={() => board.act(action as Action)}>
            {inline(action)}
          </button>
        );
      })}
      {legal.ranges.map((item) => <RangeForm item={item} board={board} />)}
      {legal.subsets.map((item) => <SubsetForm item={item} board={board} />)}
    </div>
  );
}

function GenericBoard({ board }: { board: Board }) {
  return (
    <div class="generic-board">
      <Fields value={untyped(board.snapshot.view)} />
      <LegalControls board={board} />
    </div>
  );
}

/** A game's event in one line: its kind and fields, seats by name. */
function describe(event: GameEvent, name: (seat: number) => string): string | null {
  const [kind, data] = Object.entries(event)[0] ?? [];
  if (!kind) return null;
  const body = { ...(data ?? {}) } as Json;
  const who = typeof body.seat === "number" ? name(body.seat) : "";
  delete body.seat;
  const rest = inline(body);
  return `${who ? `${who}: ` : ""}${words(kind)}${rest ? ` (${rest})` : ""}`;
}

export const generic: GameUi = { Board: GenericBoard, describe };
