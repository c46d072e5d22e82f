/**
 * A thin, typed layer over the gateway's HTTP API: the session (guest, sign-up,
 * log-in, refreshed once on a 401 and shortly before it expires), tables and
 * invites, matchmaking, and play with `expected_version`. The types are the
 * ones generated from /openapi.json (types.ts).
 */
import type {
  Action,
  GameInfo,
  Invite,
  Options,
  Question,
  Schemas,
  Session,
  Snapshot,
  Table,
  Ticket,
  User,
} from "./types";

/** A refusal: the HTTP status and the error envelope's stable code. */
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

/** Refresh this long before the access token expires. */
const REFRESH_MARGIN_MS = 60_000;

export class Client {
  private session: Session | null;
  private expiresAt = 0;
  private refreshing: Promise<Session> | null = null;

  /** `base` is the gateway's origin ("" for the page's own). */
  constructor(
    readonly base: string = "",
    private readonly store: SessionStore = new MemoryStore(),
  ) {
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
    return this.keep(await this.call<Session>("POST", "/v1/auth/guest", name ? { name } : {}, false));
  }

  async signUp(username: string, password: string): Promise<Session> {
    return this.keep(await this.call<Session>("POST", "/v1/auth/register", { username, password }, false));
  }

  async logIn(username: string, password: string): Promise<Session> {
    return this.keep(await this.call<Session>("POST", "/v1/auth/login", { username, password }, false));
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
   * refreshed (the store holds a newer one) is adopted instead.
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
          return this.keep(
            await this.call<Session>("POST", "/v1/auth/refresh", { refresh_token: refreshToken }, false),
          );
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

  me(): Promise<User> {
    return this.call("GET", "/v1/me");
  }

  // -- games and tables --

  async games(): Promise<GameInfo[]> {
    return (await this.call<Schemas["rodada.platform.v1.ListGamesResponse"]>("GET", "/v1/games", undefined, false))
      .games;
  }

  createTable(game: string, seats: number, options: Options = {}, cpuSeats: number[] = []): Promise<Table> {
    return this.call("POST", "/v1/tables", { game, seats, options, cpu_seats: cpuSeats });
  }

  table(tableId: string): Promise<Table> {
    return this.call("GET", `/v1/tables/${enc(tableId)}`);
  }

  async openTables(game: string): Promise<Table[]> {
    const reply = await this.call<Schemas["rodada.platform.v1.ListOpenTablesResponse"]>(
      "GET",
      `/v1/tables?game=${enc(game)}`,
    );
    return reply.tables;
  }

  join(inviteCode: string): Promise<Table> {
    return this.call("POST", "/v1/tables/join", { invite_code: inviteCode });
  }

  sit(tableId: string, seat?: number): Promise<Schemas["rodada.platform.v1.SitAtTableResponse"]> {
    return this.call("POST", `/v1/tables/${enc(tableId)}/sit`, seat === undefined ? {} : { seat });
  }

  invite(tableId: string, team?: string): Promise<Invite> {
    return this.call("POST", `/v1/tables/${enc(tableId)}/invites`, team ? { team } : {});
  }

  revokeInvite(tableId: string, code: string): Promise<void> {
    return this.call("DELETE", `/v1/tables/${enc(tableId)}/invites/${enc(code)}`);
  }

  start(tableId: string): Promise<Snapshot> {
    return this.call("POST", `/v1/tables/${enc(tableId)}/start`);
  }

  leave(tableId: string): Promise<Schemas["rodada.platform.v1.LeaveTableResponse"]> {
    return this.call("POST", `/v1/tables/${enc(tableId)}/leave`);
  }

  // -- play --

  view(tableId: string): Promise<Snapshot> {
    return this.call("GET", `/v1/tables/${enc(tableId)}/view`);
  }

  /** One action, decided on the snapshot at `expectedVersion` (409 `stale_version` if it moved on). */
  act(tableId: string, expectedVersion: number, action: Action): Promise<Snapshot> {
    return this.call("POST", `/v1/tables/${enc(tableId)}/actions`, { expected_version: expectedVersion, action });
  }

  ask(tableId: string, question: Question): Promise<Schemas["rodada.platform.v1.AskResponse"]> {
    return this.call("POST", `/v1/tables/${enc(tableId)}/ask`, { question });
  }

  // -- matchmaking --

  findMatch(game: string, options: Options = {}, ranked = false, party = false): Promise<Ticket> {
    return this.call("POST", "/v1/matchmaking/tickets", { game, options, ranked, party });
  }

  joinParty(partyCode: string): Promise<Ticket> {
    return this.call("POST", "/v1/matchmaking/parties/join", { party_code: partyCode });
  }

  ticket(ticketId: string): Promise<Ticket> {
    return this.call("GET", `/v1/matchmaking/tickets/${enc(ticketId)}`);
  }

  cancelTicket(ticketId: string): Promise<void> {
    return this.call("DELETE", `/v1/matchmaking/tickets/${enc(ticketId)}`);
  }

  // -- the transport --

  /** A call; with `auth`, a 401 refreshes the session once and tries again. */
  async call<T>(method: string, path: string, body?: unknown, auth = true): Promise<T> {
    const send = async (): Promise<Response> => {
      const headers: Record<string, string> = {};
      if (body !== undefined) headers["content-type"] = "application/json";
      if (auth) headers["authorization"] = `Bearer ${await this.token()}`;
      return fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    };
    let response = await send();
    if (response.status === 401 && auth && this.session) {
      await this.refresh();
      response = await send();
    }
    const text = await response.text();
    const data: unknown = text ? JSON.parse(text) : undefined;
    if (!response.ok) {
      const error = (data as Partial<Schemas["Error"]> | undefined)?.error;
      const retry = response.headers.get("retry-after");
      throw new ApiRefused(
        response.status,
        error?.code ?? "http_error",
        error?.message ?? response.statusText,
        retry === null ? null : Number(retry),
      );
    }
    return data as T;
  }
}

function enc(part: string): string {
  return encodeURIComponent(part);
}
