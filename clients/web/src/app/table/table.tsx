/**
 * A table, drawn from its feed: before the match its seats, invites and the
 * start; then the game's board, the scores and whose turn it is; the result
 * with the match's seed; beside it the table chat and the log in plain words.
 * The feed reconnects by itself and resumes after the last event it had.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { TableFeed } from "../../api/feed";
import type { Action, GameInfo, MatchEvent, Snapshot, Table } from "../../api/types";
import type { Go } from "../app";
import { gameUi, rulesPage } from "../games";
import { type Board, type GameEvent, gameEvent } from "../games/types";
import { lang, rulesUrl, t } from "../i18n";
import { InviteFriends } from "../screens/friends";
import { modeLabel } from "../screens/lobby";
import { client, errorText } from "../session";
import { ErrorNote, useAction } from "../ui/parts";
import { Chat, type ChatMessage } from "./chat";
import { describe } from "./log";
import { Result, Scores } from "./result";

type Connection = "connecting" | "connected" | "reconnected" | "lost" | "refused" | "over";

const LOG_LENGTH = 200;

export function TableScreen({ tableId, games, go }: { tableId: string; games: GameInfo[]; go: Go }) {
  const [table, setTable] = useState<Table | null>(null);
  const [snapshot, setSnapshot] = useState<Snapshot | null>(null);
  const [events, setEvents] = useState<MatchEvent[]>([]);
  const [chat, setChat] = useState<ChatMessage[]>([]);
  const [connection, setConnection] = useState<{ state: Connection; why?: string }>({ state: "connecting" });
  const [inactiveAt, setInactiveAt] = useState<number | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const feed = useRef<TableFeed | null>(null);

  const takeSnapshot = (next: Snapshot) =>
    setSnapshot((shown) => (shown && next.version < shown.version ? shown : next));

  useEffect(() => {
    const opened = new TableFeed(client, tableId, {
      event: (event) => {
        if ("table" in event && event.table?.table) setTable(event.table.table);
        if ("notice" in event && event.notice?.kind === "NOTICE_KIND_INACTIVE") setInactiveAt(event.version);
        if ("chat" in event && event.chat) {
          const message = event.chat as ChatMessage;
          setChat((messages) => [...messages, message]);
          return;
        }
        setEvents((list) => (list.length >= LOG_LENGTH ? [...list.slice(1), event] : [...list, event]));
      },
      snapshot: takeSnapshot,
      table: setTable,
      connected: (resumed) => setConnection({ state: resumed ? "reconnected" : "connected" }),
      disconnected: (code, reason, retry) => {
        if (retry !== null) setConnection({ state: "lost" });
        else if (code !== 1000) setConnection({ state: "refused", why: reason || String(code) });
      },
      end: () => setConnection({ state: "over" }),
    });
    feed.current = opened;
    client.table(tableId).then((found) => setTable((known) => known ?? found), (error: unknown) => setFailure(errorText(error)));
    return () => opened.close();
  }, [tableId]);

  const gameName = snapshot?.game ?? table?.game ?? "";
  const info = games.find((g) => g.name === gameName);
  const me = client.user?.id;
  const name = (seat: number): string =>
    snapshot?.seats[seat]?.display_name || table?.players[seat]?.name || t.seat(seat);
  const seated = snapshot ? snapshot.seat >= 0 : !!table?.players.some((p) => p.user_id === me);
  const leaveToLobby = () => {
    feed.current?.close();
    go({ name: "lobby" });
  };

  const lines = useMemo(
    () => events.map((event) => ({ id: event.id, text: describe(event, gameName, name) })).filter((l) => l.text),
    [events, snapshot?.version, table, gameName, lang],
  );

  return (
    <div class="table-screen">
      <section class="card table-head">
        <h1>{t.table.title(info?.title ?? gameName, table?.mode && (info?.modes.length ?? 0) > 1 ? modeLabel(table.mode) : "")}</h1>
        <p class="muted">
          {t.table.id(tableId)}
          {gameName ? <> · <a href={rulesUrl(rulesPage(gameName))}>{t.table.rules}</a></> : null}
        </p>
        <p id="status" role="status" data-state={connection.state}
          class={connection.state === "lost" || connection.state === "refused" ? "error" : "muted"}>
          {statusText(connection.state, connection.why)}
        </p>
        <button type="button" class="quiet" data-action="lobby" onClick={leaveToLobby}>{t.table.back}</button>
        <ErrorNote error={failure} />
      </section>
      <div class="table-body">
        <div class="table-main">
          {!snapshot && table ? <TableLobby table={table} me={me} leave={leaveToLobby} takeSnapshot={takeSnapshot} /> : null}
          {snapshot ? (
            <Match tableId={tableId} snapshot={snapshot} info={info} table={table} name={name}
              inactiveAt={inactiveAt} events={events} takeSnapshot={takeSnapshot} />
          ) : null}
        </div>
        <aside class="table-side">
          <Chat tableId={tableId} messages={chat} seated={seated} closed={connection.state === "over"} />
          <section class="card log-card" aria-labelledby="log-title">
            <h2 id="log-title">{t.log.title}</h2>
            <ol class="log" tabIndex={0} aria-label={t.log.title}>
              {lines.length === 0 ? <li class="muted">{t.log.empty}</li>
                : [...lines].reverse().map((line) => <li key={line.id}>{line.text}</li>)}
            </ol>
          </section>
        </aside>
      </div>
    </div>
  );
}

function statusText(state: Connection, why?: string): string {
  switch (state) {
    case "connecting": return t.table.connecting;
    case "connected": return t.table.connected;
    case "reconnected": return t.table.reconnected;
    case "lost": return t.table.lost;
    case "refused": return t.table.refused(why ?? "");
    case "over": return t.table.over;
  }
}

function TableLobby({ table, me, leave, takeSnapshot }: {
  table: Table; me?: string; leave: () => void; takeSnapshot: (s: Snapshot) => void;
}) {
  const action = useAction();
  const [copied, setCopied] = useState(false);
  const seated = table.players.filter((p) => p.user_id || p.cpu).length;
  const host = table.host === me;
  const mine = table.players.some((p) => p.user_id === me);
  const link = table.invite_code ? `${location.origin}/?invite=${table.invite_code}` : "";
  const reload = () => client.table(table.id).then(() => undefined);
  const teamOf = (code: string) => teamName(table.invites.find((i) => i.code === code)?.team ?? "");
  const teamName = (team: string) => t.bozo.teams[team] ?? team;
  return (
    <section class="card table-lobby">
      <h2>{t.table.waiting(seated, table.seats)}</h2>
      <ol class="seats">
        {table.players.map((p, seat) => (
          <li class={p.user_id || p.cpu ? "taken" : "free"}>
            <span class="seat-number">{t.seat(seat)}</span>{" "}
            {p.user_id || p.cpu ? (
              <>
                <strong>{p.name}</strong>
                {p.cpu ? ` · ${t.cpu}` : ""}{p.user_id === table.host ? ` · ${t.host}` : ""}
                {p.user_id === me ? ` ${t.youMark}` : ""}
              </>
            ) : (
              <>
                <span class="muted">{t.table.free}</span>{" "}
                {!mine && table.open ? (
                  <button type="button" disabled={action.busy}
                    onClick={() => action.run(async () => { await client.sit(table.id, seat); })}>
                    {t.table.sitHere}
                  </button>
                ) : null}
              </>
            )}
          </li>
        ))}
      </ol>
      {link ? (
        <p class="invite">
          <label for="invite-link">{teamOf(table.invite_code ?? "") ? t.table.teamInvite(teamOf(table.invite_code ?? "")) : t.table.inviteLink}</label>
          <span class="copy-row">
            <input id="invite-link" readOnly value={link} onFocus={(e) => (e.target as HTMLInputElement).select()} />
            <button type="button" data-action="copy-invite"
              onClick={() => void navigator.clipboard?.writeText(link).then(() => setCopied(true))}>
              {t.table.copy}
            </button>
          </span>
          {copied ? <span role="status" class="muted">{t.table.copied}</span> : null}
        </p>
      ) : null}
      {host ? (
        <ul class="invites">
          {table.invites.filter((i) => i.code !== table.invite_code).map((i) => (
            <li>
              {i.team ? `${t.table.teamInvite(teamName(i.team))}: ` : ""}
              <code class="hex">{`${location.origin}/?invite=${i.code}`}</code>{" "}
              <button type="button" class="quiet" onClick={() => action.run(async () => {
                await client.revokeInvite(table.id, i.code);
                await reload();
              })}>{t.table.revoke}</button>
            </li>
          ))}
        </ul>
      ) : null}
      <div class="actions">
        {host && table.status === "open" && seated < table.seats && !table.open
          ? (table.teams.length ? table.teams.map((team) => team.name) : [""]).map((team) => (
              <button type="button" data-action="invite" disabled={action.busy}
                onClick={() => action.run(() => client.invite(table.id, team || undefined))}>
                {team ? t.table.newInviteFor(teamName(team)) : t.table.newInvite}
              </button>
            ))
          : null}
        {host ? (
          <button type="button" class="primary" data-action="start" disabled={seated < table.seats || action.busy}
            aria-describedby="start-hint" onClick={() => action.run(async () => takeSnapshot(await client.start(table.id)))}>
            {t.table.start}
          </button>
        ) : null}
        {mine ? (
          <button type="button" data-action="leave" disabled={action.busy}
            onClick={() => action.run(async () => { await client.leave(table.id); leave(); })}>
            {t.table.leave}
          </button>
        ) : null}
      </div>
      {mine && table.status === "open" && seated < table.seats ? <InviteFriends table={table} /> : null}
      <p id="start-hint" class="muted">{host ? (seated < table.seats ? t.table.startHint : "") : t.table.waitForHost}</p>
      <ErrorNote error={action.error} />
    </section>
  );
}

function Match({ tableId, snapshot, info, table, name, inactiveAt, events, takeSnapshot }: {
  tableId: string;
  snapshot: Snapshot;
  info?: GameInfo;
  table: Table | null;
  name: (seat: number) => string;
  inactiveAt: number | null;
  events: MatchEvent[];
  takeSnapshot: (s: Snapshot) => void;
}) {
  const [sentAt, setSentAt] = useState<number | null>(null);
  const [error, setError] = useState<{ version: number; text: string } | null>(null);
  const [, tick] = useState(0);
  const over = snapshot.status === "MATCH_STATUS_FINISHED";
  const myTurn = !over && snapshot.to_act.includes(snapshot.seat);
  const ui = gameUi(snapshot.game);

  // Redraw when the turn's deadline passes (the claim may then be offered).
  useEffect(() => {
    if (over || snapshot.deadline_at <= 0) return;
    const due = snapshot.deadline_at * 1000 - Date.now();
    if (due <= 0) return;
    const timer = setTimeout(() => tick((n) => n + 1), due + 50);
    return () => clearTimeout(timer);
  }, [snapshot.version, snapshot.deadline_at]);

  /** One action on the version shown; a second on the same version is ignored
   * (the feed may show the next version before the reply comes). */
  const act = (action: Action) => {
    if (sentAt === snapshot.version) return;
    const version = snapshot.version;
    setSentAt(version);
    setError(null);
    client.act(tableId, version, action).then(
      (next) => takeSnapshot(next),
      (failure: unknown) => {
        setSentAt(null);
        setError({ version, text: errorText(failure) });
      },
    );
  };
  const latest = useMemo(
    () => events.filter((e) => e.version === snapshot.version).map(gameEvent).filter((e): e is GameEvent => e !== null),
    [events, snapshot.version],
  );
  const board: Board = {
    snapshot,
    seat: snapshot.seat,
    myTurn,
    over,
    practice: (table?.options as { advice?: boolean } | undefined)?.advice === true,
    busy: sentAt === snapshot.version,
    name,
    act,
    ask: (question) => client.ask(tableId, question),
    latest,
  };
  const toAct = snapshot.to_act.map(name);
  const whoText = toAct.join(", ");
  const turn = over ? t.result.title : myTurn ? t.table.yourTurn
    : snapshot.seat < 0 ? t.table.watching(whoText) : t.table.toAct(whoText);
  const late = inactiveAt === snapshot.version || (snapshot.deadline_at > 0 && Date.now() / 1000 >= snapshot.deadline_at);
  const claimable = !over && late && snapshot.seat >= 0 && !myTurn && info?.claims !== "CLAIM_POLICY_NOBODY";
  const clock = !over && snapshot.deadline_at > 0
    ? (late ? t.table.outOfTime : t.table.toActBy(new Date(snapshot.deadline_at * 1000).toLocaleTimeString()))
    : "";
  const shownError = error && error.version === snapshot.version ? error.text : null;
  const teams = info?.modes.find((m) => m.name === (table?.mode ?? snapshot.mode))?.teams ?? [];

  return (
    <section class="card match" data-version={snapshot.version} data-game={snapshot.game} data-seat={snapshot.seat}>
      <p class="turn" data-turn={myTurn ? "mine" : over ? "over" : "other"}>
        <span aria-live="polite">{over ? "" : turn}</span>
        {clock ? <span class="muted"> · {clock}</span> : null}
      </p>
      <Scores snapshot={snapshot} name={name} teams={teams} />
      <ui.Board board={board} />
      <ErrorNote error={shownError} />
      {over ? <Result snapshot={snapshot} name={name} teams={teams} /> : null}
      <div class="actions">
        {claimable ? (
          <button type="button" data-action="claim" onClick={() => act({ claim_inactivity: {} } as Action)}>
            {info?.claims === "CLAIM_POLICY_OTHERS" ? t.table.remove : t.table.claim}
          </button>
        ) : null}
        {!over && snapshot.seat >= 0 ? (
          <button type="button" class="quiet" data-action="leave-match" onClick={() => {
            if (confirm(t.table.leaveConfirm)) {
              client.leave(tableId).then((reply) => reply.match && takeSnapshot(reply.match),
                (failure: unknown) => setError({ version: snapshot.version, text: errorText(failure) }));
            }
          }}>
            {t.table.leaveMatch}
          </button>
        ) : null}
      </div>
    </section>
  );
}
