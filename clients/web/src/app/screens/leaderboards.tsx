/** Leaderboards and leagues of every ranked mode: the ratings, best first
 * (a page at a time), and the current season's divisions with the moves
 * that closed the last one. A name opens the player's profile. */
import { useEffect, useState } from "preact/hooks";
import type { GameInfo, Schemas } from "../../api/types";
import type { Go } from "../app";
import { formatNumber, t } from "../i18n";
import { client, errorText } from "../session";
import { Card, ErrorNote } from "../ui/parts";
import { modeLabel } from "./lobby";

type Board = Schemas["rodada.platform.v1.GetLeaderboardResponse"];
type League = Schemas["rodada.platform.v1.League"];
const PAGE = 20;

export function LeaderboardsScreen({ games, go }: { games: GameInfo[]; go: Go }) {
  const ranked = games.flatMap((g) => g.modes.filter((m) => m.rated).map((m) => ({ game: g, mode: m.name })));
  const [chosen, setChosen] = useState(0);
  const [offset, setOffset] = useState(0);
  const [board, setBoard] = useState<Board | null>(null);
  const [league, setLeague] = useState<League | null>(null);
  const [error, setError] = useState<string | null>(null);
  const pick = ranked[chosen];
  useEffect(() => {
    if (!pick) return;
    setBoard(null);
    setError(null);
    client.leaderboard(pick.game.name, pick.mode, { offset, limit: PAGE }).then(setBoard, (f: unknown) => setError(errorText(f)));
  }, [chosen, offset]);
  useEffect(() => {
    if (!pick) return;
    setLeague(null);
    client.league(pick.game.name, pick.mode).then(setLeague, () => setLeague(null));
  }, [chosen]);
  const person = (userId: string, name: string) => (
    <a href={`/?profile=${encodeURIComponent(userId)}`}
      onClick={(e) => { e.preventDefault(); go({ name: "profile", userId, userName: name }); }}>{name}</a>
  );
  return (
    <div class="community leaderboards">
      <h1>{t.ranks.title}</h1>
      <Card>
        <p class="field">
          <label for="ranked-mode">{t.ranks.mode}</label>
          <select id="ranked-mode" value={String(chosen)}
            onChange={(e) => { setChosen(Number((e.target as HTMLSelectElement).value)); setOffset(0); }}>
            {ranked.map((r, i) => <option value={String(i)}>{`${r.game.title} · ${modeLabel(r.mode)}`}</option>)}
          </select>
        </p>
        {!pick ? <p class="muted">{t.ranks.noRanked}</p> : null}
      </Card>
      <Card title={t.ranks.leaderboard} class="leaderboard">
        <ErrorNote error={error} />
        {board === null ? <p>{t.loading}</p> : board.entries.length === 0 ? <p class="muted">{t.ranks.empty}</p> : (
          <div class="scroll" role="region" tabIndex={0} aria-label={t.ranks.leaderboard}>
            <table>
              <thead>
                <tr><th scope="col">{t.ranks.position}</th><th scope="col">{t.ranks.player}</th>
                  <th scope="col">{t.ranks.rating}</th><th scope="col">{t.ranks.games}</th></tr>
              </thead>
              <tbody>
                {board.entries.map((entry) => (
                  <tr data-user={entry.user_id} class={entry.user_id === client.user?.id ? "mine" : undefined}>
                    <td>{entry.position}</td>
                    <td>{person(entry.user_id, entry.name)}</td>
                    <td>{entry.rating ? ratingText(entry.rating) : "—"}</td>
                    <td>{entry.rating?.games ?? 0}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {board && board.total > PAGE ? (
          <p class="actions">
            <button type="button" class="quiet" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>{t.ranks.previous}</button>
            <span class="muted">{t.ranks.showing(offset + 1, Math.min(offset + PAGE, board.total), board.total)}</span>
            <button type="button" class="quiet" disabled={offset + PAGE >= board.total} onClick={() => setOffset(offset + PAGE)}>{t.ranks.next}</button>
          </p>
        ) : null}
      </Card>
      {league ? (
        <Card title={t.ranks.league(league.season)} class="league">
          <p class="muted">{t.ranks.seasonEnds(new Date(league.ends_at * 1000).toLocaleDateString())}</p>
          {league.divisions.every((d) => d.standings.length === 0) ? <p class="muted">{t.ranks.leagueEmpty}</p> : null}
          {league.divisions.filter((d) => d.standings.length).map((division) => (
            <section>
              <h3>{t.ranks.division(division.number)}</h3>
              <div class="scroll" role="region" tabIndex={0} aria-label={t.ranks.division(division.number)}>
                <table>
                  <thead>
                    <tr><th scope="col">{t.ranks.position}</th><th scope="col">{t.ranks.player}</th>
                      <th scope="col">{t.ranks.points}</th><th scope="col">{t.ranks.played}</th></tr>
                  </thead>
                  <tbody>
                    {division.standings.map((s) => (
                      <tr><td>{s.place}</td><td>{person(s.user_id, s.name)}</td><td>{formatNumber(s.points, 1)}</td><td>{s.played}</td></tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </section>
          ))}
          {league.last_moves.length ? <p class="muted">{t.ranks.moves(league.last_moves.length)}</p> : null}
        </Card>
      ) : null}
    </div>
  );
}

/** "1520 ± 80" (provisional while the deviation is large). */
export function ratingText(rating: Schemas["rodada.platform.v1.Rating"]): string {
  const text = `${formatNumber(rating.rating)} ± ${formatNumber(rating.deviation)}`;
  return rating.provisional ? `${text} (${t.ranks.provisional})` : text;
}
