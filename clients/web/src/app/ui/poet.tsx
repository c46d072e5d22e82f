/** A Bozu Mekuri card: the poet's portrait stands in as the category's
 * colour and mark; the poet's name in romaji, kana and kanji; the category
 * and the emperor's crown. Its accessible name says all of it. */
import type { Schemas } from "../../api/types";
import { t } from "../i18n";

export type Card = Schemas["rodada.bozu_mekuri.v1.Card"];

const MARK: Record<string, string> = { NOBLE: "冠", LADY: "姫", MONK: "坊", SEMIMARU: "蝉" };

export function PoetCard({ card, fresh = false, small = false }: { card: Card; fresh?: boolean; small?: boolean }) {
  const category = t.bozu.categories[card.category] ?? card.category;
  const name = t.bozu.cardName(card.number, card.name_romaji, card.name_kana, category, card.emperor);
  return (
    <div class={`poet ${card.category.toLowerCase()}${fresh ? " fresh" : ""}${small ? " small" : ""}`}
      role="img" aria-label={name} data-card={card.number}>
      <span class="poet-mark" lang="ja" aria-hidden="true">{MARK[card.category] ?? "?"}</span>
      <span class="poet-number" aria-hidden="true">{card.number}</span>
      <span class="poet-romaji" aria-hidden="true">{card.name_romaji}</span>
      {small ? null : <span class="poet-ja" lang="ja" aria-hidden="true">{card.name_ja}</span>}
      <span class="poet-kana" lang="ja" aria-hidden="true">{card.name_kana}</span>
      <span class="poet-category" aria-hidden="true">{category}{card.emperor ? ` · ${t.bozu.emperor}` : ""}</span>
    </div>
  );
}
