/** Each game's board, log lines and rules page. */
import { bozo } from "./bozo";
import { bozuMekuri } from "./bozu_mekuri";
import { domino } from "./domino";
import { dudo } from "./dudo";
import type { GameUi } from "./types";
import { yatzy } from "./yatzy";

export const GAMES: Record<string, GameUi> = {
  bozo,
  bozu_mekuri: bozuMekuri,
  domino,
  dudo,
  yatzy,
};

/** The rules page of each game, by game name. */
export const RULES_PAGES: Record<string, string> = Object.fromEntries(
  Object.entries(GAMES).map(([name, ui]) => [name, ui.rules]),
);
