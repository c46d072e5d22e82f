/** A player's profile: their ratings in each ranked mode with how each
 * changed, their matches (newest first, a page at a time) and their
 * trophies among every trophy there is. Anyone's, from a name; one's own
 * from the header. */
import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "../../api/types";
import type { Go } from "../app";
import { formatNumber, list, t } from "../i18n";
import { client, errorText, gameTitle, isGuest } from "../session";
import { Card, ErrorNote } from "../ui/parts";
import { ratingText } from "./leaderboards";
import { modeLabel } from "./lobby";

type GameRating = Schemas["rodada.platform.v1.GameRating"];
type Change = Schemas["rodada.platform.v1.RatingChange"];
type MatchRecord = Schemas["rodada.platform.v1.MatchRecord"];
type Trophy = Schemas["rodada.platform.v1.Trophy"];
type TrophyKind = Schemas["rodada.platform.v1.TrophyKind"];
const PAGE = 10;

export function ProfileScreen({ userId, userName, go }: { userId: string; userName: string; go: Go }) {
  const [ratings, setRatings] = useState<GameRating[] | null>(null);
  const [matches, setMatches] = useState<MatchRecord[] | null>(null);
  const [offset, setOffset] = useState(0);
  const [trophies, setTrophies] = useState<Trophy[] | null>(null);
  const [kinds, setKinds] = useState<TrophyKind[]>([]);
  const [error, setError] = useState<string | null>(null);
  const fail = (failure: unknown) => setError(errorText(failure));
  useEffect(() => {
    client.ratings(userId).then(setRatings, fail);
    client.trophies(userId).then(setTrophies, fail);
    client.trophyKinds().then(setKinds, () => undefined);
  }, [userId]);
  useEffect(() => {
    client.matchHistory(userId, { offset, limit: PAGE }).then((page) => setMatches(page.matches), fail);
  }, [userId, offset]);
  const own = userId === client.user?.id;
  const held = new Set((trophies ?? []).map((tr) => tr.kind?.id));
  return (
    <div class="community profile" data-user={userId}>
      <h1>{own ? t.profile.mine(userName) : t.profile.title(userName)}</h1>
      <ErrorNote error={error} />
      {own && isGuest() ? <p class="notice">{t.profile.guest}</p> : null}
      <Card title={t.profile.ratings} class="ratings">
        {ratings === null ? <p>{t.loading}</p> : ratings.length === 0 ? <p class="muted">{t.profile.noRatings}</p> : (
          <ul class="rating-list">
            {ratings.map((r) => <RatingRow userId={userId} rating={r} />)}
          </ul>
        )}
      </Card>
      <Card title={t.profile.matches} class="matches">
        {matches === null ? <p>{t.loading}</p> : matches.length === 0 && offset === 0 ? <p class="muted">{t.profile.noMatches}</p> : (
          <ol class="match-list">
            {matches.map((m) => (
              <li data-match={m.match_id}>
                <strong>{t.ordinal(m.rank)}</strong>{" "}
                {`${gameTitle(m.game)} · ${modeLabel(m.mode)}`}
                {m.ranked ? ` · ${t.profile.ranked}` : ""}
                {m.forfeited ? ` · ${t.profile.forfeited}` : ""}
                <br />
                <span class="muted">
                  {t.profile.with(list(m.players.filter((_, seat) => seat !== m.seat).map((p) => p.cpu ? `${p.name} (${t.cpu})` : p.name)))}
                  {" · "}{new Date(m.finished_at * 1000).toLocaleString()}
                </span>{" "}
                <button type="button" class="quiet small" onClick={() => go({ name: "table", tableId: m.match_id })}>
                  {t.profile.see}
                </button>
              </li>
            ))}
          </ol>
        )}
        <p class="actions">
          <button type="button" class="quiet" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>{t.ranks.previous}</button>
          <button type="button" class="quiet" disabled={(matches?.length ?? 0) < PAGE} onClick={() => setOffset(offset + PAGE)}>{t.ranks.next}</button>
        </p>
      </Card>
      <Card title={t.profile.trophies(held.size)} class="trophies">
        <ul class="trophy-list">
          {kinds.map((kind) => (
            <li data-trophy={kind.id} class={held.has(kind.id) ? "won" : "not-won"}>
              <span aria-hidden="true">{held.has(kind.id) ? "★" : "☆"}</span>{" "}
              <strong>{t.profile.trophyText[kind.id]?.[0] ?? kind.title}</strong>{held.has(kind.id) ? ` · ${t.profile.won}` : ""}
              <br /><span class="muted">{t.profile.trophyText[kind.id]?.[1] ?? kind.description}</span>
            </li>
          ))}
        </ul>
      </Card>
    </div>
  );
}

function RatingRow({ userId, rating }: { userId: string; rating: GameRating }) {
  const [history, setHistory] = useState<Change[] | null>(null);
  const [open, setOpen] = useState(false);
  const toggle = () => {
    setOpen(!open);
    if (!history) client.ratingHistory(userId, rating.game, rating.mode, { limit: 10 }).then((r) => setHistory(r.history), () => setHistory([]));
  };
  return (
    <li>
      <strong>{`${gameTitle(rating.game)} · ${modeLabel(rating.mode)}`}</strong>{": "}
      {rating.rating ? `${ratingText(rating.rating)} · ${t.profile.games(rating.rating.games)}` : "—"}{" "}
      <button type="button" class="quiet small" aria-expanded={open ? "true" : "false"} onClick={toggle}>
        {t.profile.history}
      </button>
      {open ? (
        history === null ? <p>{t.loading}</p> : (
          <ol class="rating-history">
            {history.map((change) => {
              const before = change.before?.rating ?? 0;
              const after = change.after?.rating ?? 0;
              const delta = after - before;
              return (
                <li>
                  {new Date(change.at * 1000).toLocaleString()}: {formatNumber(before)} → {formatNumber(after)}{" "}
                  <span class={delta >= 0 ? "up" : "down"}>({delta >= 0 ? "+" : "−"}{formatNumber(Math.abs(delta))})</span>
                </li>
              );
            })}
          </ol>
        )
      ) : null}
    </li>
  );
}
