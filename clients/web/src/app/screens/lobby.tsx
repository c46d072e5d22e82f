/** The lobby: a new table (game, mode, players, computer players, the
 * game's options) or a match found by matchmaking; joining by invite code,
 * sitting at an open table, opening a table by id to play or watch; the rules. */
import { useEffect, useState } from "preact/hooks";
import type { GameInfo, Options, Table } from "../../api/types";
import type { Go } from "../app";
import { list, rulesUrl, t } from "../i18n";
import { rulesPage } from "../games";
import { client, isGuest } from "../session";
import { Card, ErrorNote, useAction } from "../ui/parts";
import { defaults, type OptionValues, OptionsForm, useOptionFields } from "./options";

const LAST_GAME = "rodada.game";

export function modeLabel(mode: string): string {
  return t.lobby.modes[mode] ?? mode;
}

export function Lobby({ games, go, error }: { games: GameInfo[]; go: Go; error?: string }) {
  const [gameName, setGameName] = useState(() => sessionStorage.getItem(LAST_GAME) ?? games[0]?.name ?? "");
  const game = games.find((g) => g.name === gameName) ?? games[0];
  if (!game) return <p>{t.loading}</p>;
  const pick = (name: string) => {
    sessionStorage.setItem(LAST_GAME, name);
    setGameName(name);
  };
  return (
    <div class="lobby">
      <NewTable key={game.name} games={games} game={game} pick={pick} go={go} error={error} />
      {game.open_tables ? <OpenTables game={game} go={go} /> : null}
      <JoinTable go={go} />
      <Card title={t.lobby.rulesTitle}>
        <ul class="rules-links">
          {games.map((g) => <li><a href={rulesUrl(rulesPage(g.name))}>{g.title}</a></li>)}
        </ul>
      </Card>
    </div>
  );
}

function NewTable({ games, game, pick, go, error }: {
  games: GameInfo[]; game: GameInfo; pick: (name: string) => void; go: Go; error?: string;
}) {
  const [modeName, setModeName] = useState(game.modes[0]?.name ?? "");
  const mode = game.modes.find((m) => m.name === modeName) ?? game.modes[0];
  const counts = mode?.seat_counts ?? [1];
  const [seats, setSeats] = useState(counts.includes(2) ? 2 : counts[0] ?? 1);
  const { fields } = useOptionFields(game);
  const [values, setValues] = useState<OptionValues | null>(null);
  const [cpu, setCpu] = useState<Set<number>>(new Set());
  const [ranked, setRanked] = useState(false);
  const action = useAction();
  useEffect(() => {
    if (fields && mode) setValues(defaults(game, mode.options ?? {}, fields));
  }, [fields, modeName]);
  useEffect(() => { if (error) action.setError(error); }, [error]);

  const chooseMode = (name: string) => {
    const next = game.modes.find((m) => m.name === name);
    setModeName(name);
    const nextCounts = next?.seat_counts ?? [1];
    if (!nextCounts.includes(seats)) setSeats(nextCounts.includes(2) ? 2 : nextCounts[0] ?? 1);
    setCpu(new Set());
  };
  const practice = new Set(game.practice_options ?? []);
  const practising = [...practice].some((name) => values?.[name] === true);
  const canRank = !!mode?.rated && !isGuest() && !practising;
  const options = (): Options => ({ ...(mode?.options ?? {}), ...(values ?? {}) }) as Options;
  const cpuSeats = [...cpu].filter((s) => s < seats).sort();

  const create = () => action.run(async () => {
    const table = await client.createTable(game.name, seats, options(), cpuSeats);
    go({ name: "table", tableId: table.id });
  });
  const find = () => action.run(async () => {
    const ticket = await client.findMatch(game.name, options(), canRank && ranked);
    if (ticket.table_id) go({ name: "table", tableId: ticket.table_id });
    else go({ name: "queue", search: { ticket, game: game.name, mode: mode?.name ?? "" } });
  });

  return (
    <Card title={t.lobby.newTable} class="new-table">
      <form onSubmit={(e) => { e.preventDefault(); create(); }} aria-busy={action.busy}>
        <div class="row">
          <p class="field">
            <label for="game">{t.lobby.game}</label>
            <select id="game" value={game.name} onChange={(e) => pick((e.target as HTMLSelectElement).value)}>
              {games.map((g) => <option value={g.name}>{g.title}</option>)}
            </select>
          </p>
          <p class="field">
            <label for="mode">{t.lobby.mode}</label>
            <select id="mode" value={mode?.name} disabled={game.modes.length < 2}
              onChange={(e) => chooseMode((e.target as HTMLSelectElement).value)}>
              {game.modes.map((m) => <option value={m.name}>{modeLabel(m.name)}</option>)}
            </select>
          </p>
          <p class="field">
            <label for="seats">{t.lobby.seats}</label>
            <select id="seats" value={String(seats)} disabled={counts.length < 2}
              onChange={(e) => setSeats(Number((e.target as HTMLSelectElement).value))}>
              {counts.map((n) => <option value={String(n)}>{n}</option>)}
            </select>
          </p>
        </div>
        {game.cpu_seats && seats > 1 ? (
          <fieldset class="cpu-seats">
            <legend>{t.lobby.cpuSeats}</legend>
            {Array.from({ length: seats - 1 }, (_, i) => i + 1).map((seat) => (
              <span class="check">
                <input type="checkbox" id={`cpu-seat-${seat}`} checked={cpu.has(seat)}
                  onChange={(e) => {
                    const next = new Set(cpu);
                    if ((e.target as HTMLInputElement).checked) next.add(seat);
                    else next.delete(seat);
                    setCpu(next);
                  }} />
                <label for={`cpu-seat-${seat}`}>{t.lobby.cpuSeat(t.seat(seat))}</label>
              </span>
            ))}
          </fieldset>
        ) : null}
        {fields && values ? <OptionsForm fields={fields} values={values} onChange={setValues} /> : null}
        {mode?.queued && mode.rated ? (isGuest() ? <p class="muted">{t.lobby.rankedGuest}</p> : (
          <p class="check">
            <input type="checkbox" id="ranked" checked={canRank && ranked} disabled={!canRank}
              aria-describedby="ranked-note" onChange={(e) => setRanked((e.target as HTMLInputElement).checked)} />
            <label for="ranked">{t.lobby.ranked}</label>
            <span id="ranked-note" class="muted">{practising ? ` ${t.lobby.rankedPractice}` : ""}</span>
          </p>
        )) : null}
        <div class="actions">
          <button type="submit" class="primary" data-action="create" disabled={action.busy || !values}>
            {t.lobby.create}
          </button>
          {mode?.queued ? (
            <button type="button" data-action="find" disabled={action.busy || !values || practising}
              title={t.lobby.findHint} onClick={find}>
              {t.lobby.find}
            </button>
          ) : null}
        </div>
        <ErrorNote error={action.error} />
      </form>
    </Card>
  );
}

function OpenTables({ game, go }: { game: GameInfo; go: Go }) {
  const [tables, setTables] = useState<Table[] | null>(null);
  const action = useAction();
  useEffect(() => {
    let live = true;
    const load = () => client.openTables(game.name).then((found) => live && setTables(found), () => undefined);
    void load();
    const timer = setInterval(load, 5000);
    return () => { live = false; clearInterval(timer); };
  }, [game.name]);
  return (
    <Card title={t.lobby.openTables} class="open-tables">
      {tables === null ? <p>{t.loading}</p> : tables.length === 0 ? <p class="muted">{t.lobby.noOpenTables}</p> : (
        <ul>
          {tables.map((table) => {
            const seated = table.players.filter((p) => p.name);
            return (
              <li>
                {t.lobby.openTable(list(seated.map((p) => p.name)), seated.length, table.seats)}{" "}
                <button type="button" disabled={action.busy}
                  onClick={() => action.run(async () => {
                    await client.sit(table.id);
                    go({ name: "table", tableId: table.id });
                  })}>
                  {t.lobby.sit}
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <ErrorNote error={action.error} />
    </Card>
  );
}

function JoinTable({ go }: { go: Go }) {
  const [code, setCode] = useState("");
  const [tableId, setTableId] = useState("");
  const action = useAction();
  return (
    <Card title={t.lobby.joinTitle} class="join">
      <form class="row" onSubmit={(e) => {
        e.preventDefault();
        action.run(async () => {
          const table = await client.join(code.trim());
          go({ name: "table", tableId: table.id });
        });
      }}>
        <p class="field">
          <label for="invite-code">{t.lobby.inviteCode}</label>
          <input id="invite-code" value={code} autocomplete="off" required
            onInput={(e) => setCode((e.target as HTMLInputElement).value)} />
        </p>
        <button type="submit" data-action="join" disabled={action.busy}>{t.lobby.join}</button>
      </form>
      <ErrorNote error={action.error} />
      <form class="row" onSubmit={(e) => {
        e.preventDefault();
        if (tableId.trim()) go({ name: "table", tableId: tableId.trim() });
      }}>
        <p class="field">
          <label for="table-id">{t.lobby.tableId}</label>
          <input id="table-id" value={tableId} autocomplete="off" required
            onInput={(e) => setTableId((e.target as HTMLInputElement).value)} />
        </p>
        <button type="submit" data-action="open">{t.lobby.open}</button>
      </form>
    </Card>
  );
}
