import type { FunctionComponent } from "preact";
import type { Action, MatchEvent, Question, Schemas, Snapshot } from "../../api/types";

/** What a game's board draws from, and how it acts. */
export interface Board {
  snapshot: Snapshot;
  /** The caller's seat, -1 for a spectator. */
  seat: number;
  /** Whether the match waits for the caller. */
  myTurn: boolean;
  over: boolean;
  /** A practice table: seated players may ask for advice (Yatzy, Bozó). */
  practice: boolean;
  /** An action of the caller's is on its way: nothing more until it is answered. */
  busy: boolean;
  name(seat: number): string;
  act(action: Action): void;
  ask(question: Question): Promise<Schemas["rodada.platform.v1.AskResponse"]>;
  /** The game's events of the snapshot's version (what just happened: for animations). */
  latest: GameEvent[];
}

/** A game's own event, e.g. `{ "rolled": {...} }` (its `@type` left aside). */
export type GameEvent = Record<string, Record<string, unknown> | undefined>;

export interface GameUi {
  Board: FunctionComponent<{ board: Board }>;
  /** One line of the table's log for one of the game's events (null: nothing to say). */
  describe(event: GameEvent, name: (seat: number) => string): string | null;
  /** A score in words ("12 points" unless the game counts something else). */
  unit?: (n: number) => string;
}

/** The game's own view in a snapshot, typed by its `@type`. */
export function viewOf<T>(snapshot: Snapshot, game: string): T | null {
  const view = snapshot.view as { "@type"?: string } | undefined;
  return view && view["@type"] === `type.googleapis.com/rodada.${game}.v1.View` ? (view as T) : null;
}

/** A match event's game event, if it is one. */
export function gameEvent(event: MatchEvent): GameEvent | null {
  if (!("event" in event) || !event.event) return null;
  const { "@type": _type, ...body } = event.event as Record<string, unknown>;
  void _type;
  return body as GameEvent;
}
