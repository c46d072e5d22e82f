/**
 * The WebSocket feeds (docs/feeds.md; /v1/feeds/asyncapi.json): a table's,
 * a matchmaking ticket's, the caller's social feed and a tournament's. Each
 * sends the hello with a fresh access token, pings to notice a connection
 * that died without a close (a laptop lid, a lost network), and reconnects
 * with backoff — resuming from the last event id where the feed has one (a
 * table's, the social feed: nothing lost, nothing twice); the others send
 * their state anew on connecting. It stops for good on `close()`, at the
 * end (close 1000), and on a refusal that would be repeated (4403, 4404,
 * 4422, 4429; 4401 once the session cannot be refreshed).
 */
import { ApiRefused, type Client } from "./client";
import type {
  ApiError,
  MatchEvent,
  SocialEvent,
  SocialFeedItem,
  Snapshot,
  Table,
  TableFeedItem,
  TicketUpdate,
  Tournament,
  TournamentFeedItem,
} from "./types";

/** What every feed tells (all optional). */
export interface FeedHandlers {
  /** Connected (again): `resumed` when it continued from an event id. */
  connected?(resumed: boolean): void;
  /** Lost; it tries again after `retryInMs` (null: it will not, e.g. refused or over). */
  disconnected?(code: number, reason: string, retryInMs: number | null): void;
  /** The server's refusal (`{"error"}`), just before it closes 4000 + the HTTP status. */
  refused?(error: ApiError["error"]): void;
  /** The feed is over (close 1000 after `{"end"}`): nothing more will come. */
  end?(reason: string): void;
  /** Stopped for good, over or refused (not called on `close()`). */
  closed?(code: number, reason: string): void;
}

export interface FeedOptions {
  /** A ping this often while connected (the server answers with a pong). */
  pingEveryMs?: number;
  /** Without any message for this long after a ping, the connection is taken for dead. */
  deadAfterMs?: number;
}

const BACKOFF_START_MS = 250;
const BACKOFF_CAP_MS = 10_000;
const PING_EVERY_MS = 25_000;
const DEAD_AFTER_MS = 10_000;
export const CLOSE_FINISHED = 1000;
const CLOSE_UNAUTHENTICATED = 4401;
const OPEN = 1; // WebSocket.OPEN, which Node 20 has no global for

/** A refusal the server would repeat: 4000 + a 4xx status, but 4401 (refresh, then retry). */
function final(code: number): boolean {
  return code === CLOSE_FINISHED || (code >= 4400 && code < 4500 && code !== CLOSE_UNAUTHENTICATED);
}

/** One feed's socket lifecycle; a kind of feed says its path, its hello and what it does with a message. */
abstract class Feed<Message extends object> {
  private socket: WebSocket | null = null;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private pingTimer: ReturnType<typeof setInterval> | null = null;
  private deadTimer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private readonly pingEveryMs: number;
  private readonly deadAfterMs: number;

  constructor(
    protected readonly client: Client,
    private readonly path: string,
    private readonly handlers: FeedHandlers,
    options: FeedOptions,
  ) {
    this.pingEveryMs = options.pingEveryMs ?? PING_EVERY_MS;
    this.deadAfterMs = options.deadAfterMs ?? DEAD_AFTER_MS;
  }

  /** The first message: the token and, where the feed resumes, where from. */
  protected abstract hello(token: string): Record<string, unknown>;
  /** Whether a connection now continues from an event id. */
  protected abstract resuming(): boolean;
  protected abstract deliver(message: Message): void;

  /** Open (the subclasses' constructors call it once their fields are set). */
  protected open(): void {
    void this.connect();
  }

  /** Whether the feed has stopped for good. */
  get closed(): boolean {
    return this.stopped;
  }

  /** Stop for good (leaving the page, the table or the queue). */
  close(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.drop()?.close(CLOSE_FINISHED, "bye");
  }

  /** Forget the current socket (its later events are ignored); it, to close. */
  private drop(): WebSocket | null {
    const socket = this.socket;
    this.socket = null;
    if (this.pingTimer) clearInterval(this.pingTimer);
    if (this.deadTimer) clearTimeout(this.deadTimer);
    this.pingTimer = this.deadTimer = null;
    return socket;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let token: string;
    try {
      token = await this.client.token();
    } catch (error) {
      // Logged out (a refresh was refused): reconnecting cannot work.
      if (error instanceof ApiRefused && error.status === 401) this.stop(CLOSE_UNAUTHENTICATED, error.code);
      else this.retry(CLOSE_UNAUTHENTICATED, "token");
      return;
    }
    if (this.stopped) return;
    const resumed = this.resuming();
    const socket = new this.client.WebSocket(this.client.socketUrl(this.path));
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      socket.send(JSON.stringify(this.hello(token)));
      this.attempt = 0;
      this.pingTimer = setInterval(() => this.ping(socket), this.pingEveryMs);
      this.handlers.connected?.(resumed);
    };
    socket.onmessage = (message: MessageEvent) => {
      if (this.socket !== socket) return;
      if (this.deadTimer) clearTimeout(this.deadTimer);
      this.deadTimer = null;
      const data = JSON.parse(String(message.data)) as Message | { error: ApiError["error"] } | { end: unknown };
      if ("error" in data) this.handlers.refused?.(data.error);
      else if (!("end" in data) && !("pong" in data)) this.deliver(data as Message);
    };
    // A close always follows an error; Node's `ws` would throw an error nobody listens to.
    socket.onerror = () => undefined;
    socket.onclose = (close: CloseEvent) => {
      if (this.socket !== socket) return;
      this.drop();
      if (this.stopped) return;
      if (final(close.code)) {
        this.stop(close.code, close.reason);
      } else if (close.code === CLOSE_UNAUTHENTICATED) {
        // The token expired between the hello and now: refresh, then resume.
        this.client.refresh().then(
          () => this.retry(close.code, close.reason),
          (error: unknown) =>
            error instanceof ApiRefused && error.status === 401
              ? this.stop(close.code, close.reason)
              : this.retry(close.code, close.reason),
        );
      } else {
        this.retry(close.code, close.reason);
      }
    };
  }

  /** A keepalive; no answer (nor anything else) in time and the socket is given up for a new one. */
  private ping(socket: WebSocket): void {
    if (this.socket !== socket || socket.readyState !== OPEN) return;
    socket.send(JSON.stringify({ ping: Date.now() }));
    this.deadTimer ??= setTimeout(() => {
      if (this.socket !== socket) return;
      this.drop();
      socket.close(CLOSE_FINISHED, "no answer");
      this.retry(1006, "no answer to the keepalive");
    }, this.deadAfterMs);
  }

  private retry(code: number, reason: string): void {
    const delay = Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.attempt += 1;
    this.handlers.disconnected?.(code, reason, delay);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }

  private stop(code: number, reason: string): void {
    this.stopped = true;
    this.handlers.disconnected?.(code, reason, null);
    if (code === CLOSE_FINISHED) this.handlers.end?.(reason || "finished");
    this.handlers.closed?.(code, reason);
  }
}

// -- a table's feed --

export interface TableFeedHandlers extends FeedHandlers {
  event?(event: MatchEvent): void;
  snapshot?(snapshot: Snapshot): void;
  table?(table: Table): void;
}

/** A table from its creation to its match's end: events, then the state to draw from, after each version. */
export class TableFeed extends Feed<TableFeedItem> {
  /** The last event id received: where a reconnection resumes. */
  lastEventId: number;

  constructor(
    client: Client,
    readonly tableId: string,
    private readonly on: TableFeedHandlers,
    afterEventId = 0,
    options: FeedOptions = {},
  ) {
    super(client, `/v1/tables/${encodeURIComponent(tableId)}/events`, on, options);
    this.lastEventId = afterEventId;
    this.open();
  }

  protected hello(token: string) {
    return { token, after_event_id: this.lastEventId };
  }

  protected resuming(): boolean {
    return this.lastEventId > 0;
  }

  protected deliver(message: TableFeedItem): void {
    if ("event" in message) {
      if (message.event.id <= this.lastEventId) return; // already had it
      this.lastEventId = message.event.id;
      this.on.event?.(message.event);
    } else if ("snapshot" in message) {
      this.lastEventId = Math.max(this.lastEventId, message.snapshot.last_event_id);
      this.on.snapshot?.(message.snapshot);
    } else if ("table" in message) {
      this.lastEventId = Math.max(this.lastEventId, message.table.last_event_id);
      this.on.table?.(message.table);
    }
  }
}

// -- a matchmaking ticket's feed --

export interface TicketFeedHandlers extends FeedHandlers {
  /** `queue` while waiting, then `matched` (the table and seat) or `closed`. */
  update(update: TicketUpdate): void;
}

/** A ticket's state as it changes; keep it open while queued (closing drops the ticket). */
export class TicketFeed extends Feed<TicketUpdate> {
  constructor(
    client: Client,
    readonly ticketId: string,
    private readonly on: TicketFeedHandlers,
    options: FeedOptions = {},
  ) {
    super(client, `/v1/matchmaking/tickets/${encodeURIComponent(ticketId)}/events`, on, options);
    this.open();
  }

  protected hello(token: string) {
    return { token };
  }

  protected resuming(): boolean {
    return false;
  }

  protected deliver(message: TicketUpdate): void {
    if ("ticket_id" in message) this.on.update(message);
  }
}

// -- the social feed --

export interface SocialFeedHandlers extends FeedHandlers {
  /** A private message, a friend notice or a table invite. */
  event(event: SocialEvent): void;
}

/** The caller's social feed; while it is open the caller is online for their friends. */
export class SocialFeed extends Feed<SocialFeedItem> {
  /** The last event id received: where a reconnection resumes ("" for everything kept). */
  lastId: string;

  constructor(
    client: Client,
    private readonly on: SocialFeedHandlers,
    afterId = "",
    options: FeedOptions = {},
  ) {
    super(client, "/v1/social/events", on, options);
    this.lastId = afterId;
    this.open();
  }

  protected hello(token: string) {
    return { token, after_id: this.lastId };
  }

  protected resuming(): boolean {
    return this.lastId !== "";
  }

  protected deliver(message: SocialFeedItem): void {
    const event = "event" in message ? message.event : undefined;
    if (!event || !newer(event.id, this.lastId)) return;
    this.lastId = event.id;
    this.on.event(event);
  }
}

/** Whether stream id `id` ("<ms>-<seq>") comes after `last`. */
function newer(id: string, last: string): boolean {
  if (!last) return true;
  const [ms, seq] = id.split("-").map(Number);
  const [lastMs, lastSeq] = last.split("-").map(Number);
  return ms > lastMs || (ms === lastMs && seq > lastSeq);
}

// -- a tournament's feed --

export interface TournamentFeedHandlers extends FeedHandlers {
  tournament(tournament: Tournament): void;
}

/** A tournament now and after every change (registrations, rounds, results), until it is over. */
export class TournamentFeed extends Feed<TournamentFeedItem> {
  constructor(
    client: Client,
    readonly tournamentId: string,
    private readonly on: TournamentFeedHandlers,
    options: FeedOptions = {},
  ) {
    super(client, `/v1/tournaments/${encodeURIComponent(tournamentId)}/events`, on, options);
    this.open();
  }

  protected hello(token: string) {
    return { token };
  }

  protected resuming(): boolean {
    return false;
  }

  protected deliver(message: TournamentFeedItem): void {
    if ("tournament" in message) this.on.tournament(message.tournament);
  }
}
