/**
 * The page: a header (the site, its sections, the language, who is signed
 * in) over one screen at a time — log in, the lobby, matchmaking, a table.
 * The table's id is in the URL (`?table=ID`), so a reload or a closed tab
 * comes back to the same seat; an invite link is `?invite=CODE`.
 *
 * Sections are listed once in SECTIONS: the community's screens (friends,
 * messages, tournaments, leaderboards, profile) slot in beside "Play" as
 * more routes with their own screens.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiRefused } from "../api/client";
import type { GameInfo } from "../api/types";
import { LANGS, type Lang, lang, rulesUrl, setLang, t } from "./i18n";
import { Lobby } from "./screens/lobby";
import { Login } from "./screens/login";
import { Queue, type Search } from "./screens/queue";
import { client, errorText } from "./session";
import { TableScreen } from "./table/table";
import { ErrorNote } from "./ui/parts";

export type Route =
  | { name: "login" }
  | { name: "lobby"; error?: string }
  | { name: "queue"; search: Search }
  | { name: "table"; tableId: string };

export type Go = (route: Route) => void;

function setUrl(params: Record<string, string>): void {
  const url = new URL(location.href);
  url.search = new URLSearchParams(params).toString();
  history.replaceState(null, "", url);
}

/** Where the page starts: a table or an invite in the URL, else the lobby. */
function firstRoute(): Route {
  if (!client.user) return { name: "login" };
  const tableId = new URLSearchParams(location.search).get("table");
  return tableId ? { name: "table", tableId } : { name: "lobby" };
}

export function App({ initialLang }: { initialLang: Lang }) {
  const [language, setLanguage] = useState<Lang>(initialLang);
  const [route, setRoute] = useState<Route>(firstRoute);
  const [games, setGames] = useState<GameInfo[] | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  const go: Go = (next) => {
    if (next.name === "table") setUrl({ table: next.tableId });
    else if (next.name !== "login" || route.name === "table") setUrl({});
    setRoute(next);
  };

  useEffect(() => {
    client.games().then(setGames, (error: unknown) => setFailure(errorText(error)));
  }, []);

  // An invite link: join once signed in, then sit at the table.
  const invite = new URLSearchParams(location.search).get("invite");
  useEffect(() => {
    if (!invite || route.name === "login") return;
    client.join(invite).then(
      (table) => go({ name: "table", tableId: table.id }),
      (error: unknown) => go({ name: "lobby", error: errorText(error) }),
    );
  }, [invite, route.name === "login"]);

  // A stored session the server no longer knows: back to the log-in.
  useEffect(() => {
    if (!client.user) return;
    client.me().catch((error: unknown) => {
      if (error instanceof ApiRefused && error.status === 401) {
        client.logOut();
        setRoute({ name: "login" });
      }
    });
  }, []);

  const choose = (next: Lang) => {
    setLang(next, true);
    setLanguage(next);
  };
  const logOut = () => {
    client.logOut();
    go({ name: "login" });
  };
  const user = route.name === "login" ? null : client.user;
  const waitingForInvite = invite !== null && route.name === "lobby" && !route.error;

  let screen;
  if (route.name === "login") screen = <Login done={() => setRoute(firstRoute())} />;
  else if (!games) screen = failure ? <ErrorNote error={failure} /> : <p>{t.loading}</p>;
  else if (route.name === "table") screen = <TableScreen key={route.tableId} tableId={route.tableId} games={games} go={go} />;
  else if (route.name === "queue") screen = <Queue search={route.search} games={games} go={go} />;
  else if (waitingForInvite) screen = <p>{t.loading}</p>;
  else screen = <Lobby games={games} go={go} error={route.error} />;

  return (
    <div class="page" data-lang={language}>
      <header class="site">
        <p class="brand"><a href="/">{t.appName}</a></p>
        <nav aria-label={t.nav.label}>
          <ul>
            {SECTIONS.map((section) => (
              <li>
                {section.href
                  ? <a href={section.href()}>{section.label()}</a>
                  : <a href="/" aria-current={route.name !== "login" && route.name !== "table" ? "page" : undefined}
                      onClick={(event) => { event.preventDefault(); if (user) go({ name: "lobby" }); }}>
                      {section.label()}
                    </a>}
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          <label class="language">
            <span class="visually-hidden">{t.nav.language}</span>
            <select value={lang} onChange={(event) => choose((event.target as HTMLSelectElement).value as Lang)}
              data-action="language">
              {LANGS.map((l) => <option value={l.code} lang={l.code}>{l.name}</option>)}
            </select>
          </label>
          {user ? (
            <>
              <span id="who" title={t.nav.signedInAs(user.name)}>{user.name}</span>
              <button type="button" id="logout" class="quiet" onClick={logOut}>{t.nav.logOut}</button>
            </>
          ) : null}
        </div>
      </header>
      <main id="app">{screen}</main>
    </div>
  );
}

/** The site's sections: a route of the page, or a page of the site. */
const SECTIONS: { label: () => string; href?: () => string }[] = [
  { label: () => t.nav.play },
  { label: () => t.nav.rules, href: () => rulesUrl() },
];
