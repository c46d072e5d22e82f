/** Dominó: the line as laid with its open ends, the passes, how many tiles
 * each seat holds, your hand with the playable tiles as buttons (choosing the
 * end where it matters), and the last round's summary. */
import type { Schemas } from "../../api/types";
import { button, h } from "../dom";
import { type Board, viewOf } from "./types";

type View = Schemas["rodada.domino.v1.View"];
type Tile = Schemas["rodada.domino.v1.Tile"];

const tile = (t: Tile | undefined) => (t ? `[${t.a}|${t.b}]` : "[?]");

export function domino(board: Board): HTMLElement {
  const view = viewOf<View>(board.snapshot, "domino");
  if (!view) return h("p", {}, "…");
  const line = view.line; // left to right as it lies
  const ends = view.left_end === undefined ? "no tile laid yet" : `open ends: ${view.left_end} (left) and ${view.right_end ?? "?"} (right)`;
  const playable = new Map(view.playable.map((p) => [tile(p.tile), p]));
  const hand = h("div", { class: "hand", "aria-label": "your tiles" }, view.hand.map((t) => {
    const p = playable.get(tile(t));
    if (!p || !board.myTurn) return h("span", { class: "tile" }, tile(t));
    if (p.end_required && p.ends.length > 1) {
      return h("span", { class: "tile" }, tile(t), " ",
        p.ends.map((end) => button(end === "LEFT" ? "◀ left" : "right ▶", () => board.act({ play: { tile: t, end } }), { "data-tile": tile(t), "data-end": end })));
    }
    return button(tile(t), () => board.act({ play: { tile: t, end: p.ends[0] ?? "END_UNSPECIFIED" } }), { class: "tile", "data-tile": tile(t) });
  }));
  return h("section", { class: "domino" },
    h("p", {}, `Round ${view.round} · first team to ${view.target}`),
    h("p", { class: "line", "aria-label": "the line" }, line.length ? line.map((l) => h("span", { class: "tile", title: board.name(l.seat) }, tile(l.tile))) : "—"),
    h("p", { class: "ends" }, ends),
    h("ul", { class: "counts" }, view.hand_counts.map((n, seat) => h("li", {}, `${board.name(seat)}: ${n} tiles`))),
    view.passes.length ? h("p", { class: "passes" }, "Passes: ", view.passes.map((p) => `${board.name(p.seat)} (on ${p.left_end}/${p.right_end})`).join(", ")) : null,
    board.seat >= 0 ? h("div", {}, h("h4", {}, board.myTurn ? (view.playable.length ? "Your tiles — play one:" : "No tile fits: you pass automatically") : "Your tiles"), hand) : null,
    view.last_round ? h("p", { class: "muted" }, `Last round: ${view.last_round.kind.toLowerCase()}, ${view.last_round.points} points`) : null);
}
