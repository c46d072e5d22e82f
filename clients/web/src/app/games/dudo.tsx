/** Dudo: everyone's dice counts (your own dice face up), the bids of the
 * round, the last call with every hand revealed, and a bid box that offers
 * only the bids the server lists as legal (`Snapshot.legal`). In assisted mode
 * the odds of the standing bid and of the bid being composed are shown. */
import { useState } from "preact/hooks";
import type { Schemas } from "../../api/types";
import { percent, t } from "../i18n";
import { Die, DieFace, InlineDice } from "../ui/die";
import { type Bid, nearest, offerOf, ONES, suggested } from "./dudo_bids";
import { type Board, type GameUi, viewOf } from "./types";

type View = Schemas["rodada.dudo.v1.View"];
const bidText = (bid: Bid) => t.dudo.bidWords(bid.quantity, bid.face);

function BidText({ bid }: { bid: Bid }) {
  return <span class="bid">{bid.quantity} × <InlineDice faces={[bid.face]} /><span class="visually-hidden"> ({bidText(bid)})</span></span>;
}

function DudoBoard({ board }: { board: Board }) {
  const view = viewOf<View>(board.snapshot, "dudo");
  const [draft, setDraft] = useState<{ version: number; bid: Bid | null; odds?: string }>({ version: -1, bid: null });
  if (!view) return null;
  const standing = view.current_bid && view.current_bid.quantity > 0 ? view.current_bid : null;
  const offer = offerOf(board.snapshot.legal);
  const current = draft.version === board.snapshot.version ? draft
    : { version: board.snapshot.version, bid: suggested(offer, standing, view.my_dice, view.palifico_round) };
  const bid = current.bid;
  const inGame = view.players.some((p) => p.seat === board.seat && !p.out);
  const set = (next: Bid) => setDraft({ version: board.snapshot.version, bid: next });
  const reveal = view.last_reveal && view.last_reveal.round > 0 ? view.last_reveal : null;

  return (
    <div class="dudo">
      <p class="game-line">
        {t.dudo.round(view.round)} · {t.dudo.inPlay(view.dice_in_play)}
        {view.palifico_round ? <strong> · {t.dudo.palificoRound}</strong> : null}
      </p>
      <ul class="players" aria-label={t.dudo.players}>
        {view.players.map((p) => (
          <li class={board.snapshot.to_act.includes(p.seat) ? "to-act" : ""} data-you={p.seat === board.seat ? "" : undefined}>
            <span class="who">{board.name(p.seat)}{p.seat === board.seat ? ` ${t.youMark}` : ""}</span>{" "}
            {p.out ? <span class="muted">{p.place ? t.dudo.outPlace(t.ordinal(p.place)) : t.dudo.out}</span> : (
              p.seat === board.seat && view.my_dice.length ? (
                <span class="dice mine" role="group" aria-label={t.dudo.yourDice}>
                  {view.my_dice.map((face, i) => <Die key={`${view.round}-${i}`} index={i} face={face} fresh />)}
                </span>
              ) : (
                <span class="hidden-dice" role="img" aria-label={t.dudo.hiddenDice(p.dice_count)}>
                  {Array.from({ length: p.dice_count }, () => <DieFace face={0} hidden />)}
                </span>
              )
            )}
            {view.palifico_seat === p.seat && view.palifico_round ? <em> · {t.dudo.palifico}</em> : null}
          </li>
        ))}
      </ul>
      {board.over ? null : (
        <p class="standing">
          {standing ? (
            <>
              {t.dudo.standingLabel}: <BidText bid={standing} /> {t.dudo.by(board.name(view.bidder ?? -1))}
              {view.assist && view.current_bid_probability !== undefined
                ? <strong class="odds"> · {t.dudo.chance(percent(view.current_bid_probability))}</strong> : null}
            </>
          ) : t.dudo.noBid(board.name(view.opener))}
        </p>
      )}
      {view.round_bids.length ? (
        <ol class="bids" aria-label={t.dudo.bids}>
          {view.round_bids.map((b) => <li>{board.name(b.seat)}: <BidText bid={b} /></li>)}
        </ol>
      ) : null}
      {board.myTurn ? (
        <form class="controls bid-box" onSubmit={(e) => { e.preventDefault(); if (bid) board.act({ bid }); }}>
          {bid ? (
            <>
              <p class="field">
                <label for="bid-quantity">{t.dudo.quantity}</label>
                <select id="bid-quantity" data-field="quantity" value={String(bid.quantity)}
                  onChange={(e) => set({ ...bid, quantity: Number((e.target as HTMLSelectElement).value) })}>
                  {(offer.bids.get(bid.face) ?? []).map((q) => <option value={String(q)}>{q}</option>)}
                </select>
              </p>
              <p class="field">
                <label for="bid-face">{t.dudo.face}</label>
                <select id="bid-face" data-field="face" value={String(bid.face)}
                  onChange={(e) => {
                    const face = Number((e.target as HTMLSelectElement).value);
                    set({ face, quantity: nearest(offer, face, bid.quantity) ?? bid.quantity });
                  }}>
                  {[...offer.bids.keys()].map((f) => <option value={String(f)}>{t.dudo.faceOption(f)}</option>)}
                </select>
              </p>
              <button type="submit" class="primary" data-action="bid" disabled={board.busy}>
                {t.dudo.makeBid(bidText(bid))}
              </button>
            </>
          ) : <p>{t.dudo.noRaise}</p>}
          {offer.dudo ? (
            <button type="button" class="call" data-action="dudo" disabled={board.busy}
              onClick={() => board.act({ dudo: {} })}>{t.dudo.dudo}</button>
          ) : null}
          {offer.calza ? (
            <button type="button" data-action="calza" disabled={board.busy}
              onClick={() => board.act({ calza: {} })}>{t.dudo.calza}</button>
          ) : null}
          {view.assist && bid ? (
            <button type="button" data-action="odds" onClick={() => {
              void board.ask({ bid_odds: bid }).then((reply) => {
                const answer = reply.answer as { bid_odds?: { probability: number } } | undefined;
                setDraft({ version: board.snapshot.version, bid, odds: answer?.bid_odds ? t.dudo.oddsOf(bidText(bid), percent(answer.bid_odds.probability)) : "—" });
              });
            }}>{t.dudo.odds}</button>
          ) : null}
          {current.odds ? <output class="odds" aria-live="polite">{current.odds}</output> : null}
        </form>
      ) : null}
      {inGame && !board.over ? (
        <button type="button" class="quiet" aria-pressed={view.assist} data-action="assist" disabled={board.busy}
          onClick={() => board.act({ set_assist: { on: !view.assist } })}>
          {view.assist ? t.dudo.assistOn : t.dudo.assistOff}
        </button>
      ) : null}
      {reveal ? <Reveal board={board} reveal={reveal} /> : null}
    </div>
  );
}

function Reveal({ board, reveal }: { board: Board; reveal: NonNullable<View["last_reveal"]> }) {
  const bid = reveal.bid ?? { quantity: 0, face: 0 };
  return (
    <section class="reveal fresh-in" aria-labelledby="reveal-title" key={reveal.round}>
      <h3 id="reveal-title">{board.over ? t.dudo.finalReveal : t.dudo.round(reveal.round)}</h3>
      <p>{t.dudo.reveal(reveal.round, board.name(reveal.caller), reveal.call === "CALZA" ? t.dudo.calza : t.dudo.dudoWord,
        bidText(bid), reveal.count, t.dudo.outcome[reveal.outcome] ?? "")}</p>
      <ul class="hands">
        {reveal.hands.map((hand) => (
          <li>
            <span class="who">{board.name(hand.seat)}</span>{" "}
            <span class="dice small" role="img" aria-label={hand.dice.map((f) => t.faceName(f)).join(", ")}>
              {hand.dice.map((f) => (
                <span class={`die-small${f === bid.face || (f === ONES && reveal.ones_wild) ? " counts" : ""}`}><DieFace face={f} /></span>
              ))}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

export const dudo: GameUi = {
  Board: DudoBoard,
  unit: (n) => t.diceCount(n),
  describe(event, name) {
    if (event.round_started) {
      const e = event.round_started as { round: number; opener: number; dice_in_play: number };
      return t.dudo.roundStarted(e.round, name(e.opener), e.dice_in_play);
    }
    if (event.dice_rolled) return t.dudo.rolledYours((event.dice_rolled as { dice: number[] }).dice.join(" "));
    if (event.bid_made) {
      const e = event.bid_made as { seat: number } & Bid;
      return t.dudo.bidMade(name(e.seat), bidText(e));
    }
    if (event.revealed) {
      const e = event.revealed as { caller: number; call: string; count: number; loser?: number };
      return t.dudo.revealed(name(e.caller), e.call === "CALZA" ? t.dudo.calza : t.dudo.dudoWord, e.count,
        e.loser === undefined ? null : name(e.loser));
    }
    if (event.player_out) {
      const e = event.player_out as { seat: number; place: number };
      return t.dudo.playerOut(name(e.seat), t.ordinal(e.place));
    }
    if (event.round_voided) {
      const e = event.round_voided as { round: number; seat: number };
      return t.dudo.voided(e.round, name(e.seat));
    }
    if (event.assist_changed) return t.dudo.assistChanged(!!(event.assist_changed as { on?: boolean }).on);
    return null;
  },
};
