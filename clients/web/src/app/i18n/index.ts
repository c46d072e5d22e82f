/**
 * The page's two languages. Each catalog is a typed object (the Portuguese
 * one must have every key and function of the English one, tsc checks it),
 * chosen from the browser's languages until the player picks one, which is
 * kept in localStorage.
 */
import { en } from "./en";
import { pt } from "./pt";

export type Catalog = typeof en;
export type Lang = "en" | "pt-BR";

export const LANGS: { code: Lang; name: string }[] = [
  { code: "pt-BR", name: "Português (Brasil)" },
  { code: "en", name: "English" },
];

const CATALOGS: Record<Lang, Catalog> = { en, "pt-BR": pt };
const STORAGE_KEY = "rodada.lang";

/** The chosen language's catalog (a live binding: always the current one). */
export let t: Catalog = en;
export let lang: Lang = "en";

/** The player's choice, else the first of the browser's languages we speak. */
export function preferredLang(): Lang {
  const stored = localStorage.getItem(STORAGE_KEY);
  if (stored === "en" || stored === "pt-BR") return stored;
  for (const wanted of navigator.languages ?? [navigator.language]) {
    if (/^pt\b/i.test(wanted)) return "pt-BR";
    if (/^en\b/i.test(wanted)) return "en";
  }
  return "en";
}

export function setLang(chosen: Lang, remember = false): void {
  lang = chosen;
  t = CATALOGS[chosen];
  document.documentElement.lang = chosen;
  if (remember) {
    localStorage.setItem(STORAGE_KEY, chosen);
    // The rules pages, served by the gateway, answer in the same language.
    document.cookie = `${STORAGE_KEY}=${chosen}; path=/; max-age=31536000; samesite=lax`;
  }
}

/** Where a game's rules (or the index, for "") are in the current language. */
export function rulesUrl(page = ""): string {
  return `/rules/${lang}/${page}`;
}

export function formatNumber(n: number, digits = 0): string {
  return new Intl.NumberFormat(lang, { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(n);
}

export function percent(p: number): string {
  return new Intl.NumberFormat(lang, { style: "percent", maximumFractionDigits: 1 }).format(p);
}

/** Names in a sentence: "Ana, Bia and Cai" / "Ana, Bia e Cai". */
export function list(items: string[]): string {
  return new Intl.ListFormat(lang, { style: "long", type: "conjunction" }).format(items);
}
