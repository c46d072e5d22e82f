/**
 * The WebSocket feeds (docs/feeds.md): a table's feed, which reconnects with
 * backoff and resumes from the last event id it received (nothing lost, nothing
 * twice), and a matchmaking ticket's feed (the open socket keeps the ticket).
 */
import type { Client } from "./client";
import type { MatchEvent, Schemas, Snapshot, Table, TicketUpdate } from "./types";

export type FeedMessage =
  | { event: MatchEvent }
  | { snapshot: Snapshot }
  | { table: Table }
  | { end: { reason: string } }
  | { error: Schemas["Error"]["error"] }
  | { pong: unknown };

export interface TableFeedHandlers {
  event?(event: MatchEvent): void;
  snapshot?(snapshot: Snapshot): void;
  table?(table: Table): void;
  /** The match is over and the feed closed for good. */
  end?(reason: string): void;
  /** Connected (again): `resumed` when it continued from an event id. */
  connected?(resumed: boolean): void;
  /** Lost; it tries again after `retryInMs` (null: it will not, e.g. refused). */
  disconnected?(code: number, reason: string, retryInMs: number | null): void;
}

const BACKOFF_START_MS = 250;
const BACKOFF_CAP_MS = 10_000;
/** Close codes after which reconnecting would be refused the same way. */
const FINAL_CODES = new Set([1000, 4403, 4404, 4422, 4429]);

export class TableFeed {
  /** The last event id received: where a reconnection resumes. */
  lastEventId = 0;
  private socket: WebSocket | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    private readonly client: Client,
    readonly tableId: string,
    private readonly handlers: TableFeedHandlers,
    afterEventId = 0,
  ) {
    this.lastEventId = afterEventId;
    void this.connect();
  }

  /** Stop for good (leaving the page or the table). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.socket?.close(1000, "bye");
    this.socket = null;
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    let token: string;
    try {
      token = await this.client.token();
    } catch {
      this.retry(4401, "unauthenticated");
      return;
    }
    const resumed = this.lastEventId > 0;
    const socket = new WebSocket(this.client.socketUrl(`/v1/tables/${encodeURIComponent(this.tableId)}/events`));
    this.socket = socket;
    socket.onopen = () => {
      socket.send(JSON.stringify({ token, after_event_id: this.lastEventId }));
      this.attempt = 0;
      this.handlers.connected?.(resumed);
    };
    socket.onmessage = (message: MessageEvent) => {
      if (this.socket === socket) this.deliver(JSON.parse(String(message.data)) as FeedMessage);
    };
    socket.onclose = (close: CloseEvent) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.closed) return;
      if (FINAL_CODES.has(close.code)) {
        this.closed = true;
        this.handlers.disconnected?.(close.code, close.reason, null);
        if (close.code === 1000) this.handlers.end?.(close.reason || "finished");
        return;
      }
      if (close.code === 4401) {
        // The token expired between the hello and now: refresh, then resume.
        void this.client.refresh().catch(() => undefined);
      }
      this.retry(close.code, close.reason);
    };
  }

  private retry(code: number, reason: string): void {
    const delay = Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.attempt += 1;
    this.handlers.disconnected?.(code, reason, delay);
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  private deliver(message: FeedMessage): void {
    if ("event" in message) {
      if (message.event.id <= this.lastEventId) return; // already had it
      this.lastEventId = message.event.id;
      this.handlers.event?.(message.event);
    } else if ("snapshot" in message) {
      this.lastEventId = Math.max(this.lastEventId, message.snapshot.last_event_id);
      this.handlers.snapshot?.(message.snapshot);
    } else if ("table" in message) {
      this.lastEventId = Math.max(this.lastEventId, message.table.last_event_id);
      this.handlers.table?.(message.table);
    }
  }
}

export interface TicketFeedHandlers {
  update(update: TicketUpdate): void;
  closed?(code: number, reason: string): void;
}

/** A matchmaking ticket's feed: keep it open while queued (closing drops the ticket). */
export class TicketFeed {
  private readonly socket: WebSocket;

  constructor(client: Client, ticketId: string, handlers: TicketFeedHandlers) {
    this.socket = new WebSocket(client.socketUrl(`/v1/matchmaking/tickets/${encodeURIComponent(ticketId)}/events`));
    this.socket.onopen = () => {
      void client.token().then((token) => this.socket.send(JSON.stringify({ token })));
    };
    this.socket.onmessage = (message: MessageEvent) => {
      const data = JSON.parse(String(message.data)) as Partial<TicketUpdate> & { end?: unknown; error?: unknown };
      if (data.ticket_id !== undefined) handlers.update(data as TicketUpdate);
    };
    this.socket.onclose = (close: CloseEvent) => handlers.closed?.(close.code, close.reason);
  }

  close(): void {
    this.socket.close(1000, "bye");
  }
}
