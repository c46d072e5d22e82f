/**
 * The page: a header (the site, its sections, the language, who is signed
 * in) over one screen at a time — log in, the lobby, matchmaking, a table.
 * The table's id is in the URL (`?table=ID`), so a reload or a closed tab
 * comes back to the same seat; an invite link is `?invite=CODE`.
 *
 * Sections are listed once in SECTIONS: "Play", then the community —
 * friends (and private messages), tournaments, leaderboards and leagues,
 * one's profile — each a route in the URL (`?section=…`, `?tournament=ID`,
 * `?profile=ID`, `?chat=ID`), then the rules. The social feed runs while an
 * account is signed in; friends' table invitations show on every screen.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiRefused } from "../api/client";
import type { GameInfo } from "../api/types";
import { LANGS, type Lang, lang, rulesUrl, setLang, t } from "./i18n";
import { FriendsScreen, Invites } from "./screens/friends";
import { LeaderboardsScreen } from "./screens/leaderboards";
import { Lobby } from "./screens/lobby";
import { Login } from "./screens/login";
import { MessagesScreen } from "./screens/messages";
import { ProfileScreen } from "./screens/profile";
import { Queue, type Search } from "./screens/queue";
import { TournamentScreen, TournamentsScreen } from "./screens/tournaments";
import { client, errorText, gameTitles } from "./session";
import { social, useSocial } from "./social";
import { TableScreen } from "./table/table";
import { ErrorNote } from "./ui/parts";

export type Route =
  | { name: "login" }
  | { name: "lobby"; error?: string }
  | { name: "queue"; search: Search }
  | { name: "table"; tableId: string }
  | { name: "friends" }
  | { name: "messages"; userId: string; userName: string }
  | { name: "tournaments" }
  | { name: "tournament"; tournamentId: string }
  | { name: "leaderboards" }
  | { name: "profile"; userId: string; userName: string };

export type Go = (route: Route) => void;

function setUrl(params: Record<string, string>): void {
  const url = new URL(location.href);
  url.search = new URLSearchParams(params).toString();
  history.replaceState(null, "", url);
}

/** A route's place in the URL, so that a reload (or a shared link) comes back to it. */
function urlOf(route: Route): Record<string, string> {
  switch (route.name) {
    case "table": return { table: route.tableId };
    case "tournament": return { tournament: route.tournamentId };
    case "messages": return { chat: route.userId, name: route.userName };
    case "profile": return { profile: route.userId, name: route.userName };
    case "friends": case "tournaments": case "leaderboards": return { section: route.name };
    default: return {};
  }
}

/** Where the page starts: the route in the URL (a table, a tournament, …), else the lobby. */
function firstRoute(): Route {
  if (!client.user) return { name: "login" };
  const query = new URLSearchParams(location.search);
  const tableId = query.get("table");
  const tournamentId = query.get("tournament");
  const chat = query.get("chat");
  const profile = query.get("profile");
  const name = query.get("name") ?? "";
  const section = query.get("section");
  if (tableId) return { name: "table", tableId };
  if (tournamentId) return { name: "tournament", tournamentId };
  if (chat) return { name: "messages", userId: chat, userName: name };
  if (profile) return { name: "profile", userId: profile, userName: name };
  if (section === "friends" || section === "tournaments" || section === "leaderboards") return { name: section };
  return { name: "lobby" };
}

export function App({ initialLang }: { initialLang: Lang }) {
  const [language, setLanguage] = useState<Lang>(initialLang);
  const [route, setRoute] = useState<Route>(firstRoute);
  const [games, setGames] = useState<GameInfo[] | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  const { invites, unreadTotal, notices } = useSocial();

  const go: Go = (next) => {
    if (next.name !== "login" || route.name !== "lobby") setUrl(urlOf(next));
    setRoute(next);
    window.scrollTo(0, 0);
  };

  useEffect(() => {
    client.games().then((found) => {
      for (const game of found) gameTitles.set(game.name, game.title);
      setGames(found);
    }, (error: unknown) => setFailure(errorText(error)));
  }, []);

  // The social feed follows whoever is signed in (none for guests).
  useEffect(() => {
    if (route.name === "login") social.stop();
    else social.start();
  }, [route.name === "login", client.user?.id]);

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
    social.stop();
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
  else if (route.name === "friends") screen = <FriendsScreen go={go} />;
  else if (route.name === "messages") screen = <MessagesScreen key={route.userId} userId={route.userId} userName={route.userName} go={go} />;
  else if (route.name === "tournaments") screen = <TournamentsScreen go={go} />;
  else if (route.name === "tournament") screen = <TournamentScreen key={route.tournamentId} tournamentId={route.tournamentId} go={go} />;
  else if (route.name === "leaderboards") screen = <LeaderboardsScreen games={games} go={go} />;
  else if (route.name === "profile") screen = <ProfileScreen key={route.userId} userId={route.userId} userName={route.userName} go={go} />;
  else if (waitingForInvite) screen = <p>{t.loading}</p>;
  else screen = <Lobby games={games} go={go} error={route.error} />;

  return (
    <div class="page" data-lang={language}>
      <header class="site">
        <p class="brand"><a href="/">{t.appName}</a></p>
        <nav aria-label={t.nav.label}>
          <ul>
            {SECTIONS.filter((section) => user || !section.route).map((section) => {
              const target = section.route?.();
              const current = target && sectionOf(route) === target.name;
              const waiting = section.id === "friends" ? invites.length + unreadTotal
                : section.id === "tournaments" ? notices.length : 0;
              return (
                <li>
                  <a href={target ? `/?${new URLSearchParams(urlOf(target))}` : section.href?.()} data-section={section.id}
                    aria-current={current ? "page" : undefined}
                    onClick={target ? (event) => { event.preventDefault(); go(target); } : undefined}>
                    {section.label()}
                    {waiting ? <span class="badge" aria-label={t.nav.waiting(waiting)}>{waiting}</span> : null}
                  </a>
                </li>
              );
            })}
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
      <main id="app">
        {user && route.name !== "login" ? <Invites go={go} /> : null}
        {screen}
      </main>
    </div>
  );
}

/** The section a route belongs to (a tournament to the tournaments, messages to the friends). */
function sectionOf(route: Route): Route["name"] {
  switch (route.name) {
    case "queue": case "lobby": return "lobby";
    case "tournament": return "tournaments";
    case "messages": return "friends";
    case "profile": return route.userId === client.user?.id ? "profile" : "leaderboards";
    default: return route.name;
  }
}

/** The site's sections: a route of the page (signed in), or a page of the site. */
const SECTIONS: { id: string; label: () => string; route?: () => Route; href?: () => string }[] = [
  { id: "play", label: () => t.nav.play, route: () => ({ name: "lobby" }) },
  { id: "friends", label: () => t.nav.friends, route: () => ({ name: "friends" }) },
  { id: "tournaments", label: () => t.nav.tournaments, route: () => ({ name: "tournaments" }) },
  { id: "leaderboards", label: () => t.nav.leaderboards, route: () => ({ name: "leaderboards" }) },
  {
    id: "profile",
    label: () => t.nav.profile,
    route: () => ({ name: "profile", userId: client.user?.id ?? "", userName: client.user?.name ?? "" }),
  },
  { id: "rules", label: () => t.nav.rules, href: () => rulesUrl() },
];
