/** Bozó: the five dice (hidden under the cup until the thrower declares),
 * keep toggles, throwing with or without the cup, "por cima" / "cantar
 * embaixo" with every conversion shown (e.g. 6 → 1), and the score cards with
 * the previews of the open boxes (boca bonus marked). */
import type { Schemas } from "../../api/types";
import { button, die, h } from "../dom";
import { type Board, viewOf } from "./types";

type View = Schemas["rodada.bozo.v1.View"];

const BOXES: Record<string, string> = {
  AS: "Ás (1s)", DUQUE: "Duque (2s)", TERNO: "Terno (3s)", QUADRA: "Quadra (4s)", QUINA: "Quina (5s)",
  SENA: "Sena (6s)", FULL: "Full", SEGUIDA: "Seguida", QUADRADA: "Quadrada", GENERAL: "General",
};

export function bozo(board: Board): HTMLElement {
  const view = viewOf<View>(board.snapshot, "bozo");
  if (!view) return h("p", {}, "…");
  const kept = (board.memo.kept as Set<number> | undefined) ?? new Set<number>();
  board.memo.kept = kept;
  const canThrow = board.myTurn && !view.cup_pending && view.throws_left > 0;
  const preview = new Map(view.preview.map((p) => [p.box, p]));
  const throwing = (cup: boolean) => () => {
    board.act({ throw: { keep: view.throw_number === 0 ? [] : [...kept].sort(), cup } });
    kept.clear();
  };

  const dice = h("div", { class: "dice", "aria-label": "dice" },
    view.dice.length === 0 ? h("span", { class: "muted" }, "no dice thrown yet") :
    view.dice.map((d, index) => d.hidden
      ? h("span", { class: "die hidden", title: "under the cup" }, "🂠")
      : canThrow
        ? button(die(d.face), () => { if (kept.has(index)) kept.delete(index); else kept.add(index); board.redraw(); },
            { class: "die", "aria-pressed": kept.has(index), "data-die": index })
        : h("span", { class: "die" }, die(d.face))));
  const reveal = view.last_reveal && view.last_reveal.side !== "SIDE_UNSPECIFIED"
    ? h("p", { class: "reveal" }, view.last_reveal.side === "BOTTOM"
        ? ["Cantou embaixo: ", view.last_reveal.conversions.map((c) => h("span", { class: "conversion" }, `${c.from_face} → ${c.to_face}`)).flatMap((e, i) => (i ? [", ", e] : [e]))]
        : "Por cima: the top faces count.")
    : null;
  const controls = board.myTurn
    ? h("div", { class: "controls" },
        view.cup_pending
          ? [h("span", {}, "Under the cup: "),
             button("Por cima (top faces)", () => board.act({ declare: { side: "TOP" } }), { "data-action": "top" }),
             button("Cantar embaixo (7 − face)", () => board.act({ declare: { side: "BOTTOM" } }), { "data-action": "bottom" })]
          : [button(view.throw_number === 0 ? "Throw" : `Throw again (${view.throws_left} left)`, throwing(false), { disabled: !canThrow, "data-action": "throw" }),
             button("Throw with the cup", throwing(true), { disabled: !canThrow, "data-action": "cup" })])
    : null;
  const boxes = Object.keys(BOXES);
  const card = h("table", { class: "scorecard" },
    h("thead", {}, h("tr", {}, h("th", {}, "Box"), view.cards.map((c) =>
      h("th", {}, c.team !== "TEAM_UNSPECIFIED" ? `${c.team === "JADE" ? "Jade" : "Âmbar"} (${c.seats.map(board.name).join(", ")})` : board.name(c.seats[0] ?? 0))))),
    h("tbody", {}, boxes.map((box) => h("tr", {}, h("th", { scope: "row" }, BOXES[box]),
      view.cards.map((c) => {
        const filled = c.boxes.find((b) => b.box === box);
        if (filled) return h("td", {}, `${filled.points}${filled.boca ? " (boca)" : ""}`);
        const mine = c.seats.includes(board.seat) && board.myTurn;
        const p = c.seats.some((s) => board.snapshot.to_act.includes(s)) ? preview.get(box as View["open_boxes"][number]) : undefined;
        if (!p) return h("td", {}, "");
        const label = `${p.points}${p.boca ? " boca" : ""}`;
        return h("td", { class: "preview" }, mine
          ? button(label, () => board.act({ score: { box: p.box } }), { "data-box": box, "aria-label": `score ${BOXES[box]} for ${label}` })
          : h("span", { class: "muted" }, `${label}?`));
      }))),
      h("tr", { class: "sum" }, h("th", {}, "Total"), view.cards.map((c) => h("td", {}, c.total)))));
  return h("section", { class: "bozo" },
    h("p", {}, `${view.mode} · turn ${view.turn} of ${view.turns_total} · throw ${view.throw_number} of 3`),
    dice, reveal, controls, card);
}
