/** Bozu Mekuri: the deck and the pile, the card just flipped (turned over,
 * briefly), each seat's cards with the poets' names (romaji and kana) and
 * categories, and flip / stop / take over. */
import type { Schemas } from "../../api/types";
import { t } from "../i18n";
import { type Card, PoetCard } from "../ui/poet";
import { type Board, type GameUi, viewOf } from "./types";

type View = Schemas["rodada.bozu_mekuri.v1.View"];

function BozuBoard({ board }: { board: Board }) {
  const view = viewOf<View>(board.snapshot, "bozu_mekuri");
  if (!view) return null;
  const cpuPlays = board.seat >= 0 && board.snapshot.seats[board.seat]?.cpu_controlled;
  return (
    <div class="bozu-mekuri">
      <p class="game-line">
        {t.bozu.deck(view.deck_count)} · {t.bozu.pile(view.pile_count)}
        {view.turn_timer_seconds ? ` · ${t.bozu.timer(view.turn_timer_seconds)}` : ""}
      </p>
      {view.semimaru_warning ? <p class="warning" role="note">{t.bozu.semimaruWarning}</p> : null}
      <div class="table-cards">
        <div class="deck" role="img" aria-label={t.bozu.deck(view.deck_count)}>
          <span class="deck-back" aria-hidden="true">{view.deck_count}</span>
        </div>
        {view.last_flipped ? (
          <div class="flipped">
            <h3 class="visually-hidden">{t.bozu.lastFlipped}</h3>
            <PoetCard key={`${view.deck_count}`} card={view.last_flipped} fresh />
          </div>
        ) : null}
      </div>
      {board.myTurn ? (
        <div class="controls">
          <button type="button" class="primary" data-action="flip" disabled={board.busy}
            onClick={() => board.act({ flip: {} })}>
            {view.extra_flip_offered ? t.bozu.flipAgain : t.bozu.flip}
          </button>
          {view.can_stop ? (
            <button type="button" data-action="stop" disabled={board.busy} onClick={() => board.act({ stop: {} })}>
              {t.bozu.stop}
            </button>
          ) : null}
        </div>
      ) : null}
      {cpuPlays && !board.over ? (
        <button type="button" data-action="take-over" onClick={() => board.act({ take_over: {} })}>{t.bozu.takeOver}</button>
      ) : null}
      <ul class="bozu-seats">
        {view.seats.map((s) => (
          <li class={board.snapshot.to_act.includes(s.seat) ? "to-act" : ""}>
            <p>
              <strong>{board.name(s.seat)}{s.seat === board.seat ? ` ${t.youMark}` : ""}</strong>: {t.bozu.seatCards(s.card_count)}
              {s.eliminated ? ` · ${t.bozu.eliminated}` : ""}{s.skips_next_turn ? ` · ${t.bozu.skips}` : ""}
            </p>
            {s.cards.length ? (
              <div class="cards">{s.cards.map((card: Card) => <PoetCard card={card} small />)}</div>
            ) : null}
          </li>
        ))}
      </ul>
      {view.pile.length ? (
        <details class="pile">
          <summary>{t.bozu.pileTitle(view.pile_count)}</summary>
          <div class="cards">{view.pile.map((card) => <PoetCard card={card} small />)}</div>
        </details>
      ) : null}
    </div>
  );
}

export const bozuMekuri: GameUi = {
  Board: BozuBoard,
  unit: (n) => t.cards(n),
  describe(event, name) {
    if (event.match_started) return t.bozu.matchStarted((event.match_started as { deck_count: number }).deck_count);
    if (event.turn_started) return t.bozu.turn(name((event.turn_started as { seat: number }).seat));
    if (event.card_flipped) {
      const e = event.card_flipped as { seat: number; card: Card; effect: string };
      return t.bozu.flipped(name(e.seat), `${e.card.name_romaji} (${e.card.name_kana})`, t.bozu.effects[e.effect] ?? "");
    }
    if (event.stopped) return t.bozu.stopped(name((event.stopped as { seat: number }).seat));
    if (event.turn_skipped) return t.bozu.skipped(name((event.turn_skipped as { seat: number }).seat));
    if (event.semimaru_warning) return t.bozu.warning;
    return null;
  },
};
