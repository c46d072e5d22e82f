/** Yatzy: the dice with their keep toggles, the roll, and every seat's score
 * card with the previews (what each open box would score with these dice)
 * on the card of the seat to act — classic or Scandinavian alike. */
import type { Schemas } from "../../api/types";
import { t } from "../i18n";
import { DiceRow, Die } from "../ui/die";
import { Advice, type Column, ScoreCard, throwWords, useKept } from "./dice";
import { type Board, type GameUi, viewOf } from "./types";

type View = Schemas["rodada.yatzy.v1.View"];

const label = (box: string) => t.yatzy.boxes[box] ?? box;

function YatzyBoard({ board }: { board: Board }) {
  const view = viewOf<View>(board.snapshot, "yatzy");
  const toAct = board.snapshot.to_act[0] ?? -1;
  const at = `${view?.round}-${toAct}-${view?.throws_used}`;
  const [kept, toggle] = useKept(at);
  if (!view) return null;
  const canKeep = board.myTurn && view.throws_used > 0 && view.throws_left > 0;
  const rolled = board.latest.find((e) => e.rolled)?.rolled as { kept?: number[] } | undefined;
  const fresh = (i: number) => !!rolled && !(rolled.kept ?? []).includes(i);
  const preview = new Map(view.preview.map((p) => [p.box, p.points]));
  const boxes = view.cards[0]?.boxes.map((b) => b.box) ?? [];
  const columns: Column[] = view.cards.map((card) => ({
    title: `${board.name(card.seat)}${card.seat === board.seat ? ` ${t.youMark}` : ""}`,
    filled: (box) => {
      const entry = card.boxes.find((b) => b.box === box);
      return entry?.filled ? { points: entry.points } : undefined;
    },
    preview: (box) => (card.seat === toAct && view.throws_used > 0 && preview.has(box as never)
      ? { points: preview.get(box as never) ?? 0 } : undefined),
    playable: card.seat === board.seat && board.myTurn,
    current: card.seat === toAct,
  }));
  const roll = () => board.act({ roll: { keep: view.throws_used === 0 ? [] : [...kept].sort() } });
  return (
    <div class="yatzy">
      <p class="game-line">{t.yatzy.card[view.card] ?? view.card} · {t.yatzy.round(view.round, view.rounds)}</p>
      {board.over ? null : <DiceRow>
        {view.dice.map((face, i) => (
          <Die key={fresh(i) ? `${at}-${i}` : `still-${i}`} index={i} face={face} fresh={fresh(i)}
            kept={canKeep && kept.has(i)} onToggle={canKeep ? () => toggle(i) : undefined} />
        ))}
      </DiceRow>}
      {board.myTurn ? (
        <div class="controls">
          <button type="button" class="primary" data-action="roll" disabled={view.throws_left === 0 || board.busy}
            onClick={roll}>
            {view.throws_used === 0 ? t.yatzy.roll : t.yatzy.rollAgain(view.throws_left)}
          </button>
          {view.throws_used > 0 ? <p class="hint">{t.dice.keepHint}</p> : null}
        </div>
      ) : null}
      <Advice board={board} describe={(action) => action.score
        ? t.advice.score(label(String(action.score.box)))
        : throwWords(action.roll?.keep as number[] | undefined, view.dice)} />
      <ScoreCard boxes={boxes} label={label} columns={columns} busy={board.busy}
        onScore={(box) => board.act({ score: { box: box as never } })}
        sums={[
          { label: t.scorecard.upper, values: view.cards.map((c) => c.upper_subtotal) },
          { label: t.scorecard.bonus, values: view.cards.map((c) => c.bonus) },
          { label: t.scorecard.total, values: view.cards.map((c) => (c.forfeited || c.removed_for_inactivity ? `${c.total} (${t.scorecard.out})` : c.total)) },
        ]} />
    </div>
  );
}

export const yatzy: GameUi = {
  Board: YatzyBoard,
  describe(event, name) {
    if (event.turn_started) {
      const e = event.turn_started as { seat: number; round: number };
      return t.yatzy.turn(name(e.seat), e.round);
    }
    if (event.rolled) {
      const e = event.rolled as { seat: number; dice: number[] };
      return t.yatzy.rolled(name(e.seat), e.dice.join(" "));
    }
    if (event.scored) {
      const e = event.scored as { seat: number; points: number; box: string };
      return t.yatzy.scored(name(e.seat), e.points, label(e.box));
    }
    return null;
  },
};
