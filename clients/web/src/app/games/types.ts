import type { Action, Question, Schemas, Snapshot } from "../../api/types";

/** What a game's board draws from, and how it acts. */
export interface Board {
  snapshot: Snapshot;
  /** The caller's seat, -1 for a spectator. */
  seat: number;
  /** Whether the match waits for the caller. */
  myTurn: boolean;
  name(seat: number): string;
  act(action: Action): void;
  ask(question: Question): Promise<Schemas["rodada.platform.v1.AskResponse"]>;
  /** Kept between redraws (selections, a bid being composed), per table. */
  memo: Record<string, unknown>;
  /** Redraw (after a local change such as toggling a kept die). */
  redraw(): void;
}

export type Renderer = (board: Board) => HTMLElement;

/** The game's own view in a snapshot, typed by its `@type`. */
export function viewOf<T>(snapshot: Snapshot, game: string): T | null {
  const view = snapshot.view as { "@type"?: string } | undefined;
  return view && view["@type"] === `type.googleapis.com/rodada.${game}.v1.View` ? (view as T) : null;
}
