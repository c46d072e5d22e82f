/** Bozó: the five dice (under the cup until the thrower reads them), keep
 * toggles, throwing with or without the cup, "por cima" / "cantar embaixo"
 * with every conversion shown (6 → 1), and the score cards (one per player,
 * one per team in duplas) with the previews of the open boxes, de boca marked. */
import type { Schemas } from "../../api/types";
import { list, t } from "../i18n";
import { DiceRow, Die } from "../ui/die";
import { Advice, type Column, ScoreCard, throwWords, useKept } from "./dice";
import { type Board, type GameUi, viewOf } from "./types";

type View = Schemas["rodada.bozo.v1.View"];

const BOXES = ["AS", "DUQUE", "TERNO", "QUADRA", "QUINA", "SENA", "FULL", "SEGUIDA", "QUADRADA", "GENERAL"];
const label = (box: string) => t.bozo.boxes[box] ?? box;

function BozoBoard({ board }: { board: Board }) {
  const view = viewOf<View>(board.snapshot, "bozo");
  const at = `${view?.turn}-${view?.throw_number}`;
  const [kept, toggle] = useKept(at);
  if (!view) return null;
  const canThrow = board.myTurn && !view.cup_pending && view.throws_left > 0;
  const canKeep = canThrow && view.throw_number > 0;
  const preview = new Map(view.preview.map((p) => [p.box as string, p]));
  const columns: Column[] = view.cards.map((card) => {
    const names = list(card.seats.map((s) => `${board.name(s)}${s === board.seat ? ` ${t.youMark}` : ""}`));
    const team = t.bozo.teams[card.team];
    const toAct = card.seats.some((s) => board.snapshot.to_act.includes(s));
    return {
      title: team ? `${team} (${names})` : names,
      filled: (box) => {
        const entry = card.boxes.find((b) => b.box === box);
        return entry ? { points: entry.points, note: entry.boca ? t.bozo.boca : undefined } : undefined;
      },
      preview: (box) => {
        const p = toAct && view.throw_number > 0 && !view.cup_pending ? preview.get(box) : undefined;
        return p ? { points: p.points, note: p.boca ? t.bozo.boca : undefined } : undefined;
      },
      playable: card.seats.includes(board.seat) && board.myTurn && !view.cup_pending,
      current: toAct,
    };
  });
  const throwing = (cup: boolean) => board.act({ throw: { keep: view.throw_number === 0 ? [] : [...kept].sort(), cup } });
  const reveal = view.last_reveal && view.last_reveal.side !== "SIDE_UNSPECIFIED" ? view.last_reveal : null;
  return (
    <div class="bozo">
      <p class="game-line">
        {t.bozo.modes[view.mode] ?? view.mode} · {t.bozo.progress(view.turn, view.turns_total, view.throw_number)}
      </p>
      <DiceRow>
        {view.dice.map((d, i) => {
          const fresh = view.just_thrown.includes(i);
          return (
            <Die key={fresh ? `${at}-${i}-${d.hidden}` : `still-${i}`} index={i} face={d.face} hidden={d.hidden}
              fresh={fresh} kept={canKeep && kept.has(i)} onToggle={canKeep && !d.hidden ? () => toggle(i) : undefined} />
          );
        })}
      </DiceRow>
      {reveal ? (
        <p class="reveal">
          {reveal.side === "BOTTOM" ? (
            <>
              {t.bozo.sungUnder}{" "}
              {reveal.conversions.map((c, i) => (
                <span class="conversion">{i ? ", " : ""}{c.from_face} → {c.to_face}</span>
              ))}
            </>
          ) : t.bozo.readTop}
        </p>
      ) : null}
      {board.myTurn ? (
        <div class="controls">
          {view.cup_pending ? (
            <>
              <p class="hint">{t.bozo.cupHint}</p>
              <button type="button" class="primary" data-action="top" disabled={board.busy}
                onClick={() => board.act({ declare: { side: "TOP" } })}>{t.bozo.top}</button>
              <button type="button" class="primary" data-action="bottom" disabled={board.busy}
                onClick={() => board.act({ declare: { side: "BOTTOM" } })}>{t.bozo.bottom}</button>
            </>
          ) : (
            <>
              <button type="button" class="primary" data-action="throw" disabled={!canThrow || board.busy}
                onClick={() => throwing(false)}>
                {view.throw_number === 0 ? t.bozo.throw : t.bozo.throwAgain(view.throws_left)}
              </button>
              <button type="button" data-action="cup" disabled={!canThrow || board.busy} onClick={() => throwing(true)}>
                {t.bozo.cup}
              </button>
              {view.throw_number > 0 ? <p class="hint">{t.dice.keepHint}</p> : null}
            </>
          )}
        </div>
      ) : null}
      <Advice board={board} describe={(action) => action.score
        ? t.advice.score(label(String(action.score.box)))
        : action.declare
          ? (action.declare.side === "BOTTOM" ? t.bozo.bottom : t.bozo.top)
          : throwWords(action.throw?.keep as number[] | undefined, view.dice.map((d) => d.face), !!action.throw?.cup)} />
      <ScoreCard boxes={BOXES} label={label} columns={columns} busy={board.busy}
        onScore={(box) => board.act({ score: { box: box as never } })}
        sums={[{ label: t.scorecard.total, values: view.cards.map((c) => c.total) }]} />
    </div>
  );
}

export const bozo: GameUi = {
  Board: BozoBoard,
  describe(event, name) {
    if (event.turn_started) {
      const e = event.turn_started as { seat: number; turn: number };
      return t.bozo.turn(name(e.seat), e.turn);
    }
    if (event.thrown) {
      const e = event.thrown as { seat: number; cup: boolean; faces: number[] };
      return e.cup ? t.bozo.thrownCup(name(e.seat)) : t.bozo.thrown(name(e.seat), e.faces.join(" "));
    }
    if (event.revealed) {
      const e = event.revealed as { seat: number; side: string; faces: number[] };
      const faces = e.faces.join(" ");
      return e.side === "BOTTOM" ? t.bozo.revealedBottom(name(e.seat), faces) : t.bozo.revealedTop(name(e.seat), faces);
    }
    if (event.scored) {
      const e = event.scored as { seat: number; points: number; box: string; boca: boolean };
      return t.bozo.scored(name(e.seat), e.points, label(e.box), e.boca);
    }
    return null;
  },
};
