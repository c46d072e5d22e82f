// A Yatzy for boardgame.io 0.50, matching the CLASSIC card of services/yatzy
// (13 boxes, upper bonus 35 at 63), so the reference does comparable work.
// Solo (1 player) or duel (2).
'use strict';

const { INVALID_MOVE } = require('boardgame.io/core');

const DICE = 5;
const MAX_THROWS = 3;
const UPPER = { ONES: 1, TWOS: 2, THREES: 3, FOURS: 4, FIVES: 5, SIXES: 6 };

const sum = (dice) => dice.reduce((a, b) => a + b, 0);
const counts = (dice) => {
  const n = [0, 0, 0, 0, 0, 0, 0];
  for (const d of dice) n[d]++;
  return n;
};
const hasRun = (dice, run) => run.every((face) => dice.includes(face));

// Same box names and rules as services/yatzy/scoring.py (CLASSIC): no joker
// rule, so five equal dice are not a full house.
const BOXES = {
  ...Object.fromEntries(
    Object.entries(UPPER).map(([box, face]) => [box, (dice) => face * counts(dice)[face]]),
  ),
  THREE_OF_A_KIND: (dice) => (Math.max(...counts(dice)) >= 3 ? sum(dice) : 0),
  FOUR_OF_A_KIND: (dice) => (Math.max(...counts(dice)) >= 4 ? sum(dice) : 0),
  FULL_HOUSE: (dice) => {
    const n = counts(dice).filter((c) => c > 0).sort();
    return n.length === 2 && n[0] === 2 && n[1] === 3 ? 25 : 0;
  },
  SMALL_STRAIGHT: (dice) =>
    [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]].some((run) => hasRun(dice, run)) ? 30 : 0,
  LARGE_STRAIGHT: (dice) =>
    hasRun(dice, [1, 2, 3, 4, 5]) || hasRun(dice, [2, 3, 4, 5, 6]) ? 40 : 0,
  YATZY: (dice) => (counts(dice).includes(5) ? 50 : 0),
  CHANCE: sum,
};
const BOX_NAMES = Object.keys(BOXES);

function total(card) {
  const upper = Object.keys(UPPER).reduce((a, box) => a + (card[box] || 0), 0);
  return Object.values(card).reduce((a, b) => a + b, 0) + (upper >= 63 ? 35 : 0);
}

const isIndex = (i) => Number.isInteger(i) && i >= 0 && i < DICE;

const Yatzy = {
  name: 'yatzy',
  minPlayers: 1,
  maxPlayers: 2,

  setup: ({ ctx }) => ({
    cards: Array.from({ length: ctx.numPlayers }, () => ({})),
    dice: [],
    throws: 0,
  }),

  moves: {
    // `client: false`: the move runs only on the server (the client reducer
    // leaves its state untouched and waits for the server's update), so dice
    // come from the server's seeded PRNG and every move is validated there,
    // as in Rodada where clients only send intents.
    roll: {
      client: false,
      move: ({ G, random }, keep = []) => {
        if (G.throws >= MAX_THROWS) return INVALID_MOVE;
        if (!Array.isArray(keep) || !keep.every(isIndex) || new Set(keep).size !== keep.length) {
          return INVALID_MOVE;
        }
        if (G.throws === 0 && keep.length > 0) return INVALID_MOVE; // nothing to keep yet
        if (keep.length === DICE) return INVALID_MOVE; // a re-throw throws at least one die
        // Drawn in position order, like services/yatzy, so a seed replays the same.
        G.dice = Array.from({ length: DICE }, (_, i) => (keep.includes(i) ? G.dice[i] : random.D6()));
        G.throws += 1;
      },
    },
    score: {
      client: false,
      move: ({ G, ctx, events }, box) => {
        const card = G.cards[Number(ctx.currentPlayer)];
        if (G.throws === 0 || !(box in BOXES) || box in card) return INVALID_MOVE;
        card[box] = BOXES[box](G.dice);
        G.dice = [];
        G.throws = 0;
        events.endTurn();
      },
    },
  },

  // Checked by the server after every move: the match ends with the last box.
  endIf: ({ G }) => {
    if (!G.cards.every((card) => Object.keys(card).length === BOX_NAMES.length)) return undefined;
    const scores = G.cards.map(total);
    const best = Math.max(...scores);
    const winners = scores.flatMap((s, i) => (s === best ? [String(i)] : []));
    return winners.length === 1 ? { scores, winner: winners[0] } : { scores, draw: true };
  },
};

module.exports = { Yatzy, BOXES, BOX_NAMES, MAX_THROWS };
