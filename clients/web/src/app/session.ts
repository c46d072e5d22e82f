/** The page's one API client, its session kept in localStorage (closing the
 * tab and coming back finds the same seat), and errors in the page's words. */
import { ApiRefused, Client, type SessionStore } from "../api/client";
import type { Session } from "../api/types";
import { t } from "./i18n";

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

export const client = new Client("", localStore);

/** What went wrong, for the player: our words for the API's codes we know,
 * else the API's own message. */
export function errorText(error: unknown): string {
  if (error instanceof ApiRefused) return t.errors.codes[error.code] ?? error.message;
  if (error instanceof TypeError) return t.errors.network; // fetch: no answer at all
  return String(error instanceof Error ? error.message : error);
}

/** A guest's account has no ratings, friends or ranked play. */
export function isGuest(): boolean {
  return client.user?.role === "guest";
}

/** The games' titles by name, as the gateway describes them (set once the games are loaded). */
export const gameTitles = new Map<string, string>();

export function gameTitle(game: string): string {
  return gameTitles.get(game) ?? game;
}
