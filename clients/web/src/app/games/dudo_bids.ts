/** Dudo's legal bids, as the game checks them (services/dudo/bids.py:
 * tests/web/test_dudo_bids.py holds the two to the same answers). */

export const ONES = 1;
export const FACES = [1, 2, 3, 4, 5, 6];

export type Bid = { quantity: number; face: number };

/** The fewest dice a bid on `face` needs to raise (quantity, standing face); ones are wild. */
export function lowestRaise(quantity: number, standing: number, face: number): number {
  if (standing !== ONES && face !== ONES) return face > standing ? quantity : quantity + 1;
  if (standing !== ONES) return Math.floor((quantity + 1) / 2);
  if (face === ONES) return quantity + 1;
  return 2 * quantity + 1;
}

/** The lowest legal quantity on each face that has a legal bid (any quantity
 * from there up to the dice in play is legal too): an opening bid (not on
 * ones unless `openOnOnes` or in a palifico round) or a raise of `standing`
 * (in a palifico round on its face only). */
export function lowestBids(standing: Bid | null, inPlay: number, palifico: boolean, openOnOnes: boolean): Map<number, number> {
  const lowest = new Map<number, number>();
  for (const face of FACES) {
    let q: number | null;
    if (!standing) q = face === ONES && !(openOnOnes || palifico) ? null : 1;
    else if (palifico) q = face === standing.face ? standing.quantity + 1 : null;
    else q = lowestRaise(standing.quantity, standing.face, face);
    if (q !== null && Math.max(1, q) <= inPlay) lowest.set(face, Math.max(1, q));
  }
  return lowest;
}
