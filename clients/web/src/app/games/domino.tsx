/** Dominó: the four seats around the table (your partner opposite you) with
 * how many tiles each holds and their passes, the line as laid with its two
 * open ends, your hand with the tiles that fit as buttons (choosing the end
 * where it matters), and the last round's summary. */
import type { Schemas } from "../../api/types";
import { list, t } from "../i18n";
import { Tile, TileBack } from "../ui/tile";
import { type Board, type GameUi, viewOf } from "./types";

type View = Schemas["rodada.domino.v1.View"];
type TileT = Schemas["rodada.domino.v1.Tile"];

const same = (x: TileT, y: TileT) => (x.a === y.a && x.b === y.b) || (x.a === y.b && x.b === y.a);
const teamOf = (seat: number) => seat % 2;
const tileText = (tile: TileT) => t.domino.tile(tile.a, tile.b);

function Seat({ board, view, seat, where }: { board: Board; view: View; seat: number; where: string }) {
  const passes = view.passes.filter((p) => p.seat === seat);
  const pass = passes[passes.length - 1];
  const count = view.hand_counts[seat] ?? 0;
  const toAct = board.snapshot.to_act.includes(seat);
  return (
    <div class={`seat ${where}${toAct ? " to-act" : ""}${teamOf(seat) === teamOf(Math.max(board.seat, 0)) ? " ours" : " theirs"}`}>
      <span class="who">{board.name(seat)}{seat === board.seat ? ` ${t.youMark}` : ""}</span>
      <span class="count" role="img" aria-label={t.domino.held(count)}>
        {Array.from({ length: count }, () => <TileBack />)}
        <span aria-hidden="true"> {count}</span>
      </span>
      {pass ? <span class="muted pass">{t.domino.passed(pass.left_end, pass.right_end)}</span> : null}
    </div>
  );
}

function DominoBoard({ board }: { board: Board }) {
  const view = viewOf<View>(board.snapshot, "domino");
  if (!view) return null;
  const me = Math.max(board.seat, 0);
  const around = [
    { seat: (me + 2) % 4, where: "across" },
    { seat: (me + 3) % 4, where: "left" },
    { seat: (me + 1) % 4, where: "right" },
    { seat: me, where: "near" },
  ];
  const newest = view.line.reduce((top, l) => Math.max(top, l.order), -1);
  const hasEnds = view.line.length > 0 && view.left_end !== undefined;
  const playable = (tile: TileT) => view.playable.find((p) => p.tile && same(p.tile, tile));
  const last = view.last_round;
  return (
    <div class="domino">
      <p class="game-line">{t.domino.round(view.round, view.target)}</p>
      <div class="felt">
        {around.filter((s) => s.where !== "near").map((s) => <Seat board={board} view={view} seat={s.seat} where={s.where} />)}
        <div class="line-area">
          <h3 class="visually-hidden">{t.domino.line}</h3>
          {hasEnds ? <p class="ends">{t.domino.ends(view.left_end ?? 0, view.right_end ?? 0)}</p> : null}
          {view.line.length === 0 ? (
            <p class="muted">{view.opening_tile ? t.domino.opensWith(tileText(view.opening_tile)) : t.domino.emptyLine}</p>
          ) : (
            <ol class="line" aria-label={t.domino.line}>
              {hasEnds ? <li class="end-badge" aria-hidden="true">{view.left_end}</li> : null}
              {view.line.map(({ tile = { a: 0, b: 0 }, order, seat }) => (
                <li key={`${view.round}-${order}`}>
                  <Tile a={tile.a} b={tile.b} standing={tile.a === tile.b} fresh={order === newest}
                    detail={t.domino.byPlayer(board.name(seat))} />
                </li>
              ))}
              {hasEnds ? <li class="end-badge" aria-hidden="true">{view.right_end}</li> : null}
            </ol>
          )}
        </div>
        {board.seat >= 0 ? <Seat board={board} view={view} seat={me} where="near" /> : null}
      </div>
      {board.seat >= 0 ? (
        <section class="hand" aria-labelledby="hand-title">
          <h3 id="hand-title">{board.myTurn ? (view.playable.length ? t.domino.playOne : t.domino.noTile) : t.domino.hand}</h3>
          <ul class="tiles">
            {view.hand.map((tile) => {
              const p = board.myTurn && !board.busy ? playable(tile) : undefined;
              const key = `${tile.a}-${tile.b}`;
              if (p && p.end_required && p.ends.length > 1) {
                return (
                  <li key={key} class="choose-end">
                    <Tile a={tile.a} b={tile.b} />
                    {p.ends.map((end) => {
                      const side = end === "LEFT" ? t.domino.left : t.domino.right;
                      return (
                        <button type="button" class="end-choice" data-tile={key} data-end={end}
                          aria-label={t.domino.playAt(tileText(tile), side)}
                          onClick={() => board.act({ play: { tile, end } })}>
                          {end === "LEFT" ? `◀ ${side}` : `${side} ▶`}
                        </button>
                      );
                    })}
                  </li>
                );
              }
              return (
                <li key={key}>
                  <Tile a={tile.a} b={tile.b} attrs={p ? { "data-tile": key } : undefined}
                    onPlay={p ? () => board.act({ play: { tile, end: p.ends[0] ?? "LEFT" } }) : undefined} />
                </li>
              );
            })}
          </ul>
        </section>
      ) : null}
      {last && last.round > 0 ? (
        <p class="last-round muted">
          {t.domino.lastRound(t.domino.kinds[last.kind] ?? last.kind,
            list([0, 1, 2, 3].filter((s) => teamOf(s) === last.winning_team).map(board.name)), last.points)}
        </p>
      ) : null}
    </div>
  );
}

export const domino: GameUi = {
  Board: DominoBoard,
  describe(event, name) {
    if (event.round_started) {
      const e = event.round_started as { round: number; opener: number };
      return t.domino.roundStarted(e.round, name(e.opener));
    }
    if (event.dealt) return t.domino.dealt((event.dealt as { tiles: TileT[] }).tiles.map(tileText).join(", "));
    if (event.played) {
      const e = event.played as { seat: number; tile: TileT; end?: string };
      const end = e.end === "LEFT" ? t.domino.left : e.end === "RIGHT" ? t.domino.right : "";
      return t.domino.played(name(e.seat), tileText(e.tile), end);
    }
    if (event.passed) return t.domino.passedLog(name((event.passed as { seat: number }).seat));
    if (event.round_ended) {
      const e = event.round_ended as { kind: string; winning_team: number; points: number };
      const team = list([0, 1, 2, 3].filter((s) => teamOf(s) === e.winning_team).map(name));
      return t.domino.roundEnded(t.domino.kinds[e.kind] ?? e.kind, team, e.points);
    }
    return null;
  },
};
