/** Each game's board and log lines: the five games' drawn boards, and for
 * any other game the generic one (its view as fields, its legal actions as
 * controls). */
import { bozo } from "./bozo";
import { bozuMekuri } from "./bozu_mekuri";
import { domino } from "./domino";
import { dudo } from "./dudo";
import { generic } from "./generic";
import type { GameUi } from "./types";
import { yatzy } from "./yatzy";

export const GAMES: Record<string, GameUi> = {
  bozo,
  bozu_mekuri: bozuMekuri,
  domino,
  dudo,
  yatzy,
};

/** A game's board: its own drawn one, else the generic one. */
export function gameUi(game: string): GameUi {
  return GAMES[game] ?? generic;
}

/** A game's rules page under /rules/ (served from the game's own folder). */
export function rulesPage(game: string): string {
  return game.replace(/_/g, "-");
}
