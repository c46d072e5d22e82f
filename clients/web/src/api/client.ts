/**
 * Rodada's HTTP API, one method per operation of /openapi.json, each typed
 * from the generated schema by its path and method (types.ts): the session
 * (guest, sign-up, log-in; refreshed once on a 401), games, tables and
 * invites, play, matchmaking and parties, standings and histories, friends,
 * blocks, private and table chat, reports, trophies, tournaments and leagues.
 * The feeds are feed.ts. No framework: `fetch` and `WebSocket`, the
 * browser's or Node's (pass `ws` as `WebSocket` on Node 20).
 */
import {
  type FeedOptions,
  SocialFeed,
  type SocialFeedHandlers,
  TableFeed,
  type TableFeedHandlers,
  TicketFeed,
  type TicketFeedHandlers,
  TournamentFeed,
  type TournamentFeedHandlers,
} from "./feed";
import type {
  Action,
  ApiError,
  MethodOf,
  Options,
  Path,
  PathParams,
  Query,
  Question,
  Reply,
  RequestBody,
  Session,
  User,
} from "./types";

/**
 * Every refusal: the HTTP status, the error envelope's stable `code` to switch
 * on (`not_your_turn`, `stale_version`, `rate_limited`, …), a message for
 * people, and for a 429 or 503 the seconds to wait (`Retry-After`).
 */
export class ApiRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = "ApiRefused";
  }
}

/** Where a session is kept between page loads (localStorage in a browser). */
export interface SessionStore {
  load(): Session | null;
  save(session: Session | null): void;
}

export class MemoryStore implements SessionStore {
  private session: Session | null = null;
  load(): Session | null {
    return this.session;
  }
  save(session: Session | null): void {
    this.session = session;
  }
}

export interface ClientOptions {
  /** The `fetch` to call (the global one by default). */
  fetch?: typeof fetch;
  /** The WebSocket class for the feeds (the global one; `ws`'s on Node 20). */
  WebSocket?: typeof WebSocket;
}

/** Refresh this long before the access token expires. */
const REFRESH_MARGIN_MS = 60_000;

/**
 * What one call sends: its path parameters, query and body, as its operation
 * types them. A body with nothing required (every body: the gateway reads a
 * missing one as the request message's defaults) may be left out.
 */
type Call<P extends Path, M extends MethodOf<P>> = (keyof PathParams<P, M> extends never
  ? { path?: never }
  : { path: PathParams<P, M> }) &
  ([RequestBody<P, M>] extends [never]
    ? { body?: never }
    : Record<never, never> extends RequestBody<P, M>
      ? { body?: RequestBody<P, M> }
      : { body: RequestBody<P, M> }) & {
    query?: Query<P, M>;
  };

/** A page of a list (`offset` from 0, `limit` from 1 to the server's maximum). */
export type Page = Query<"/v1/users/{user_id}/matches", "get">;

export class Client {
  private session: Session | null;
  private expiresAt = 0;
  private refreshing: Promise<Session> | null = null;
  private readonly fetch: typeof fetch;
  /** The WebSocket class the feeds use. */
  readonly WebSocket: typeof WebSocket;

  /** `base` is the gateway's origin ("" for the page's own). */
  constructor(
    readonly base: string = "",
    private readonly store: SessionStore = new MemoryStore(),
    options: ClientOptions = {},
  ) {
    // Called unbound, the browser's fetch throws "Illegal invocation".
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket;
    this.session = store.load();
    // A stored session's age is unknown: use its access token until it is
    // refused (a 401 refreshes it), rather than refreshing on every page load.
    this.expiresAt = Infinity;
  }

  get user(): User | null {
    return this.session?.user ?? null;
  }

  get accessToken(): string | null {
    return this.session?.access_token ?? null;
  }

  /** The WebSocket URL of a path on the gateway. */
  socketUrl(path: string): string {
    const origin = this.base || globalThis.location.origin;
    return origin.replace(/^http/, "ws") + path;
  }

  // -- the session --

  async guest(name?: string): Promise<Session> {
    return this.keep(await this.send("post", "/v1/auth/guest", { body: name ? { name } : {} }, false));
  }

  async signUp(username: string, password: string): Promise<Session> {
    return this.keep(await this.send("post", "/v1/auth/register", { body: { username, password } }, false));
  }

  async logIn(username: string, password: string): Promise<Session> {
    return this.keep(await this.send("post", "/v1/auth/login", { body: { username, password } }, false));
  }

  logOut(): void {
    this.session = null;
    this.store.save(null);
  }

  /** A fresh access token (refreshing first if it is about to expire). */
  async token(): Promise<string> {
    if (!this.session) throw new ApiRefused(401, "unauthenticated", "not logged in");
    if (Date.now() >= this.expiresAt - REFRESH_MARGIN_MS) await this.refresh();
    return this.session.access_token;
  }

  /**
   * A new session for the refresh token. Each refresh token works once, so
   * concurrent callers share one refresh, and a session another tab already
   * refreshed (the store holds a newer one) is adopted instead. A refused
   * refresh logs out.
   */
  refresh(): Promise<Session> {
    if (!this.refreshing) {
      const refreshToken = this.session?.refresh_token;
      const stored = this.store.load();
      if (stored && refreshToken && stored.refresh_token !== refreshToken) {
        this.session = stored;
        this.expiresAt = Infinity;
        return Promise.resolve(stored);
      }
      this.refreshing = (async () => {
        try {
          if (!refreshToken) throw new ApiRefused(401, "unauthenticated", "not logged in");
          const body = { refresh_token: refreshToken };
          return this.keep(await this.send("post", "/v1/auth/refresh", { body }, false));
        } catch (error) {
          if (error instanceof ApiRefused && error.status === 401) this.logOut();
          throw error;
        } finally {
          this.refreshing = null;
        }
      })();
    }
    return this.refreshing;
  }

  private keep(session: Session): Session {
    this.session = session;
    this.expiresAt = Date.now() + session.expires_in * 1000;
    this.store.save(session);
    return session;
  }

  me() {
    return this.send("get", "/v1/me", {});
  }

  // -- the service --

  /** Ready to serve (503 `Retry-After` while Redis is away or the replica drains). */
  health() {
    return this.send("get", "/healthz", {}, false);
  }

  /** The process answers (liveness). */
  live() {
    return this.send("get", "/livez", {}, false);
  }

  // -- games and tables --

  async games() {
    return (await this.send("get", "/v1/games", {}, false)).games;
  }

  createTable(game: string, seats: number, options: Options = {}, cpuSeats: number[] = []) {
    return this.send("post", "/v1/tables", { body: { game, seats, options: wire(options), cpu_seats: cpuSeats } });
  }

  table(tableId: string) {
    return this.send("get", "/v1/tables/{table_id}", { path: { table_id: tableId } });
  }

  /** A game's open tables with a free seat, oldest first. */
  async openTables(game: string) {
    return (await this.send("get", "/v1/tables", { query: { game } })).tables;
  }

  /** Take a free seat with an invite code. */
  join(inviteCode: string) {
    return this.send("post", "/v1/tables/join", { body: { invite_code: inviteCode } });
  }

  /** Sit at an open table (any free seat without `seat`); the last seat taken starts the match. */
  sit(tableId: string, seat?: number) {
    return this.send("post", "/v1/tables/{table_id}/sit", {
      path: { table_id: tableId },
      body: seat === undefined ? {} : { seat },
    });
  }

  /** Host only: an invite for any free seat, or for a free seat of `team`. */
  invite(tableId: string, team?: string) {
    return this.send("post", "/v1/tables/{table_id}/invites", {
      path: { table_id: tableId },
      body: team ? { team } : {},
    });
  }

  revokeInvite(tableId: string, code: string) {
    return this.send("delete", "/v1/tables/{table_id}/invites/{code}", { path: { table_id: tableId, code } });
  }

  /** Host only, before the start: per seat, a seated player's id or null for a free seat. */
  arrangeSeats(tableId: string, seats: RequestBody<"/v1/tables/{table_id}/seats", "put">["seats"]) {
    return this.send("put", "/v1/tables/{table_id}/seats", { path: { table_id: tableId }, body: { seats } });
  }

  start(tableId: string) {
    return this.send("post", "/v1/tables/{table_id}/start", { path: { table_id: tableId } });
  }

  /** Before the start, free the seat; during the match, the game's leaving policy. */
  leave(tableId: string) {
    return this.send("post", "/v1/tables/{table_id}/leave", { path: { table_id: tableId } });
  }

  // -- play --

  view(tableId: string) {
    return this.send("get", "/v1/tables/{table_id}/view", { path: { table_id: tableId } });
  }

  /** One action, decided on the snapshot at `expectedVersion` (409 `stale_version` if it moved on). */
  act(tableId: string, expectedVersion: number, action: Action) {
    return this.send("post", "/v1/tables/{table_id}/actions", {
      path: { table_id: tableId },
      body: { expected_version: expectedVersion, action },
    });
  }

  /** A question that changes nothing (Dudo's odds, the advisors' advice). */
  ask(tableId: string, question: Question) {
    return this.send("post", "/v1/tables/{table_id}/ask", { path: { table_id: tableId }, body: { question } });
  }

  /** The seated players with a feed open on the table. */
  async presence(tableId: string) {
    return (await this.send("get", "/v1/tables/{table_id}/presence", { path: { table_id: tableId } })).connected;
  }

  /** A table's feed: its history from `afterEventId`, then live (feed.ts). */
  followTable(tableId: string, handlers: TableFeedHandlers, afterEventId = 0, options?: FeedOptions): TableFeed {
    return new TableFeed(this, tableId, handlers, afterEventId, options);
  }

  // -- matchmaking --

  /** Queue; follow the ticket (followTicket) within the grace period or it is dropped. */
  findMatch(game: string, options: Options = {}, ranked = false, party = false) {
    return this.send("post", "/v1/matchmaking/tickets", { body: { game, options: wire(options), ranked, party } });
  }

  /** Join a friend's party with the code their ticket carries. */
  joinParty(partyCode: string) {
    return this.send("post", "/v1/matchmaking/parties/join", { body: { party_code: partyCode } });
  }

  ticket(ticketId: string) {
    return this.send("get", "/v1/matchmaking/tickets/{ticket_id}", { path: { ticket_id: ticketId } });
  }

  cancelTicket(ticketId: string) {
    return this.send("delete", "/v1/matchmaking/tickets/{ticket_id}", { path: { ticket_id: ticketId } });
  }

  /** A ticket's feed; the open socket keeps the ticket in the queue. */
  followTicket(ticketId: string, handlers: TicketFeedHandlers, options?: FeedOptions): TicketFeed {
    return new TicketFeed(this, ticketId, handlers, options);
  }

  // -- standings and histories --

  leaderboard(game: string, mode: string, page: Page = {}) {
    return this.send("get", "/v1/leaderboards/{game}/{mode}", { path: { game, mode }, query: page });
  }

  async ratings(userId: string) {
    return (await this.send("get", "/v1/users/{user_id}/ratings", { path: { user_id: userId } })).ratings;
  }

  ratingHistory(userId: string, game: string, mode: string, page: Page = {}) {
    return this.send("get", "/v1/users/{user_id}/ratings/{game}/{mode}/history", {
      path: { user_id: userId, game, mode },
      query: page,
    });
  }

  matchHistory(userId: string, page: Page = {}) {
    return this.send("get", "/v1/users/{user_id}/matches", { path: { user_id: userId }, query: page });
  }

  // -- friends and blocks --

  /** Friends with presence, requests both ways, and the users blocked. */
  friends() {
    return this.send("get", "/v1/social/friends", {});
  }

  /** Ask `{user_id}` or `{username}` to be friends (friends at once if they had asked). */
  requestFriend(who: RequestBody<"/v1/social/friends/requests", "post">) {
    return this.send("post", "/v1/social/friends/requests", { body: who });
  }

  acceptFriend(userId: string) {
    return this.send("post", "/v1/social/friends/{user_id}/accept", { path: { user_id: userId } });
  }

  /** Decline a request, or withdraw your own. */
  declineFriend(userId: string) {
    return this.send("post", "/v1/social/friends/{user_id}/decline", { path: { user_id: userId } });
  }

  removeFriend(userId: string) {
    return this.send("delete", "/v1/social/friends/{user_id}", { path: { user_id: userId } });
  }

  /** Invite a friend to the table you sit at (Dominó: the seat opposite). */
  inviteFriend(userId: string, tableId: string) {
    return this.send("post", "/v1/social/friends/{user_id}/invite", {
      path: { user_id: userId },
      body: { table_id: tableId },
    });
  }

  block(userId: string) {
    return this.send("put", "/v1/social/blocks/{user_id}", { path: { user_id: userId } });
  }

  unblock(userId: string) {
    return this.send("delete", "/v1/social/blocks/{user_id}", { path: { user_id: userId } });
  }

  // -- chat and reports (chat text is plain text: render it as text, never as HTML) --

  sendMessage(userId: string, text: string) {
    return this.send("post", "/v1/social/messages/{user_id}", { path: { user_id: userId }, body: { text } });
  }

  /** The private messages with a friend, oldest first (the newest `limit`). */
  async messages(userId: string, limit?: number) {
    const query = limit === undefined ? {} : { limit };
    return (await this.send("get", "/v1/social/messages/{user_id}", { path: { user_id: userId }, query })).messages;
  }

  /** Say something at a table: to its players if seated, else to its spectators. */
  sendTableMessage(tableId: string, text: string) {
    return this.send("post", "/v1/tables/{table_id}/chat", { path: { table_id: tableId }, body: { text } });
  }

  /** Your channel of a table's chat, oldest first. */
  async tableMessages(tableId: string, limit?: number) {
    const query = limit === undefined ? {} : { limit };
    return (await this.send("get", "/v1/tables/{table_id}/chat", { path: { table_id: tableId }, query })).messages;
  }

  /** Report a message to the moderators. */
  report(report: RequestBody<"/v1/social/reports", "post">) {
    return this.send("post", "/v1/social/reports", { body: report });
  }

  /** Your social feed: private messages, friend notices, table invites (feed.ts). */
  followSocial(handlers: SocialFeedHandlers, afterId = "", options?: FeedOptions): SocialFeed {
    return new SocialFeed(this, handlers, afterId, options);
  }

  // -- moderation (moderators and admins; roles are read at each call) --

  /** Admins: make an account a moderator. */
  grantModerator(userId: string) {
    return this.send("put", "/v1/moderation/moderators/{user_id}", { path: { user_id: userId }, body: {} });
  }

  /** Admins: make a moderator a plain user again. */
  revokeModerator(userId: string) {
    return this.send("delete", "/v1/moderation/moderators/{user_id}", { path: { user_id: userId } });
  }

  /** The reports, oldest first: open ones (taken or not), or resolved ones. */
  reports(query: { resolved?: boolean; offset?: number; limit?: number } = {}) {
    return this.send("get", "/v1/moderation/reports", { query });
  }

  /** Take an open report: it is yours to resolve. */
  takeReport(reportId: string) {
    return this.send("post", "/v1/moderation/reports/{report_id}/take", { path: { report_id: reportId }, body: {} });
  }

  /** Resolve a report you took. */
  resolveReport(reportId: string, resolution: string) {
    return this.send("post", "/v1/moderation/reports/{report_id}/resolve", {
      path: { report_id: reportId },
      body: { resolution },
    });
  }

  /** Mute a user's chat for `seconds`. */
  mute(userId: string, seconds: number, reason = "") {
    return this.send("post", "/v1/moderation/users/{user_id}/mute", {
      path: { user_id: userId },
      body: { seconds, reason },
    });
  }

  /** Ban a user: sign-in and tokens refused, feeds ended, on every replica. */
  ban(userId: string, reason = "") {
    return this.send("post", "/v1/moderation/users/{user_id}/ban", { path: { user_id: userId }, body: { reason } });
  }

  /** Lift a ban. */
  unban(userId: string) {
    return this.send("delete", "/v1/moderation/users/{user_id}/ban", { path: { user_id: userId } });
  }

  /** Remove a chat message from its history and the table's replay. */
  removeMessage(message: RequestBody<"/v1/moderation/messages/remove", "post">) {
    return this.send("post", "/v1/moderation/messages/remove", { body: message });
  }

  /** Every moderator action, newest first. */
  async auditLog(page: Page = {}) {
    return (await this.send("get", "/v1/moderation/audit", { query: page })).entries;
  }

  // -- trophies, tournaments, leagues --

  /** Every trophy there is to win. */
  async trophyKinds() {
    return (await this.send("get", "/v1/trophies", {})).kinds;
  }

  /** A player's trophies, oldest first. */
  async trophies(userId: string) {
    return (await this.send("get", "/v1/users/{user_id}/trophies", { path: { user_id: userId } })).trophies;
  }

  /** Tournaments, newest first, of a game and in a status (`TOURNAMENT_STATUS_REGISTRATION`, …). */
  async tournaments(filter: Query<"/v1/tournaments", "get"> = {}) {
    return (await this.send("get", "/v1/tournaments", { query: filter })).tournaments;
  }

  tournament(tournamentId: string) {
    return this.send("get", "/v1/tournaments/{tournament_id}", { path: { tournament_id: tournamentId } });
  }

  /** Admin only: announce a tournament. */
  createTournament(tournament: Omit<RequestBody<"/v1/tournaments", "post">, "options"> & { options?: Options }) {
    return this.send("post", "/v1/tournaments", { body: { ...tournament, options: wire(tournament.options ?? {}) } });
  }

  /** Register; in partnership games the first of a team gets a `team_code` for the partner. */
  registerForTournament(tournamentId: string, teamCode?: string) {
    return this.send("post", "/v1/tournaments/{tournament_id}/register", {
      path: { tournament_id: tournamentId },
      body: teamCode ? { team_code: teamCode } : {},
    });
  }

  /** Leave before the start (the whole team). */
  withdrawFromTournament(tournamentId: string) {
    return this.send("post", "/v1/tournaments/{tournament_id}/withdraw", { path: { tournament_id: tournamentId } });
  }

  /** Admin only: start now rather than at the start time. */
  startTournament(tournamentId: string) {
    return this.send("post", "/v1/tournaments/{tournament_id}/start", { path: { tournament_id: tournamentId } });
  }

  /** Admin only: call a tournament off (tables playing play on, unscored). */
  cancelTournament(tournamentId: string) {
    return this.send("post", "/v1/tournaments/{tournament_id}/cancel", { path: { tournament_id: tournamentId } });
  }

  /** Admin only: change a tournament before its start (the fields given; the rest stays). */
  editTournament(tournamentId: string, changes: RequestBody<"/v1/tournaments/{tournament_id}/edit", "post">) {
    return this.send("post", "/v1/tournaments/{tournament_id}/edit", { path: { tournament_id: tournamentId }, body: changes });
  }

  /** Admin only: a recurring tournament (e.g. a daily Swiss), announced before each start. */
  createTournamentSchedule(schedule: Omit<RequestBody<"/v1/tournament-schedules", "post">, "options"> & { options?: Options }) {
    return this.send("post", "/v1/tournament-schedules", { body: { ...schedule, options: wire(schedule.options ?? {}) } });
  }

  /** Admin only: every recurring tournament's schedule. */
  async tournamentSchedules() {
    return (await this.send("get", "/v1/tournament-schedules", {})).schedules;
  }

  /** Admin only: end a schedule (tournaments announced already go on). */
  deleteTournamentSchedule(scheduleId: string) {
    return this.send("delete", "/v1/tournament-schedules/{schedule_id}", { path: { schedule_id: scheduleId } });
  }

  /** Admin only: take an entrant (a no-show) off the list before the start. */
  removeEntrant(tournamentId: string, entrantId: string) {
    return this.send("post", "/v1/tournaments/{tournament_id}/entrants/{entrant_id}/remove", {
      path: { tournament_id: tournamentId, entrant_id: entrantId },
    });
  }

  /** A tournament now and after every change, until it is over (feed.ts). */
  followTournament(tournamentId: string, handlers: TournamentFeedHandlers, options?: FeedOptions): TournamentFeed {
    return new TournamentFeed(this, tournamentId, handlers, options);
  }

  /** A ranked mode's current season: standings per division and the last moves. */
  league(game: string, mode: string) {
    return this.send("get", "/v1/leagues/{game}/{mode}", { path: { game, mode } });
  }

  // -- the transport --

  /**
   * One operation, by its path and method as /openapi.json names them. With
   * `auth`, a 401 refreshes the session once and tries again.
   */
  private async send<P extends Path, M extends MethodOf<P>>(
    method: M,
    path: P,
    call: Call<P, M>,
    auth = true,
  ): Promise<Reply<P, M>> {
    const url = this.base + fill(path, call.path ?? {}) + search(call.query ?? {});
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const attempt = async (token: string | null): Promise<Response> => {
      const headers: Record<string, string> = {};
      if (body !== undefined) headers["content-type"] = "application/json";
      if (token !== null) headers["authorization"] = `Bearer ${token}`;
      return this.fetch(url, { method: method.toUpperCase(), headers, body });
    };
    const token = auth ? await this.token() : null;
    let response = await attempt(token);
    if (response.status === 401 && token !== null && this.session) {
      // Unless a concurrent call already refreshed it, refresh once, then try again.
      if (this.session.access_token === token) await this.refresh();
      response = await attempt(await this.token());
    }
    const text = await response.text();
    if (!response.ok) throw refusal(response, text);
    return (text ? JSON.parse(text) : undefined) as Reply<P, M>;
  }
}

/**
 * Options as the schema types them, every field present; on the wire (proto
 * JSON) a field left out takes its default, which is what `Options` allows.
 */
function wire(options: Options): Required<RequestBody<"/v1/tables", "post">>["options"] {
  return options as Required<RequestBody<"/v1/tables", "post">>["options"];
}

/** A path with its `{parameters}` filled in, each escaped. */
function fill(template: string, parameters: object): string {
  const values = parameters as Record<string, string | number>;
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new TypeError(`${template}: missing ${name}`);
    return encodeURIComponent(String(value));
  });
}

function search(query: object): string {
  const defined = Object.entries(query).filter(([, value]) => value !== undefined && value !== "");
  return defined.length ? `?${new URLSearchParams(defined.map(([k, v]) => [k, String(v)]))}` : "";
}

/** The error a refused response is: its envelope's code, or the status's when it has none. */
function refusal(response: Response, text: string): ApiRefused {
  let error: Partial<ApiError["error"]> | undefined;
  try {
    error = (JSON.parse(text) as Partial<ApiError>).error;
  } catch {
    error = undefined; // not JSON: a proxy's page, say
  }
  return new ApiRefused(
    response.status,
    error?.code ?? "http_error",
    error?.message ?? (response.statusText || `HTTP ${response.status}`),
    retryAfter(response.headers.get("retry-after")),
  );
}

/** Retry-After in seconds, from its seconds or its HTTP-date form. */
function retryAfter(header: string | null): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}
