/**
 * Rodada's reference web client: log in (guest, sign-up, log-in), the lobby
 * (create a table, find a match, join by invite, sit at an open table, open a
 * table by id to spectate), and a table drawn from its feed's pushed snapshots.
 *
 * The session lives in localStorage and the table's id in the URL
 * (`?table=ID`), so closing the tab and coming back finds the same seat.
 * An invite link is `?invite=CODE`.
 */
import { ApiRefused, Client, type SessionStore } from "../api/client";
import { TableFeed, TicketFeed } from "../api/feed";
import type { Action, GameInfo, MatchEvent, Session, Snapshot, Table } from "../api/types";
import { button, h } from "./dom";
import { describeEvent } from "./events";
import { BOARDS, RULES } from "./games";
import type { Board } from "./games/types";

const STORAGE_KEY = "rodada.session";

const localStore: SessionStore = {
  load: () => {
    const raw = localStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Session) : null;
  },
  save: (session) => {
    if (session) localStorage.setItem(STORAGE_KEY, JSON.stringify(session));
    else localStorage.removeItem(STORAGE_KEY);
  },
};

const client = new Client("", localStore);
const root = document.getElementById("app") as HTMLElement;
const status = document.getElementById("status") as HTMLElement;
let games: GameInfo[] = [];

/** A message in the status line (errors: the API's message). */
function say(text: string, kind: "info" | "error" = "info"): void {
  status.textContent = text;
  status.className = kind;
}

function failed(error: unknown): void {
  if (error instanceof ApiRefused) say(`${error.message} (${error.code})`, "error");
  else say(String(error), "error");
}

function screen(...children: HTMLElement[]): void {
  root.replaceChildren(...children);
}

function setUrl(params: Record<string, string>): void {
  const url = new URL(location.href);
  url.search = new URLSearchParams(params).toString();
  history.replaceState(null, "", url);
}

// -- log in --

function loginScreen(): void {
  const name = h("input", { id: "guest-name", autocomplete: "nickname", maxlength: 24 }) as HTMLInputElement;
  const username = h("input", { id: "username", autocomplete: "username" }) as HTMLInputElement;
  const password = h("input", { id: "password", type: "password", autocomplete: "current-password" }) as HTMLInputElement;
  const go = (how: () => Promise<Session>) => () => void how().then(route, failed);
  screen(
    h("section", { class: "card" },
      h("h2", {}, "Play as a guest"),
      h("label", { for: "guest-name" }, "Name "), name, " ",
      button("Play as guest", go(() => client.guest(name.value.trim() || undefined)), { "data-action": "guest" })),
    h("section", { class: "card" },
      h("h2", {}, "Your account"),
      h("p", {}, h("label", { for: "username" }, "Username "), username),
      h("p", {}, h("label", { for: "password" }, "Password "), password),
      button("Log in", go(() => client.logIn(username.value, password.value)), { "data-action": "login" }), " ",
      button("Sign up", go(() => client.signUp(username.value, password.value)), { "data-action": "signup" })),
  );
}

// -- the lobby --

function lobbyScreen(): void {
  const gameSelect = h("select", { id: "game" }, games.map((g) => h("option", { value: g.name }, g.title))) as HTMLSelectElement;
  const modeSelect = h("select", { id: "mode" }) as HTMLSelectElement;
  const seatsSelect = h("select", { id: "seats" }) as HTMLSelectElement;
  const cpuSeats = h("input", { id: "cpu-seats", placeholder: "e.g. 1 2", size: 8 }) as HTMLInputElement;
  const options = h("input", { id: "options", size: 30, spellcheck: "false" }) as HTMLInputElement;
  const invite = h("input", { id: "invite-code", size: 12 }) as HTMLInputElement;
  const tableId = h("input", { id: "table-id", size: 14 }) as HTMLInputElement;
  const openTables = h("ul", { class: "open-tables" });
  const game = () => games.find((g) => g.name === gameSelect.value) as GameInfo;
  const mode = () => game().modes.find((m) => m.name === modeSelect.value) ?? game().modes[0];

  const fillModes = () => {
    modeSelect.replaceChildren(...game().modes.map((m) => h("option", { value: m.name }, m.name)));
    fillSeats();
    openTables.replaceChildren();
    if (game().open_tables) void listOpen();
  };
  const fillSeats = () => {
    const m = mode();
    seatsSelect.replaceChildren(...(m?.seat_counts ?? []).map((n) => h("option", { value: n }, n)));
    seatsSelect.value = String(m?.seat_counts.includes(2) ? 2 : (m?.seat_counts[0] ?? 1));
    options.value = JSON.stringify(m?.options ?? {});
    cpuSeats.disabled = !game().cpu_seats;
  };
  const parsedOptions = (): Record<string, unknown> => JSON.parse(options.value || "{}") as Record<string, unknown>;
  const listOpen = async () => {
    const tables = await client.openTables(game().name);
    openTables.replaceChildren(
      ...tables.map((t) =>
        h("li", {}, `${t.players.filter((p) => p.name).map((p) => p.name).join(", ") || "empty"} (${t.players.filter((p) => p.name).length}/${t.seats}) `,
          button("Sit", () => void client.sit(t.id).then(() => openTable(t.id), failed))),
      ),
    );
  };
  gameSelect.addEventListener("change", fillModes);
  modeSelect.addEventListener("change", fillSeats);

  const create = async () => {
    const cpu = cpuSeats.value.split(/[\s,]+/).filter(Boolean).map(Number);
    const table = await client.createTable(game().name, Number(seatsSelect.value), parsedOptions() as never, cpu);
    openTable(table.id);
  };
  const find = async () => {
    const ticket = await client.findMatch(game().name, parsedOptions() as never);
    matchmakingScreen(ticket.id);
  };

  screen(
    h("section", { class: "card" },
      h("h2", {}, "New table"),
      h("p", {}, h("label", { for: "game" }, "Game "), gameSelect, " ", h("label", { for: "mode" }, "Mode "), modeSelect, " ",
        h("label", { for: "seats" }, "Seats "), seatsSelect),
      h("p", {}, h("label", { for: "options" }, "Options "), options, " ", h("label", { for: "cpu-seats" }, "CPU seats "), cpuSeats),
      button("Create table", () => void create().catch(failed), { "data-action": "create" }), " ",
      button("Find a match", () => void find().catch(failed), { "data-action": "find" }),
      h("p", { class: "muted" }, "Options are the game's Options as JSON (see the rules), e.g. {\"card\": \"SCANDINAVIAN\"} or {\"dice_per_player\": 3}."),
      openTables),
    h("section", { class: "card" },
      h("h2", {}, "Join"),
      h("p", {}, h("label", { for: "invite-code" }, "Invite code "), invite, " ",
        button("Join", () => void joinInvite(invite.value.trim()), { "data-action": "join" })),
      h("p", {}, h("label", { for: "table-id" }, "Table id "), tableId, " ",
        button("Open (play or watch)", () => openTable(tableId.value.trim()), { "data-action": "open" }))),
    h("section", { class: "card" }, h("h2", {}, "Rules"),
      h("ul", {}, games.map((g) => h("li", {}, h("a", { href: RULES[g.name] ?? "/rules/" }, g.title))))),
  );
  fillModes();
}

async function joinInvite(code: string): Promise<void> {
  try {
    const table = await client.join(code);
    openTable(table.id);
  } catch (error) {
    failed(error);
    setUrl({});
    lobbyScreen();
  }
}

function matchmakingScreen(ticketId: string): void {
  const state = h("p", { id: "ticket-state" }, "Queued…");
  const feed = new TicketFeed(client, ticketId, {
    update: (update) => {
      if ("matched" in update) {
        feed.close();
        openTable(update.matched.table_id);
      } else if ("closed" in update) {
        state.textContent = `Closed: ${update.closed.reason || update.closed.state}`;
      } else {
        const wait = update.queue.estimated_wait_seconds;
        state.textContent = `In the queue: position ${update.queue.position} of ${update.queue.queue_length}` +
          (wait === undefined ? "" : `, about ${Math.round(wait)} s`);
      }
    },
    closed: (code, reason) => {
      if (code !== 1000) say(`matchmaking closed: ${reason || code}`, "error");
    },
  });
  screen(h("section", { class: "card" }, h("h2", {}, "Finding a match"), state,
    button("Cancel", () => {
      feed.close();
      void client.cancelTicket(ticketId).catch(() => undefined);
      lobbyScreen();
    }, { "data-action": "cancel" })));
}

// -- a table --

let current: TableView | null = null;

function openTable(tableId: string): void {
  current?.close();
  setUrl({ table: tableId });
  current = new TableView(tableId);
}

class TableView {
  private table: Table | null = null;
  private snapshot: Snapshot | null = null;
  private readonly log: string[] = [];
  private readonly memo: Record<string, unknown> = {};
  private readonly feed: TableFeed;
  private sentAt: number | null = null;
  /** The version at which the seat to act was told inactive (claims open). */
  private inactiveAt: number | null = null;
  private pending: ReturnType<typeof setTimeout> | null = null;

  constructor(readonly tableId: string) {
    say("");
    this.feed = new TableFeed(client, tableId, {
      event: (event) => this.onEvent(event),
      snapshot: (snapshot) => this.onSnapshot(snapshot),
      table: (table) => {
        this.table = table;
        this.draw();
      },
      connected: (resumed) => say(resumed ? "Reconnected: resumed where the feed left off." : "Connected."),
      disconnected: (code, reason, retry) => {
        if (retry !== null) say(`Connection lost (${reason || code}); retrying…`, "error");
        else if (code !== 1000) say(`The table refused the feed: ${reason || code}`, "error");
      },
      end: () => say("The match is over."),
    });
    void client.table(tableId).then((table) => {
      this.table ??= table;
      this.draw();
    }, failed);
  }

  close(): void {
    this.feed.close();
  }

  private onEvent(event: MatchEvent): void {
    if ("table" in event && event.table.table) this.table = event.table.table;
    if ("notice" in event && event.notice.kind === "NOTICE_KIND_INACTIVE") this.inactiveAt = event.version;
    this.log.unshift(describeEvent(event, (seat) => this.name(seat)));
    this.log.length = Math.min(this.log.length, 40);
    this.soon();
  }

  /** One redraw for a burst of events (a catch-up delivers many at once). */
  private soon(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      this.draw();
    }, 0);
  }

  private onSnapshot(snapshot: Snapshot): void {
    if (this.snapshot && snapshot.version < this.snapshot.version) return;
    this.snapshot = snapshot;
    this.draw();
  }

  private name(seat: number): string {
    const fromMatch = this.snapshot?.seats[seat]?.display_name;
    return fromMatch || this.table?.players[seat]?.name || `seat ${seat}`;
  }

  /** One action on the version shown; a second click on the same version
   * is ignored (the feed may show the next version before the reply comes). */
  private act(action: Action): void {
    const snapshot = this.snapshot;
    if (!snapshot || this.sentAt === snapshot.version) return;
    this.sentAt = snapshot.version;
    client.act(this.tableId, snapshot.version, action).then(
      (next) => {
        say("");
        this.onSnapshot(next);
      },
      (error: unknown) => {
        if (this.sentAt === snapshot.version) this.sentAt = null;
        failed(error);
        this.draw();
      },
    );
  }

  private draw(): void {
    const table = this.table;
    const me = client.user?.id;
    const header = h("section", { class: "card table-head" },
      h("h2", {}, `${games.find((g) => g.name === table?.game)?.title ?? table?.game ?? "Table"}`,
        table?.mode ? ` · ${table.mode}` : ""),
      h("p", { class: "muted" }, `Table ${this.tableId}`, table ? " · " : "",
        table ? h("a", { href: RULES[table.game] ?? "/rules/" }, "Rules") : null),
      button("Back to the lobby", () => { this.close(); setUrl({}); lobbyScreen(); }, { "data-action": "lobby" }));
    const parts: HTMLElement[] = [header];
    if (!this.snapshot && table) parts.push(this.lobby(table, me));
    if (this.snapshot) parts.push(this.match(this.snapshot));
    parts.push(h("section", { class: "card" }, h("h3", {}, "Table log"),
      h("ol", { class: "log", reversed: true }, this.log.map((line) => h("li", {}, line)))));
    screen(...parts);
  }

  private lobby(table: Table, me: string | undefined): HTMLElement {
    const seated = table.players.filter((p) => p.user_id || p.cpu).length;
    const host = table.host === me;
    const link = table.invite_code ? `${location.origin}/?invite=${table.invite_code}` : "";
    const mine = table.players.some((p) => p.user_id === me);
    return h("section", { class: "card" },
      h("h3", {}, `Waiting for players (${seated}/${table.seats})`),
      h("ol", { start: 0, class: "seats" }, table.players.map((p, seat) =>
        h("li", {}, p.user_id || p.cpu ? `${p.name}${p.cpu ? " (CPU)" : ""}${p.user_id === table.host ? " · host" : ""}` : "free",
          !mine && !p.user_id && !p.cpu && table.open ? button("Sit here", () => void client.sit(table.id, seat).catch(failed)) : null))),
      link ? h("p", {}, "Invite link: ", h("input", { readonly: true, value: link, size: 40, id: "invite-link" }), " ",
        button("Copy", () => void navigator.clipboard?.writeText(link).then(() => say("Invite link copied.")), { "data-action": "copy-invite" })) : null,
      // The host's other invites (e.g. one per team in Bozó duplas), and new ones.
      host ? h("ul", { class: "invites" }, table.invites.filter((i) => i.code !== table.invite_code).map((i) =>
        h("li", {}, `${i.team ? `${i.team} seat: ` : ""}${location.origin}/?invite=${i.code} `,
          button("Revoke", () => void client.revokeInvite(table.id, i.code).then(() => this.reload(), failed))))) : null,
      host && table.status === "open" && seated < table.seats
        ? (table.teams.length ? table.teams.map((t) => t.name) : [""]).map((team) =>
            button(team ? `New invite for ${team}` : "New invite", () => void client.invite(table.id, team || undefined).then(() => this.reload(), failed),
              { "data-action": "invite" }))
        : null,
      host ? button("Start", () => void client.start(table.id).then((s) => this.onSnapshot(s), failed),
        { "data-action": "start", disabled: seated < table.seats }) : null,
      mine ? button("Leave", () => void client.leave(table.id).then(() => { this.close(); setUrl({}); lobbyScreen(); }, failed), { "data-action": "leave" }) : null);
  }

  private reload(): void {
    client.table(this.tableId).then((table) => {
      this.table = table;
      this.draw();
    }, failed);
  }

  private match(snapshot: Snapshot): HTMLElement {
    const over = snapshot.status === "MATCH_STATUS_FINISHED";
    const render = BOARDS[snapshot.game];
    const board: Board = {
      snapshot,
      seat: snapshot.seat,
      myTurn: !over && snapshot.to_act.includes(snapshot.seat),
      name: (seat) => this.name(seat),
      act: (action) => this.act(action),
      ask: (question) => client.ask(this.tableId, question),
      memo: this.memo,
      redraw: () => this.draw(),
    };
    const who = snapshot.to_act.map((s) => this.name(s)).join(", ");
    const turn = over ? "" : board.myTurn ? "Your turn" : snapshot.seat < 0 ? `Watching · ${who} to act` : `${who} to act`;
    const scores = h("ul", { class: "scores" }, snapshot.seats.map((_, seat) =>
      h("li", { class: snapshot.to_act.includes(seat) ? "to-act" : "" },
        `${this.name(seat)}${seat === snapshot.seat ? " (you)" : ""}: ${snapshot.scores[seat] ?? 0}`)));
    // Past the turn's deadline (the feed's "inactive" notice redraws the page
    // then), the others may claim where the game lets them (the game refuses
    // a partner's claim with its reason).
    const game = games.find((g) => g.name === snapshot.game);
    const late = this.inactiveAt === snapshot.version || (snapshot.deadline_at > 0 && Date.now() / 1000 >= snapshot.deadline_at);
    const idle = !over && late && snapshot.seat >= 0 && !board.myTurn && game?.claims !== "CLAIM_POLICY_NOBODY";
    const clock = !over && snapshot.deadline_at > 0
      ? h("span", { class: "muted" }, late ? " · out of time" : ` · to act by ${new Date(snapshot.deadline_at * 1000).toLocaleTimeString()}`)
      : null;
    return h("section", { class: "card match", "data-version": snapshot.version },
      h("p", { class: "turn", "aria-live": "polite", "data-turn": board.myTurn ? "mine" : "other" }, turn, clock),
      scores,
      render ? render(board) : h("pre", {}, JSON.stringify(snapshot.view, null, 1)),
      over ? this.result(snapshot) : null,
      idle ? button("Claim against the idle seat", () => this.act({ claim_inactivity: {} } as Action), { "data-action": "claim" }) : null,
      !over && snapshot.seat >= 0 ? button("Leave the match", () => {
        if (confirm("Leave this match? The game's leaving rule applies.")) void client.leave(this.tableId).catch(failed);
      }, { "data-action": "leave-match" }) : null);
  }

  private result(snapshot: Snapshot): HTMLElement {
    const result = snapshot.result;
    const order = snapshot.seats.map((_, seat) => seat).sort((a, b) => (result?.ranks[a] ?? 0) - (result?.ranks[b] ?? 0));
    return h("section", { class: "result", id: "result" },
      h("h3", {}, "Match over"),
      h("ol", {}, order.map((seat) => h("li", {}, `${result?.ranks[seat] ?? "?"}. ${this.name(seat)}`,
        result?.scores[seat] === undefined ? "" : `: ${result.scores[seat]}`))),
      h("p", { class: "muted" }, `Seed ${snapshot.fairness?.seed ?? ""} (SHA-256 ${snapshot.fairness?.seed_sha256 ?? ""})`));
  }
}

// -- start --

async function route(): Promise<void> {
  if (!client.user) {
    loginScreen();
    return;
  }
  document.getElementById("who")!.textContent = client.user.name;
  if (games.length === 0) games = await client.games();
  const params = new URLSearchParams(location.search);
  const tableId = params.get("table");
  const invite = params.get("invite");
  if (tableId) openTable(tableId);
  else if (invite) await joinInvite(invite);
  else lobbyScreen();
}

document.getElementById("logout")?.addEventListener("click", () => {
  current?.close();
  client.logOut();
  document.getElementById("who")!.textContent = "";
  loginScreen();
});

void route().catch((error: unknown) => {
  if (error instanceof ApiRefused && error.status === 401) {
    client.logOut();
    loginScreen();
  } else failed(error);
});
