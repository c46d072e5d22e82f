/** Dudo: the players' dice counts, your own dice, the bids of the round, the
 * last reveal, and a bid composer prefilled with the lowest legal raise. In
 * assisted mode the odds of the standing bid (from the view) and of the bid
 * being composed (asked of the game) are shown. */
import type { Schemas } from "../../api/types";
import { button, die, h } from "../dom";
import { type Board, viewOf } from "./types";

type View = Schemas["rodada.dudo.v1.View"];
const ONES = 1;

/** The fewest dice a bid on `face` needs to raise (quantity, standing face); ones are wild. */
function lowestRaise(quantity: number, standing: number, face: number): number {
  if (standing !== ONES && face !== ONES) return face > standing ? quantity : quantity + 1;
  if (standing !== ONES) return Math.floor((quantity + 1) / 2);
  if (face === ONES) return quantity + 1;
  return 2 * quantity + 1;
}

function suggested(view: View): { quantity: number; face: number } {
  const bid = view.current_bid;
  if (!bid || bid.quantity === 0) return { quantity: 1, face: 2 };
  if (view.palifico_round) return { quantity: bid.quantity + 1, face: bid.face };
  return { quantity: lowestRaise(bid.quantity, bid.face, bid.face), face: bid.face };
}

const percent = (p: number) => `${(p * 100).toFixed(1)}%`;

export function dudo(board: Board): HTMLElement {
  const view = viewOf<View>(board.snapshot, "dudo");
  if (!view) return h("p", {}, "…");
  const memo = board.memo as { version?: number; quantity?: number; face?: number; odds?: string };
  if (memo.version !== board.snapshot.version) {
    Object.assign(memo, { version: board.snapshot.version, ...suggested(view), odds: undefined });
  }
  const quantity = memo.quantity ?? 1;
  const face = memo.face ?? 2;
  const bid = view.current_bid && view.current_bid.quantity > 0 ? view.current_bid : null;
  const inPlay = view.players.find((p) => p.seat === board.seat && !p.out);

  const players = h(
    "ul",
    { class: "players" },
    view.players.map((p) =>
      h("li", { class: board.snapshot.to_act.includes(p.seat) ? "to-act" : "" },
        `${board.name(p.seat)}: ${p.out ? `out${p.place ? ` (place ${p.place})` : ""}` : `${p.dice_count} dice`}`,
        view.palifico_seat === p.seat && view.palifico_round ? " · palifico" : ""),
    ),
  );
  const mine = view.my_dice.length
    ? h("p", { class: "dice", "aria-label": "your dice" }, "Your dice: ", view.my_dice.map((d) => h("span", { class: "die" }, die(d))))
    : null;
  const standing = h(
    "p",
    { class: "standing" },
    bid ? `Bid: ${bid.quantity} × ${die(bid.face)} by ${board.name(view.bidder ?? -1)}` : "No bid yet this round",
    ` · ${view.dice_in_play} dice in play · round ${view.round}`,
    view.palifico_round ? " · palifico round (ones not wild)" : "",
    view.assist && view.current_bid_probability !== undefined
      ? h("strong", { class: "odds" }, ` · chance it stands: ${percent(view.current_bid_probability)}`)
      : null,
  );
  const bids = view.round_bids.length
    ? h("ol", { class: "bids" }, view.round_bids.map((b) => h("li", {}, `${board.name(b.seat)}: ${b.quantity} × ${die(b.face)}`)))
    : null;
  const reveal = view.last_reveal && view.last_reveal.round > 0 ? revealed(board, view.last_reveal) : null;

  const composer = board.myTurn
    ? h(
        "div",
        { class: "controls" },
        h("label", {}, "Quantity ",
          h("input", { type: "number", min: 1, max: view.dice_in_play, value: quantity, "data-field": "quantity",
            onchange: (e: Event) => { memo.quantity = Number((e.target as HTMLInputElement).value); memo.odds = undefined; board.redraw(); } })),
        h("label", {}, " Face ",
          h("select", { "data-field": "face", onchange: (e: Event) => {
            memo.face = Number((e.target as HTMLSelectElement).value);
            if (bid && !view.palifico_round) memo.quantity = lowestRaise(bid.quantity, bid.face, memo.face);
            memo.odds = undefined;
            board.redraw();
          } }, [1, 2, 3, 4, 5, 6].map((f) => h("option", { value: f, selected: f === face }, die(f))))),
        button(`Bid ${quantity} × ${die(face)}`, () => board.act({ bid: { quantity, face } }), { "data-action": "bid" }),
        bid ? button("Dudo!", () => board.act({ dudo: {} }), { "data-action": "dudo" }) : null,
        bid && view.options?.calza ? button("Calza", () => board.act({ calza: {} }), { "data-action": "calza" }) : null,
        view.assist
          ? button("Odds of this bid", () => {
              void board.ask({ bid_odds: { quantity, face } }).then((reply) => {
                const answer = reply.answer as { bid_odds?: { probability: number } } | undefined;
                memo.odds = answer?.bid_odds ? `${quantity} × ${die(face)}: ${percent(answer.bid_odds.probability)}` : "—";
                board.redraw();
              });
            }, { "data-action": "odds" })
          : null,
        memo.odds ? h("output", { class: "odds" }, memo.odds) : null,
      )
    : null;
  const assist = inPlay
    ? button(view.assist ? "Assisted mode: on" : "Assisted mode: off", () => board.act({ set_assist: { on: !view.assist } }), {
        "aria-pressed": view.assist, "data-action": "assist",
      })
    : null;
  return h("section", { class: "dudo" }, players, mine, standing, bids, composer, assist, reveal);
}

function revealed(board: Board, r: NonNullable<View["last_reveal"]>): HTMLElement {
  const outcome: Record<string, string> = {
    BIDDER_LOSES: "the bidder loses a die", CALLER_LOSES: "the caller loses a die",
    CALZA_RIGHT: "calza right: the caller gains a die", CALZA_WRONG: "calza wrong: the caller loses a die",
  };
  return h("details", { class: "reveal", open: true },
    h("summary", {}, `Round ${r.round}: ${board.name(r.caller)} called ${r.call === "CALZA" ? "calza" : "Dudo"} on ${r.bid?.quantity ?? 0} × ${die(r.bid?.face ?? 0)} — ${r.count} found, ${outcome[r.outcome] ?? r.outcome}`),
    h("ul", {}, r.hands.map((hand) => h("li", {}, `${board.name(hand.seat)}: `, hand.dice.map((d) => h("span", { class: "die" }, die(d)))))));
}
