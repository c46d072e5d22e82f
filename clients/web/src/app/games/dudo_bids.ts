/** Dudo's bid box offers what the server lists as legal (`Snapshot.legal`),
 * never its own copy of the rules: every bid it offers or pre-fills is one
 * the game accepts (tests/web/test_dudo_bids.py holds it to the game's
 * `legal` for every standing bid, dice count and variant). */
import { expand, type Legal } from "./legal";

export const ONES = 1;
export const FACES = [1, 2, 3, 4, 5, 6];

export type Bid = { quantity: number; face: number };

/** What the seat may do now: the quantities it may bid on each face (faces
 * without one left out, quantities ascending), and whether it may call Dudo
 * or calza. */
export type Offer = { bids: Map<number, number[]>; dudo: boolean; calza: boolean };

/** The offer in a snapshot's legal actions. */
export function offerOf(legal: Partial<Legal> | undefined | null): Offer {
  const offer: Offer = { bids: new Map(), dudo: false, calza: false };
  for (const action of expand(legal)) {
    if ("dudo" in action) offer.dudo = true;
    if ("calza" in action) offer.calza = true;
    const bid = action.bid as Partial<Bid> | undefined;
    if (!bid || !bid.quantity || !bid.face) continue;
    const quantities = offer.bids.get(bid.face) ?? [];
    quantities.push(bid.quantity);
    offer.bids.set(bid.face, quantities);
  }
  for (const quantities of offer.bids.values()) quantities.sort((a, b) => a - b);
  return { ...offer, bids: new Map([...offer.bids].sort((a, b) => a[0] - b[0])) };
}

/** The legal quantity on `face` nearest to `wanted` (none: null). */
export function nearest(offer: Offer, face: number, wanted: number): number | null {
  const quantities = offer.bids.get(face);
  if (!quantities?.length) return null;
  return quantities.reduce((best, q) => (Math.abs(q - wanted) < Math.abs(best - wanted) ? q : best), quantities[0]!);
}

/** The bid offered first, always one of the offer's: to raise, the lowest
 * raise on the standing bid's face (else the cheapest raise); to open, the
 * face your own dice show most of (ones wild outside palifico), as many as
 * you hold. */
export function suggested(offer: Offer, standing: Bid | null, myDice: number[], palifico: boolean): Bid | null {
  if (offer.bids.size === 0) return null;
  if (standing) {
    const same = offer.bids.get(standing.face);
    if (same?.length) return { quantity: same[0]!, face: standing.face };
    const [face, quantities] = [...offer.bids].sort((a, b) => a[1][0]! - b[1][0]! || a[0] - b[0])[0]!;
    return { quantity: quantities[0]!, face };
  }
  const held = (f: number) => myDice.filter((d) => d === f || (d === ONES && !palifico)).length;
  const face = [...offer.bids.keys()].sort((a, b) => held(b) - held(a) || a - b)[0]!;
  return { quantity: nearest(offer, face, Math.max(1, held(face)))!, face };
}
