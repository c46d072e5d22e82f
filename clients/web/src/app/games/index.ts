/** Each game's board, and where its rules are (served by the gateway). */
import { bozo } from "./bozo";
import { bozuMekuri } from "./bozu_mekuri";
import { domino } from "./domino";
import { dudo } from "./dudo";
import type { Renderer } from "./types";
import { yatzy } from "./yatzy";

export const BOARDS: Record<string, Renderer> = {
  bozo,
  bozu_mekuri: bozuMekuri,
  domino,
  dudo,
  yatzy,
};

export const RULES: Record<string, string> = {
  bozo: "/rules/bozo",
  bozu_mekuri: "/rules/bozu-mekuri",
  domino: "/rules/domino",
  dudo: "/rules/dudo",
  yatzy: "/rules/yatzy",
};
