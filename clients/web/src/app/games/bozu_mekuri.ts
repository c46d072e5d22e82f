/** Bozu Mekuri: the deck and the pile, each seat's cards with the poets'
 * names (romaji and Japanese), the last card flipped, and flip / stop /
 * take over. */
import type { Schemas } from "../../api/types";
import { button, h } from "../dom";
import { type Board, viewOf } from "./types";

type View = Schemas["rodada.bozu_mekuri.v1.View"];
type Card = Schemas["rodada.bozu_mekuri.v1.Card"];

const CATEGORY: Record<string, string> = { NOBLE: "noble", LADY: "lady", MONK: "monk", SEMIMARU: "Semimaru" };

function card(c: Card): HTMLElement {
  return h("span", { class: `card ${c.category.toLowerCase()}`, title: `${c.name_kana} · poem ${c.number}` },
    `${c.name_romaji} (${c.name_ja}) · ${CATEGORY[c.category] ?? c.category}${c.emperor ? ", emperor" : ""}`);
}

export function bozuMekuri(board: Board): HTMLElement {
  const view = viewOf<View>(board.snapshot, "bozu_mekuri");
  if (!view) return h("p", {}, "…");
  const cpuPlays = board.seat >= 0 && board.snapshot.seats[board.seat]?.cpu_controlled;
  return h("section", { class: "bozu-mekuri" },
    h("p", {}, `Deck: ${view.deck_count} · pile: ${view.pile_count}`, view.semimaru_warning ? " · Semimaru is still in the deck" : "",
      view.turn_timer_seconds ? ` · ${view.turn_timer_seconds} s a turn` : ""),
    view.last_flipped ? h("p", { class: "flipped" }, "Last flipped: ", card(view.last_flipped)) : null,
    board.myTurn ? h("div", { class: "controls" },
      button(view.extra_flip_offered ? "Flip again" : "Flip", () => board.act({ flip: {} }), { "data-action": "flip" }),
      view.can_stop ? button("Stop", () => board.act({ stop: {} }), { "data-action": "stop" }) : null) : null,
    cpuPlays ? button("Take my seat back from the CPU", () => board.act({ take_over: {} }), { "data-action": "take-over" }) : null,
    h("ul", { class: "seats" }, view.seats.map((s) => h("li", {},
      h("strong", {}, `${board.name(s.seat)}: ${s.card_count} cards`, s.eliminated ? " (out)" : "", s.skips_next_turn ? " (skips next turn)" : ""),
      s.cards.length ? h("div", { class: "cards" }, s.cards.map(card)) : null))),
    view.pile.length ? h("details", {}, h("summary", {}, `The pile (${view.pile_count})`), h("div", { class: "cards" }, view.pile.map(card))) : null);
}
