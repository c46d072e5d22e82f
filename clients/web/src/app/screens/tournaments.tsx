/** Tournaments: the list (by status), and one tournament followed live on
 * its feed — registering (in partnership games the first of a team gets a
 * code for the partner, who registers with it), withdrawing, an admin's
 * start, each round's tables (yours to play, the others to watch), the
 * Swiss standings or the elimination bracket, to the final places. */
import { useEffect, useState } from "preact/hooks";
import type { Tournament } from "../../api/types";
import type { Go } from "../app";
import { list, t } from "../i18n";
import { client, errorText, gameTitle, isGuest } from "../session";
import { social, useSocial } from "../social";
import { Card, ErrorNote, useAction } from "../ui/parts";
import { modeLabel } from "./lobby";

type Status = Tournament["status"];
type Round = Tournament["rounds"][number];
const STATUSES: Status[] = ["TOURNAMENT_STATUS_REGISTRATION", "TOURNAMENT_STATUS_RUNNING", "TOURNAMENT_STATUS_FINISHED"];

export function TournamentsScreen({ go }: { go: Go }) {
  const [status, setStatus] = useState<Status | "">("");
  const [found, setFound] = useState<Tournament[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setFound(null);
    client.tournaments(status ? { status } : {}).then(setFound, (failure: unknown) => setError(errorText(failure)));
  }, [status]);
  return (
    <div class="community tournaments">
      <h1>{t.tournaments.title}</h1>
      <Notices go={go} />
      <Card>
        <p class="field">
          <label for="tournament-status">{t.tournaments.show}</label>
          <select id="tournament-status" value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value as Status)}>
            <option value="">{t.tournaments.all}</option>
            {STATUSES.map((s) => <option value={s}>{t.tournaments.statuses[s]}</option>)}
          </select>
        </p>
        <ErrorNote error={error} />
        {found === null ? <p>{t.loading}</p> : found.length === 0 ? <p class="muted">{t.tournaments.none}</p> : (
          <ul class="tournament-list">
            {found.map((tour) => (
              <li data-tournament={tour.id}>
                <a href={`/?tournament=${encodeURIComponent(tour.id)}`}
                  onClick={(e) => { e.preventDefault(); go({ name: "tournament", tournamentId: tour.id }); }}>
                  {tour.name}
                </a>{" "}
                <span class="muted">{summary(tour)}</span>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}

/** The social feed's notices about the player's registrations (only the
 * tournament `only`'s, when given), each with a way to it and to dismiss it. */
export function Notices({ go, only }: { go: Go; only?: string }) {
  const { notices } = useSocial();
  const shown = notices.filter((n) => !only || n.tournament_id === only);
  if (!shown.length) return null;
  return (
    <section class="card tournament-notices" aria-labelledby="tournament-notices-title">
      <h2 id="tournament-notices-title">{t.tournaments.noticesTitle}</h2>
      <ul>
        {shown.map((notice) => (
          <li data-notice={notice.kind} data-tournament={notice.tournament_id}>
            {notice.kind === "TOURNAMENT_NOTICE_KIND_PARTNER_WITHDREW" ? (
              <>
                {t.tournaments.partnerWithdrew(notice.name, notice.tournament_name)}{" "}
                {notice.team_code ? <>{t.tournaments.newPartnerCode}: <code class="team-code">{notice.team_code}</code>.</> : null}
              </>
            ) : t.tournaments.removed(notice.name, notice.tournament_name)}{" "}
            {only ? null : (
              <a href={`/?tournament=${encodeURIComponent(notice.tournament_id)}`}
                onClick={(e) => { e.preventDefault(); go({ name: "tournament", tournamentId: notice.tournament_id }); }}>
                {t.tournaments.open}
              </a>
            )}{" "}
            <button type="button" class="quiet" data-action="dismiss-notice" onClick={() => social.dismissNotice(notice)}>
              {t.tournaments.dismiss}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function summary(tour: Tournament): string {
  return [
    `${gameTitle(tour.game)} · ${modeLabel(tour.mode)}`,
    t.tournaments.formats[tour.format] ?? tour.format,
    t.tournaments.statuses[tour.status] ?? tour.status,
    t.tournaments.entrants(tour.entrants.length, tour.max_entrants),
  ].join(" · ");
}

export function TournamentScreen({ tournamentId, go }: { tournamentId: string; go: Go }) {
  const [tour, setTour] = useState<Tournament | null>(null);
  const [feed, setFeed] = useState<"connecting" | "live" | "over">("connecting");
  const [teamCode, setTeamCode] = useState("");
  const [myCode, setMyCode] = useState<string | null>(null);
  const action = useAction();
  useEffect(() => {
    client.tournament(tournamentId).then((found) => setTour((known) => known ?? found),
      (failure: unknown) => action.setError(errorText(failure)));
    const feed = client.followTournament(tournamentId, {
      tournament: (next) => setTour(next),
      connected: () => setFeed("live"),
      disconnected: (_code, _reason, retry) => setFeed((now) => (now === "over" || retry === null ? now : "connecting")),
      end: () => setFeed("over"),
    });
    return () => feed.close();
  }, [tournamentId]);
  if (!tour) return <Card><p>{t.loading}</p><ErrorNote error={action.error} /></Card>;

  const me = client.user?.id ?? "";
  const names = (entrantId: string) => list(tour.entrants.find((e) => e.id === entrantId)?.players.map((p) => p.name) ?? [entrantId]);
  const mine = tour.entrants.find((e) => e.players.some((p) => p.user_id === me));
  const registering = tour.status === "TOURNAMENT_STATUS_REGISTRATION";
  const elimination = tour.format === "TOURNAMENT_FORMAT_SINGLE_ELIMINATION";
  const register = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      const reply = await client.registerForTournament(tour.id, teamCode.trim() || undefined);
      if (reply.team_code) setMyCode(reply.team_code);
      setTour(await client.tournament(tour.id));
    });
  };
  return (
    <div class="community tournament" data-status={tour.status}>
      <h1>{tour.name}</h1>
      <Notices go={go} only={tour.id} />
      <Card>
        <p>{summary(tour)}</p>
        <p class="muted">
          {tour.rounds_planned ? t.tournaments.round(tour.current_round, tour.rounds_planned) : t.tournaments.notStarted}
          {feed === "over" ? null : (
            <>
              {" · "}
              <span id="tournament-live" role="status">{feed === "live" ? t.tournaments.live : t.tournaments.connecting}</span>
            </>
          )}
        </p>
        {registering ? (
          mine ? (
            <>
              <p class="registered">{mine.complete ? t.tournaments.registered : t.tournaments.waitingPartner}</p>
              {myCode ? <p class="notice">{t.tournaments.teamCode(myCode)} <code id="team-code">{myCode}</code></p> : null}
              <button type="button" data-action="withdraw" disabled={action.busy}
                onClick={() => action.run(async () => { await client.withdrawFromTournament(tour.id); setMyCode(null); })}>
                {t.tournaments.withdraw}
              </button>
            </>
          ) : isGuest() ? <p class="muted">{t.tournaments.guest}</p> : (
            <form class="row" onSubmit={register}>
              {tour.team_size > 1 ? (
                <p class="field">
                  <label for="team-code-input">{t.tournaments.teamCodeLabel}</label>
                  <input id="team-code-input" value={teamCode} autocomplete="off" aria-describedby="team-code-hint"
                    onInput={(e) => setTeamCode((e.target as HTMLInputElement).value)} />
                  <span id="team-code-hint" class="muted">{t.tournaments.teamCodeHint}</span>
                </p>
              ) : null}
              <button type="submit" class="primary" data-action="register" disabled={action.busy}>{t.tournaments.register}</button>
            </form>
          )
        ) : null}
        {registering && client.user?.role === "admin" ? (
          <button type="button" data-action="start-tournament" disabled={action.busy}
            onClick={() => action.run(async () => setTour(await client.startTournament(tour.id)))}>
            {t.tournaments.start}
          </button>
        ) : null}
        <ErrorNote error={action.error} />
      </Card>
      {tour.standings.length ? (
        <Card title={tour.status === "TOURNAMENT_STATUS_FINISHED" ? t.tournaments.final : t.tournaments.standings} class="standings">
          <div class="scroll" role="region" tabIndex={0} aria-label={t.tournaments.standings}>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t.tournaments.place}</th>
                  <th scope="col">{t.tournaments.entrant}</th>
                  <th scope="col">{t.tournaments.score}</th>
                  {elimination ? null : <th scope="col">{t.tournaments.buchholz}</th>}
                </tr>
              </thead>
              <tbody>
                {tour.standings.map((s) => (
                  <tr data-place={s.place} class={s.entrant_id === mine?.id ? "mine" : undefined}>
                    <td>{t.ordinal(s.place)}</td>
                    <td>{names(s.entrant_id)}{s.eliminated ? <span class="muted"> · {t.tournaments.out}</span> : null}</td>
                    <td>{s.score}</td>
                    {elimination ? null : <td>{s.buchholz}</td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      ) : null}
      {tour.rounds.length ? (
        <Card title={elimination ? t.tournaments.bracket : t.tournaments.rounds} class="rounds">
          <div class={elimination ? "bracket scroll" : ""} role={elimination ? "region" : undefined}
            tabIndex={elimination ? 0 : undefined} aria-label={elimination ? t.tournaments.bracket : undefined}>
            {tour.rounds.map((round) => <RoundView round={round} mine={mine?.id} names={names} go={go} />)}
          </div>
        </Card>
      ) : null}
      {tour.entrants.length ? (
        <Card title={t.tournaments.entrants(tour.entrants.length, tour.max_entrants)} class="entrants">
          <ul>
            {tour.entrants.map((e) => (
              <li>{list(e.players.map((p) => p.name))}{e.complete ? "" : ` · ${t.tournaments.incomplete}`}</li>
            ))}
          </ul>
        </Card>
      ) : null}
    </div>
  );
}

function RoundView({ round, mine, names, go }: {
  round: Round; mine?: string; names: (entrantId: string) => string; go: Go;
}) {
  return (
    <section class="round" aria-label={t.tournaments.roundTitle(round.number)}>
      <h3>{t.tournaments.roundTitle(round.number)}</h3>
      <ol class="boards">
        {round.boards.map((board) => {
          const ours = mine !== undefined && board.entrant_ids.includes(mine);
          return (
            <li data-board={board.number} data-finished={board.finished ? "yes" : "no"} class={ours ? "mine" : undefined}>
              {board.entrant_ids.map((id, i) => (
                <span class={`side${board.finished && board.ranks[i] === 1 ? " winner" : ""}`}>
                  {names(id)}{board.finished ? ` (${board.points[i]})` : ""}
                </span>
              ))}
              <button type="button" class={ours && !board.finished ? "primary" : "quiet"} data-action={ours ? "play-board" : "watch-board"}
                onClick={() => go({ name: "table", tableId: board.table_id })}>
                {board.finished ? t.tournaments.see : ours ? t.tournaments.play : t.tournaments.watch}
              </button>
            </li>
          );
        })}
      </ol>
      {round.byes.length ? <p class="muted">{t.tournaments.byes(list(round.byes.map(names)))}</p> : null}
    </section>
  );
}
