/** Yatzy: the dice with their keep toggles, and every seat's score card with
 * the previews (what each open box would score with these dice) on the card
 * of the seat to act — classic or Scandinavian alike. */
import type { Schemas } from "../../api/types";
import { button, die, h } from "../dom";
import { type Board, viewOf } from "./types";

type View = Schemas["rodada.yatzy.v1.View"];

const LABELS: Record<string, string> = {
  ONES: "Ones", TWOS: "Twos", THREES: "Threes", FOURS: "Fours", FIVES: "Fives", SIXES: "Sixes",
  ONE_PAIR: "One pair", TWO_PAIRS: "Two pairs", THREE_OF_A_KIND: "Three of a kind",
  FOUR_OF_A_KIND: "Four of a kind", FULL_HOUSE: "Full house", SMALL_STRAIGHT: "Small straight",
  LARGE_STRAIGHT: "Large straight", CHANCE: "Chance", YATZY: "Yatzy",
};

export function yatzy(board: Board): HTMLElement {
  const view = viewOf<View>(board.snapshot, "yatzy");
  if (!view) return h("p", {}, "…");
  const kept = (board.memo.kept as Set<number> | undefined) ?? new Set<number>();
  board.memo.kept = kept;
  const toAct = board.snapshot.to_act[0] ?? -1;
  const canRoll = board.myTurn && view.throws_left > 0;
  const preview = new Map(view.preview.map((p) => [p.box, p.points]));

  const dice = h(
    "div",
    { class: "dice", "aria-label": "dice" },
    view.dice.length === 0
      ? h("span", { class: "muted" }, "no dice thrown yet")
      : view.dice.map((value, index) =>
          board.myTurn && view.throws_left > 0
            ? button(die(value), () => {
                if (kept.has(index)) kept.delete(index);
                else kept.add(index);
                board.redraw();
              }, { class: "die", "aria-pressed": kept.has(index), "data-die": index, title: "keep this die" })
            : h("span", { class: "die" }, die(value)),
        ),
  );
  const controls = board.myTurn
    ? h(
        "div",
        { class: "controls" },
        button(view.throws_used === 0 ? "Roll" : `Roll again (${view.throws_left} left)`, () => {
          board.act({ roll: { keep: view.throws_used === 0 ? [] : [...kept].sort() } });
          kept.clear();
        }, { "data-action": "roll", disabled: !canRoll }),
        view.throws_used > 0 ? h("span", { class: "hint" }, "Toggle dice to keep, or score a box below.") : null,
      )
    : null;

  const boxes = view.cards[0]?.boxes.map((b) => b.box) ?? [];
  const head = h("tr", {}, h("th", {}, "Box"), view.cards.map((c) => h("th", {}, board.name(c.seat))));
  const rows = boxes.map((box, row) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, LABELS[box] ?? box),
      view.cards.map((card) => {
        const entry = card.boxes[row];
        if (entry?.filled) return h("td", {}, entry.points);
        if (card.seat !== toAct || !preview.has(box)) return h("td", {}, "");
        const points = preview.get(box) ?? 0;
        return h(
          "td",
          { class: "preview" },
          card.seat === board.seat && view.throws_used > 0
            ? button(`${points}`, () => board.act({ score: { box } }), {
                "data-box": box,
                "aria-label": `score ${LABELS[box] ?? box} for ${points}`,
              })
            : h("span", { class: "muted" }, `${points}?`),
        );
      }),
    ),
  );
  const sum = (label: string, pick: (c: View["cards"][number]) => number | string) =>
    h("tr", { class: "sum" }, h("th", { scope: "row" }, label), view.cards.map((c) => h("td", {}, pick(c))));
  return h(
    "section",
    { class: "yatzy" },
    h("p", {}, `${view.card === "SCANDINAVIAN" ? "Scandinavian" : "Classic"} card · round ${view.round} of ${view.rounds}`),
    dice,
    controls,
    h(
      "table",
      { class: "scorecard" },
      h("thead", {}, head),
      h("tbody", {}, rows,
        sum("Upper subtotal", (c) => c.upper_subtotal),
        sum("Bonus", (c) => c.bonus),
        sum("Total", (c) => (c.forfeited || c.removed_for_inactivity ? `${c.total} (out)` : c.total))),
    ),
  );
}
