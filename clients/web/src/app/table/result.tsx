/** The scores during a match, and its result: places in order (shared
 * places said so), partners together, the end's reason, and the match's
 * seed with the SHA-256 shown from the start, to check the dice. */
import type { Schemas, Snapshot } from "../../api/types";
import { gameUi } from "../games";
import { list, rulesUrl, t } from "../i18n";

type Team = Schemas["rodada.common.v1.Team"];

interface Side {
  key: string;
  seats: number[];
  label: string;
}

/** The match's sides: one per team in partnership games, else one per seat. */
function sides(snapshot: Snapshot, teams: Team[], name: (seat: number) => string): Side[] {
  const who = (seat: number) => `${name(seat)}${seat === snapshot.seat ? ` ${t.youMark}` : ""}`;
  if (teams.length) {
    return teams.map((team) => {
      const names = list(team.seats.map(who));
      const title = t.bozo.teams[team.name];
      return { key: team.name, seats: team.seats, label: title ? `${title}: ${names}` : names };
    });
  }
  return snapshot.seats.map((_, seat) => ({ key: String(seat), seats: [seat], label: who(seat) }));
}

function unit(snapshot: Snapshot, n: number): string {
  return (gameUi(snapshot.game).unit ?? t.points)(n);
}

export function Scores({ snapshot, name, teams }: { snapshot: Snapshot; name: (seat: number) => string; teams: Team[] }) {
  if (!snapshot.scores.length) return null;
  return (
    <ul class="scores" aria-label={teams.length ? t.table.teams : t.table.scores}>
      {sides(snapshot, teams, name).map((side) => (
        <li class={side.seats.some((s) => snapshot.to_act.includes(s)) ? "to-act" : ""}
          data-you={side.seats.includes(snapshot.seat) ? "" : undefined}>
          <span class="who">{side.label}</span>{" "}
          <span class="score">{unit(snapshot, snapshot.scores[side.seats[0] ?? 0] ?? 0)}</span>
        </li>
      ))}
    </ul>
  );
}

export function Result({ snapshot, name, teams }: { snapshot: Snapshot; name: (seat: number) => string; teams: Team[] }) {
  const result = snapshot.result;
  if (!result) return null;
  const rank = (side: Side) => result.ranks[side.seats[0] ?? 0] ?? 0;
  const placed = sides(snapshot, teams, name).sort((a, b) => rank(a) - rank(b));
  const shared = (side: Side) => placed.filter((other) => rank(other) === rank(side)).length > 1;
  return (
    <section class="result" id="result" aria-labelledby="result-title">
      <h2 id="result-title">{t.result.title}</h2>
      <ol class="places">
        {placed.map((side) => {
          const score = result.scores[side.seats[0] ?? 0];
          return (
            <li data-place={rank(side)}>
              <span class="place">{t.ordinal(rank(side))}</span>{" "}
              {side.label}
              {score === undefined ? "" : ` — ${unit(snapshot, score)}`}
              {shared(side) ? ` (${t.result.tied})` : ""}
            </li>
          );
        })}
      </ol>
      <p class="muted">{t.result.reasons[result.reason] ?? ""}</p>
      {snapshot.fairness?.seed ? (
        <details class="fairness">
          <summary>{t.result.fairness}</summary>
          <dl>
            <dt>{t.result.seed}</dt>
            <dd class="hex">{snapshot.fairness.seed}</dd>
            <dt>{t.result.fingerprint}</dt>
            <dd class="hex">{snapshot.fairness.seed_sha256}</dd>
          </dl>
          <p><a href={rulesUrl("fairness")}>{t.result.fairnessHow}</a></p>
        </details>
      ) : null}
    </section>
  );
}
