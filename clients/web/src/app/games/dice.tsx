/** What Bozó and Yatzy share: dice kept between throws (chosen afresh
 * before each throw) and a score card with what each open box would score
 * now, the seat to act's previews as buttons. */
import { useState } from "preact/hooks";
import { formatNumber, t } from "../i18n";
import { errorText } from "../session";
import { ErrorNote } from "../ui/parts";
import type { Board } from "./types";

/** The dice kept for the next throw; forgotten when `at` (the throw) changes. */
export function useKept(at: string): [Set<number>, (index: number) => void] {
  const [kept, setKept] = useState<{ at: string; dice: Set<number> }>({ at, dice: new Set() });
  const current = kept.at === at ? kept.dice : new Set<number>();
  const toggle = (index: number) => {
    const next = new Set(current);
    if (next.has(index)) next.delete(index);
    else next.add(index);
    setKept({ at, dice: next });
  };
  return [current, toggle];
}

export interface Entry {
  points: number;
  note?: string;
}

export interface Column {
  title: string;
  /** The box's entry once filled. */
  filled(box: string): Entry | undefined;
  /** What the box would score now (only for the seat or team to act). */
  preview(box: string): Entry | undefined;
  /** The caller may score here now. */
  playable: boolean;
  current: boolean;
}

export function ScoreCard({ boxes, label, columns, sums, onScore, busy }: {
  boxes: string[];
  label: (box: string) => string;
  columns: Column[];
  sums: { label: string; values: (string | number)[] }[];
  onScore: (box: string) => void;
  busy: boolean;
}) {
  return (
    <div class="scorecard-wrap" tabIndex={0} role="region" aria-label={t.scorecard.box}>
      <table class="scorecard">
        <thead>
          <tr>
            <th scope="col">{t.scorecard.box}</th>
            {columns.map((c) => <th scope="col" class={c.current ? "to-act" : ""}>{c.title}</th>)}
          </tr>
        </thead>
        <tbody>
          {boxes.map((box) => (
            <tr>
              <th scope="row">{label(box)}</th>
              {columns.map((column) => {
                const filled = column.filled(box);
                if (filled) return <td class="filled">{filled.points}{filled.note ? <small> {filled.note}</small> : null}</td>;
                const preview = column.preview(box);
                if (!preview) return <td />;
                const text = `${preview.points}${preview.note ? ` ${preview.note}` : ""}`;
                return (
                  <td class="preview">
                    {column.playable ? (
                      <button type="button" data-box={box} disabled={busy} onClick={() => onScore(box)}
                        aria-label={t.scorecard.scoreFor(label(box), preview.points) + (preview.note ? `: ${text}` : "")}>
                        {text}
                      </button>
                    ) : <span class="muted">{t.scorecard.preview(preview.points)}</span>}
                  </td>
                );
              })}
            </tr>
          ))}
          {sums.map((sum) => (
            <tr class="sum">
              <th scope="row">{sum.label}</th>
              {sum.values.map((v) => <td>{v}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface AdviceAnswer {
  expected_final_score: number;
  options: { action: Record<string, Record<string, unknown>>; expected_final_score: number }[];
}

/** A practice table's advice: the card's expected final total under the
 * best play, and on the seat's turn every move it may make, best first,
 * in words (`describe`). Asked for, never shown unasked. */
export function Advice({ board, describe }: {
  board: Board;
  describe: (action: Record<string, Record<string, unknown>>) => string;
}) {
  const [state, setState] = useState<{ version: number; answer?: AdviceAnswer; error?: string } | null>(null);
  if (!board.practice || board.seat < 0 || board.over) return null;
  const version = board.snapshot.version;
  const current = state?.version === version ? state : null;
  const ask = () => {
    board.ask({ advice: {} }).then(
      (reply) => setState({ version, answer: (reply.answer as { advice?: AdviceAnswer } | undefined)?.advice }),
      (failure: unknown) => setState({ version, error: errorText(failure) }),
    );
  };
  return (
    <section class="advice" aria-live="polite">
      <button type="button" class="quiet" data-action="advice" onClick={ask}>{t.advice.ask}</button>
      {current?.answer ? (
        <>
          <p>{t.advice.expected(formatNumber(current.answer.expected_final_score, 1))}</p>
          {current.answer.options.length ? (
            <>
              <p class="muted">{t.advice.moves}</p>
              <ol class="advice-moves">
                {current.answer.options.slice(0, 6).map((option) => (
                  <li>{describe(option.action)} — <strong>{formatNumber(option.expected_final_score, 1)}</strong></li>
                ))}
              </ol>
            </>
          ) : null}
        </>
      ) : null}
      <ErrorNote error={current?.error ?? null} />
    </section>
  );
}

/** A throw in words: which dice it keeps (by their faces now), with the cup or not. */
export function throwWords(keep: number[] | undefined, faces: number[], cup = false): string {
  const kept = (keep ?? []).map((i) => faces[i]).filter((f): f is number => f !== undefined);
  const words = kept.length ? t.advice.keep(kept.join(" ")) : t.advice.throwAll;
  return cup ? `${words} (${t.advice.withCup})` : words;
}
