/** Where the pips of a face (0 to 6) sit, on a unit square: dice and domino halves draw the same. */
const L = 0.27, M = 0.5, R = 0.73;
const PIPS: [number, number][][] = [
  [],
  [[M, M]],
  [[L, L], [R, R]],
  [[L, L], [M, M], [R, R]],
  [[L, L], [R, L], [L, R], [R, R]],
  [[L, L], [R, L], [M, M], [L, R], [R, R]],
  [[L, L], [R, L], [L, M], [R, M], [L, R], [R, R]],
];

export function pips(face: number, size: number): [number, number][] {
  return (PIPS[face] ?? []).map(([x, y]) => [x * size, y * size]);
}
