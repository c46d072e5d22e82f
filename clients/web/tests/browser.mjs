// The reference web client in a real browser (Debian's headless chromium,
// driven by playwright-core), in English and Brazilian Portuguese, on a
// desktop (1280x800) and a phone (390x844):
//
// - yatzy: a duel (desktop, English; phone, Portuguese) watched by a
//   spectator; table chat between the two players and the spectator (each
//   channel reaching only its own); one player closes the tab mid-match and
//   comes back to the same seat with an expired access token.
// - dudo: a duel (phone, Portuguese, assisted with odds; desktop, English),
//   one feed cut as a draining replica would and resumed, one player back
//   after closing the tab.
// - bozo, bozu_mekuri, domino: one player (alone, or with CPUs) to the end,
//   half the moves from the keyboard, the page switched to the other size and
//   the other language halfway.
// - matchmaking: a wrong password shown and cleared, sign up, log out, log
//   in, then a Bozó duel found by matchmaking (the queue screen shown).
// - claim: an idle Dudo seat claimed against (pytest makes its time run out).
// - community (desktop, English; phone, Portuguese): two accounts become
//   friends and exchange private messages, then play a ranked Bozó duel found
//   by matchmaking; one invites the other to the seat
//   opposite at a Dominó table, then reports and blocks from the table chat;
//   both register for a Swiss and then a knockout Dudo tournament an admin
//   (ADMIN_USER/ADMIN_PASSWORD) announced and starts, play their boards, and
//   follow each live to its end; a Dominó team registers with its code, one
//   partner withdraws and the other is told (badge, notice with the code);
//   the rankings and a profile.
// - nim: the tests' game, with no client code of its own, played to the end
//   by two players on the generic board.
//
// Every screen is screenshotted into ARTIFACTS, must be no wider than its
// viewport, and is checked by axe-core (0 serious or critical violations);
// every request the pages make must go to the gateway. Run by
// tests/web/test_browser.py:
//
//   node tests/browser.mjs <gateway URL> <artifacts dir> [yatzy|dudo|bozo|bozu_mekuri|domino|matchmaking|claim|community|nim ...]
//
// Prints one JSON line per scenario (with its `error` if it failed, and its
// pages' requests outside the gateway); exits non-zero if any failed.
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const [base, artifacts, ...wanted] = process.argv.slice(2);
const scenarios = wanted.length ? wanted : ["yatzy", "dudo"];
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const STEP_MS = 20_000;
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const DESKTOP = { viewport: { width: 1280, height: 800 } };
const EN = { locale: "en-US" };
const PT = { locale: "pt-BR" };
mkdirSync(artifacts, { recursive: true });

const foreign = [];
function watch(page) {
  const origin = new URL(base).origin;
  const wsOrigin = origin.replace(/^http/, "ws");
  page.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith(origin + "/") && !url.startsWith("data:")) foreign.push(url);
  });
  page.on("websocket", (socket) => {
    if (!socket.url().startsWith(wsOrigin + "/")) foreign.push(socket.url());
  });
  page.on("pageerror", (error) => foreign.push(`page error: ${error.message}`));
}

async function context(browser, size, lang) {
  return browser.newContext({ ...size, ...lang });
}

async function newPage(ctx, url) {
  const page = await ctx.newPage();
  watch(page);
  if (url) await page.goto(url);
  return page;
}

async function guest(page, name) {
  await page.fill("#guest-name", name);
  await page.click("[data-action=guest]");
  await page.waitForSelector("#logout", { timeout: STEP_MS });
}

/** A screen: its screenshot, no wider than the viewport, and no serious or
 * critical accessibility violation (axe-core). Returns the screenshot's path. */
async function screen(page, name) {
  await page.waitForTimeout(400); // let the short animations finish
  const path = join(artifacts, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  const [wide, viewport] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  if (wide > viewport) throw new Error(`${name}: the page is ${wide} px wide in a ${viewport} px viewport`);
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const found = await window.axe.run(document, { resultTypes: ["violations"] });
    return found.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")}`);
  });
  if (violations.length) throw new Error(`${name}: accessibility violations:\n${violations.join("\n")}`);
  return path;
}

/** The match's version on the page (0 before a snapshot). */
async function version(page) {
  const value = await page.locator(".match").first().getAttribute("data-version", { timeout: 1000 }).catch(() => null);
  return value === null ? 0 : Number(value);
}

/** Click (or with `keyboard`, focus and press Enter) and wait until the
 * page's match version moves past the one it showed. */
async function actAndWait(page, selector, keyboard = false) {
  const before = await version(page);
  if (keyboard) {
    await page.focus(selector);
    await page.keyboard.press("Enter");
  } else {
    await page.click(selector);
  }
  await page.waitForFunction(
    (v) => Number(document.querySelector(".match")?.getAttribute("data-version") ?? 0) > v,
    before,
    { timeout: STEP_MS },
  );
}

/** A table opened by `host` with `options`, joined by `other` through the invite link. */
async function openTable(host, other, game, options = {}) {
  await host.selectOption("#game", game);
  await host.selectOption("#seats", "2");
  for (const [field, value] of Object.entries(options)) await host.selectOption(`#option-${field}`, String(value));
  await host.click("[data-action=create]");
  const link = await host.locator("#invite-link").inputValue({ timeout: STEP_MS });
  const tableId = new URL(host.url()).searchParams.get("table");
  await other.goto(link);
  await guest(other, "Bia");
  await host.waitForSelector("[data-action=start]:not([disabled])", { timeout: STEP_MS });
  await host.click("[data-action=start]");
  for (const page of [host, other]) await page.waitForSelector(".match", { timeout: STEP_MS });
  return { link, tableId };
}

/** Route the page's table feeds through the test: their hellos are kept,
 * and `cut` closes the newest as a draining replica does (1012). */
async function proxyFeeds(page) {
  const feeds = [];
  await page.routeWebSocket(/\/v1\/tables\/[^/]+\/events$/, (socket) => {
    const server = socket.connectToServer();
    const feed = { hellos: [], cut: () => { socket.close({ code: 1012, reason: "draining" }); server.close(); } };
    socket.onMessage((message) => {
      feed.hellos.push(JSON.parse(String(message)));
      server.send(message);
    });
    feeds.push(feed);
  });
  return feeds;
}

/** Cut the page's feed; it must connect again and resume after the last event it had. */
async function cutAndResume(page, feeds) {
  const before = feeds.length;
  feeds[before - 1].cut();
  const deadline = Date.now() + STEP_MS;
  while (!(feeds.length > before && feeds[before].hellos.length)) {
    if (Date.now() > deadline) throw new Error("the feed did not reconnect after it was cut");
    await page.waitForTimeout(50);
  }
  const resumedFrom = feeds[before].hellos[0].after_event_id;
  if (!(resumedFrom > 0)) throw new Error(`the feed started over (after_event_id ${resumedFrom}) instead of resuming`);
  await page.waitForSelector("#status[data-state=reconnected]", { timeout: STEP_MS });
  return resumedFrom;
}

/** Whose turn it is: the page whose turn line says so (waits for one). */
async function mover(pages) {
  const deadline = Date.now() + STEP_MS;
  while (Date.now() < deadline) {
    for (const page of pages) {
      if (await page.locator("#result").count()) return null;
      if (await page.locator(".turn[data-turn=mine]").count()) return page;
    }
    await pages[0].waitForTimeout(50);
  }
  throw new Error("nobody's turn came");
}

/** Close the tab of `ctx`'s page and open the table again in a new one
 * (with its stored access token expired meanwhile). */
async function comeBack(ctx, page, tableId, seatName) {
  const used = await page.evaluate(() => {
    const session = JSON.parse(localStorage.getItem("rodada.session"));
    localStorage.setItem("rodada.session", JSON.stringify({ ...session, access_token: "expired" }));
    return session.refresh_token;
  });
  await page.close();
  const again = await newPage(ctx, `${base}/?table=${tableId}`);
  await again.waitForSelector(".match", { timeout: STEP_MS });
  const refreshed = await again.evaluate(() => JSON.parse(localStorage.getItem("rodada.session")));
  if (refreshed.refresh_token === used || refreshed.access_token === "expired") {
    throw new Error("the expired session was not refreshed");
  }
  const mine = await again.locator(".match [data-you]").first().innerText();
  if (!mine.startsWith(seatName)) throw new Error(`came back to "${mine}", not ${seatName}'s seat`);
  return again;
}

/** The places of the result, as [place, line]. */
async function places(page) {
  await page.waitForSelector("#result", { timeout: STEP_MS });
  return page.locator("#result .places li").evaluateAll((items) => items.map((li) => [li.dataset.place, li.innerText]));
}

/** Say something in the table chat and wait until it shows on the sender's page. */
async function say(page, text) {
  await page.fill("#chat-text", text);
  await page.press("#chat-text", "Enter");
  await page.locator(".messages li .text", { hasText: text }).first().waitFor({ timeout: STEP_MS });
}

async function messages(page) {
  return page.locator(".messages li .text").allInnerTexts();
}

async function yatzy(browser) {
  const a = await context(browser, DESKTOP, EN);
  const b = await context(browser, PHONE, PT);
  let ana = await newPage(a, base);
  const shots = [await screen(ana, "login-desktop-en")];
  await guest(ana, "Ana");
  await ana.waitForSelector("#game");
  shots.push(await screen(ana, "lobby-desktop-en"));
  let bia = await newPage(b);
  const { tableId } = await openTable(ana, bia, "yatzy", { card: "SCANDINAVIAN" });
  const c = await context(browser, PHONE, EN);
  const cai = await newPage(c, `${base}/?table=${tableId}`);
  await guest(cai, "Cai");
  await cai.waitForSelector(".match[data-seat='-1']", { timeout: STEP_MS });

  // Table chat: the players hear each other; the spectator's channel is his own.
  const hello = "Olá, Bia! Boa sorte, ação!";
  const aside = "Cai assistindo <b>não é HTML</b>";
  await say(ana, hello);
  await bia.locator(".messages li .text", { hasText: hello }).waitFor({ timeout: STEP_MS });
  await say(bia, "Valeu, Ana!");
  await ana.locator(".messages li .text", { hasText: "Valeu, Ana!" }).waitFor({ timeout: STEP_MS });
  await say(cai, aside);
  const shown = await cai.locator(".messages li[data-channel=spectators] .text").first().innerText();
  if (shown !== aside) throw new Error(`the spectator's message shows as "${shown}", not its text`);
  await ana.waitForTimeout(1000);
  for (const page of [ana, bia]) {
    if ((await messages(page)).includes(aside)) throw new Error("a player saw the spectators' chat");
  }
  if ((await messages(cai)).includes(hello)) throw new Error("the spectator saw the players' chat");
  shots.push(await screen(cai, "yatzy-spectator-chat-phone-en"));

  let actions = 0;
  let reconnected = false;
  for (;;) {
    const page = await mover([ana, bia]);
    if (!page) break;
    // Roll once, keep the first two dice, roll again, then score the best preview.
    await actAndWait(page, "[data-action=roll]");
    await page.click("[data-die='0']");
    await page.click("[data-die='1']");
    if (actions === 6) shots.push(await screen(page, page === ana ? "yatzy-kept-desktop-en" : "yatzy-kept-phone-pt"));
    await actAndWait(page, "[data-action=roll]");
    const previews = page.locator("button[data-box]");
    if ((await previews.count()) === 0) throw new Error("no score previews on the mover's card");
    let best = 0;
    let bestPoints = -1;
    for (let i = 0; i < (await previews.count()); i++) {
      const points = parseInt(await previews.nth(i).innerText(), 10);
      if (points > bestPoints) [best, bestPoints] = [i, points];
    }
    if (actions === 9) shots.push(await screen(page, page === ana ? "yatzy-previews-desktop-en" : "yatzy-previews-phone-pt"));
    await actAndWait(page, `button[data-box] >> nth=${best}`);
    actions += 3;
    if (!reconnected && actions >= 12 && page === bia) {
      bia = await comeBack(b, bia, tableId, "Bia");
      reconnected = true;
    }
  }
  const result = await places(ana);
  for (const page of [bia, cai]) await page.waitForSelector("#result", { timeout: STEP_MS });
  shots.push(
    await screen(ana, "yatzy-final-desktop-en"),
    await screen(bia, "yatzy-final-phone-pt"),
    await screen(cai, "yatzy-final-spectator-phone-en"),
  );
  for (const ctx of [a, b, c]) await ctx.close();
  if (!reconnected) throw new Error("the reconnection never happened");
  return { scenario: "yatzy", actions, reconnected, chat: true, result, screenshots: shots };
}

async function dudo(browser) {
  const a = await context(browser, PHONE, PT);
  const b = await context(browser, DESKTOP, EN);
  let ana = await newPage(a, base);
  const shots = [await screen(ana, "login-phone-pt")];
  await guest(ana, "Ana");
  await ana.waitForSelector("#game");
  await ana.selectOption("#game", "dudo");
  shots.push(await screen(ana, "lobby-dudo-options-phone-pt"));
  const bia = await newPage(b);
  // Bia's table feed goes through a route that can cut it, as a network drop
  // or a draining replica would: her page must reconnect and resume.
  const feeds = await proxyFeeds(bia);
  const { tableId } = await openTable(ana, bia, "dudo", { dice_per_player: 2 });
  // Ana plays assisted: the odds of the standing bid and of her own bid.
  await actAndWait(ana, "[data-action=assist]");
  let actions = 0;
  let reconnected = false;
  let oddsSeen = false;
  let resumedFrom = 0;
  for (;;) {
    const page = await mover([ana, bia]);
    if (!page) break;
    if (page === ana) {
      await ana.click("[data-action=odds]");
      await ana.waitForSelector("output.odds", { timeout: STEP_MS });
      oddsSeen = true;
    }
    if (actions === 1) shots.push(await screen(page, page === ana ? "dudo-bid-phone-pt" : "dudo-bid-desktop-en"));
    if (await page.locator("[data-action=dudo]").count()) {
      if (page === ana && actions > 2 && actions < 6) shots.push(await screen(ana, `dudo-assisted-phone-pt-${actions}`));
      await actAndWait(page, "[data-action=dudo]");
    } else {
      await actAndWait(page, "[data-action=bid]");
    }
    actions += 1;
    if (actions === 2) resumedFrom = await cutAndResume(bia, feeds);
    if (!reconnected && actions >= 3 && page === ana) {
      ana = await comeBack(a, ana, tableId, "Ana");
      reconnected = true;
    }
  }
  const result = await places(bia);
  await ana.waitForSelector("#result", { timeout: STEP_MS });
  shots.push(await screen(ana, "dudo-final-phone-pt"), await screen(bia, "dudo-final-desktop-en"));
  await a.close();
  await b.close();
  if (!reconnected) throw new Error("the reconnection never happened");
  if (!oddsSeen) throw new Error("assisted mode never showed odds");
  if (!resumedFrom) throw new Error("the feed was never cut and resumed");
  return { scenario: "dudo", actions, reconnected, resumedFrom, result, screenshots: shots };
}

/** One player against the game's CPUs (or alone): open a table, start it,
 * and on each turn press what `choose` picks (every other move from the
 * keyboard), until the result shows. Halfway (`switchAt` moves) the page
 * changes to the other size and the other language. */
async function solo(browser, game, { seats, mode, cpuSeats = [], checked = [], chosen = {}, start, switchAt, choose, check }) {
  const [size, lang] = start;
  const ctx = await context(browser, size, lang);
  const page = await newPage(ctx, base);
  await guest(page, "Ana");
  await page.selectOption("#game", game);
  if (mode) await page.selectOption("#mode", mode);
  if (await page.locator("#seats:not([disabled])").count()) await page.selectOption("#seats", String(seats));
  for (const seat of cpuSeats) await page.check(`#cpu-seat-${seat}`);
  for (const option of checked) await page.check(`#option-${option}`);
  for (const [option, value] of Object.entries(chosen)) await page.selectOption(`#option-${option}`, value);
  await page.click("[data-action=create]");
  await page.waitForSelector("[data-action=start]:not([disabled])", { timeout: STEP_MS });
  const tag = (s) => `${s === PHONE ? "phone" : "desktop"}`;
  let where = `${tag(size)}-${lang === PT ? "pt" : "en"}`;
  const shots = [await screen(page, `${game}-table-${where}`)];
  await page.click("[data-action=start]");
  await page.waitForSelector(".match", { timeout: STEP_MS });
  const seen = new Set();
  let actions = 0;
  let switched = false;
  for (;;) {
    const mine = await mover([page]);
    if (!mine) break;
    const selector = await choose(page, actions);
    await actAndWait(page, selector, actions % 2 === 0);
    actions += 1;
    for (const found of await check(page)) {
      if (!seen.has(found)) {
        seen.add(found);
        shots.push(await screen(page, `${game}-${found}-${where}`));
      }
    }
    if (!switched && actions >= switchAt) {
      shots.push(await screen(page, `${game}-playing-${where}`));
      const other = size === PHONE ? DESKTOP : PHONE;
      await page.setViewportSize(other.viewport);
      await page.selectOption("[data-action=language]", lang === PT ? "en" : "pt-BR");
      where = `${tag(other)}-${lang === PT ? "en" : "pt"}`;
      shots.push(await screen(page, `${game}-playing-${where}`));
      switched = true;
    }
  }
  if (!switched) throw new Error(`the match ended before move ${switchAt}: nothing was played in the other size`);
  const result = await places(page);
  shots.push(await screen(page, `${game}-final-${where}`));
  await ctx.close();
  return { scenario: game, actions, seen: [...seen], result, screenshots: shots };
}

/** Bozó alone on a practice table: each turn thrown with the cup, read
 * alternately "cantar embaixo" and "por cima", then the best preview
 * scored; the conversions (e.g. "6 → 1") must show, and the advice once. */
async function bozo(browser) {
  let declared = 0;
  let advised = false;
  const outcome = await solo(browser, "bozo", {
    seats: 1, mode: "solo", checked: ["advice"], start: [DESKTOP, PT], switchAt: 12,
    choose: async (page) => {
      if (await page.locator("[data-action=bottom]").count()) return declared++ % 2 ? "[data-action=top]" : "[data-action=bottom]";
      if ((await page.locator("[data-action=cup]:not([disabled])").count()) && !(await page.locator("button[data-box]").count())) return "[data-action=cup]";
      return "button[data-box] >> nth=0";
    },
    check: async (page) => {
      if (!advised && (await page.locator("button[data-box]").count())) {
        await page.click("[data-action=advice]");
        // (The advice is worked out by the game service: slower than a move on a loaded machine.)
        await page.locator(".advice-moves li").first().waitFor({ timeout: 3 * STEP_MS });
        advised = true;
        return ["advice"];
      }
      return [
        ...((await page.locator(".conversion").count()) ? ["embaixo"] : []),
        ...((await page.locator("[data-action=bottom]").count()) ? ["cup"] : []),
      ];
    },
  });
  if (!outcome.seen.includes("embaixo")) throw new Error("no 'cantar embaixo' conversion was shown");
  if (!outcome.seen.includes("advice")) throw new Error("the practice table's advice was never shown");
  return outcome;
}

/** Bozu Mekuri against a CPU: flip until the deck runs out; the poets' cards
 * show. Semimaru counts as a noble here, so that nobody is knocked out
 * before the page has changed size and language. */
async function bozuMekuri(browser) {
  return solo(browser, "bozu_mekuri", {
    seats: 2, cpuSeats: [1], chosen: { semimaru: "AS_NOBLE" }, start: [PHONE, EN], switchAt: 10,
    choose: async () => "[data-action=flip]",
    check: async (page) => ((await page.locator(".flipped .poet").count()) ? ["poet"] : []),
  });
}

/** Dominó with three CPUs: lay the first tile that fits, until a team wins
 * (which may take one round: the page changes size and language early). */
async function domino(browser) {
  return solo(browser, "domino", {
    seats: 4, cpuSeats: [1, 2, 3], start: [PHONE, PT], switchAt: 2,
    choose: async () => "[data-tile] >> nth=0",
    check: async (page) => ((await page.locator(".line .tile").count()) >= 4 ? ["line"] : []),
  });
}

/** A wrong password is shown and cleared; sign up, log out, log in again;
 * then two players find a Bozó duel by matchmaking and both land at the
 * started table. */
async function matchmaking(browser) {
  const a = await context(browser, DESKTOP, PT);
  const b = await context(browser, PHONE, EN);
  const ana = await newPage(a, base);
  const username = `ana${Date.now().toString(36)}`;
  await ana.fill("#username", username);
  await ana.fill("#password", "wrong password");
  await ana.click("[data-action=login]");
  await ana.locator(".login [role=alert]").waitFor({ timeout: STEP_MS });
  const shots = [await screen(ana, "login-error-desktop-pt")];
  if (await ana.locator("#logout").count()) throw new Error("'Log out' shows on the log-in screen");
  await ana.fill("#password", "correct horse battery");
  await ana.click("[data-action=signup]");
  await ana.waitForSelector("#game", { timeout: STEP_MS });
  if (await ana.locator("[role=alert]").count()) throw new Error("the log-in's error stayed on the lobby");
  await ana.click("#logout");
  await ana.fill("#username", username);
  await ana.fill("#password", "correct horse battery");
  await ana.click("[data-action=login]");
  await ana.waitForSelector("#game", { timeout: STEP_MS });
  const who = await ana.locator("#who").innerText();
  if (who !== username) throw new Error(`logged in as "${who}", not ${username}`);
  await ana.selectOption("#game", "bozo");
  await ana.selectOption("#mode", "duel");
  shots.push(await screen(ana, "lobby-account-desktop-pt"));
  await ana.click("[data-action=find]");
  await ana.waitForSelector("#ticket-state", { timeout: STEP_MS });
  await ana.waitForTimeout(1500);
  const queued = await ana.locator(".queue").innerText();
  shots.push(await screen(ana, "queue-desktop-pt"));
  const bia = await newPage(b, base);
  await guest(bia, "Bia");
  await bia.waitForSelector("#game", { timeout: STEP_MS });
  await bia.selectOption("#game", "bozo");
  await bia.selectOption("#mode", "duel");
  await bia.click("[data-action=find]");
  for (const page of [ana, bia]) await page.waitForSelector(".match", { timeout: 60_000 });
  const tables = await Promise.all([ana, bia].map((page) => new URL(page.url()).searchParams.get("table")));
  if (!tables[0] || tables[0] !== tables[1]) throw new Error(`matched to different tables: ${tables}`);
  shots.push(await screen(bia, "bozo-duel-matched-phone-en"), await screen(ana, "bozo-duel-matched-desktop-pt"));
  // A guest's community: what needs an account is said so; their own profile has no error.
  await section(bia, "friends");
  await bia.locator(".card", { hasText: "account" }).first().waitFor({ timeout: STEP_MS });
  shots.push(await screen(bia, "friends-guest-phone-en"));
  await section(bia, "profile");
  await bia.locator(".profile .match-list li, .profile .matches .muted").first().waitFor({ timeout: STEP_MS });
  if (await bia.locator("[role=alert]").count()) throw new Error(`the guest's profile shows an error: ${await bia.locator("[role=alert]").first().innerText()}`);
  shots.push(await screen(bia, "profile-guest-phone-en"));
  await section(bia, "tournaments");
  await bia.locator(".tournaments .card").first().waitFor({ timeout: STEP_MS });
  shots.push(await screen(bia, "tournaments-guest-phone-en"));
  // The rules, in both languages.
  await ana.goto(`${base}/rules/pt-BR/`);
  shots.push(await screen(ana, "rules-index-desktop-pt"));
  await bia.goto(`${base}/rules/en/dudo`);
  shots.push(await screen(bia, "rules-dudo-phone-en"));
  await a.close();
  await b.close();
  return { scenario: "matchmaking", queue: queued, table: tables[0], screenshots: shots };
}

/** Nim (a game of the tests, tests/games/nim) has no board of its own:
 * two players play it to the end on the generic board — its view as
 * fields, its legal actions as controls (a number field while several
 * counts may be taken, a button when one may) — with no client code for it. */
async function nim(browser) {
  const a = await context(browser, DESKTOP, EN);
  const b = await context(browser, PHONE, PT);
  const ana = await newPage(a, base);
  await guest(ana, "Ana");
  const bia = await newPage(b);
  await openTable(ana, bia, "nim");
  const shots = [];
  let actions = 0;
  for (;;) {
    const page = await mover([ana, bia]);
    if (!page) break;
    const heap = Number(await page.locator(".generic-fields [data-field=heap] dd").first().innerText());
    if (!(heap > 0)) throw new Error(`the view shows no heap (${heap})`);
    if (await page.locator(".generic-range").count()) {
      const input = page.locator(".generic-range input").first();
      const most = Number(await input.getAttribute("max"));
      await input.fill(String(1 + (actions % most)));
      if (actions === 1) shots.push(await screen(page, page === ana ? "nim-generic-desktop-en" : "nim-generic-phone-pt"));
      await actAndWait(page, ".generic-range button[type=submit]", actions % 2 === 0);
    } else {
      await actAndWait(page, ".generic-controls button[data-action=take]");
    }
    actions += 1;
  }
  const result = await places(bia);
  await ana.waitForSelector("#result", { timeout: STEP_MS });
  shots.push(await screen(ana, "nim-final-desktop-en"), await screen(bia, "nim-final-phone-pt"));
  const log = await ana.locator("body").innerText();
  if (!/took/.test(log)) throw new Error("the log says nothing of the moves");
  await a.close();
  await b.close();
  return { scenario: "nim", actions, result, screenshots: shots };
}

/** A seat idle past its time is claimed against from the browser: the test
 * prints the table and waits (on stdin) while pytest makes the idle seat's
 * time run out; the other player's page then offers the claim. */
async function claim(browser) {
  const a = await context(browser, DESKTOP, EN);
  const b = await context(browser, PHONE, PT);
  const ana = await newPage(a, base);
  await guest(ana, "Ana");
  const bia = await newPage(b);
  const { tableId } = await openTable(ana, bia, "dudo");
  const idle = await mover([ana, bia]);
  const other = idle === ana ? bia : ana;
  console.log(JSON.stringify({ waiting: tableId, version: await version(idle) }));
  await new Promise((resolve) => createInterface({ input: process.stdin }).once("line", resolve));
  await other.waitForSelector("[data-action=claim]", { timeout: 60_000 });
  const shots = [await screen(other, "claim-offered")];
  await other.click("[data-action=claim]");
  const result = await places(other);
  await idle.waitForSelector("#result", { timeout: STEP_MS });
  shots.push(await screen(idle, "claim-removed"));
  await a.close();
  await b.close();
  return { scenario: "claim", claimedBy: other === ana ? "Ana" : "Bia", result, screenshots: shots };
}

const PASSWORD = "correct horse battery";

async function signUp(page, username) {
  await page.fill("#username", username);
  await page.fill("#password", PASSWORD);
  await page.click("[data-action=signup]");
  await page.waitForSelector("#game", { timeout: STEP_MS });
}

async function section(page, id) {
  await page.click(`header nav [data-section=${id}]`);
}

/** The gateway's API as the admin, from node (announcing is an admin's job). */
async function asAdmin(method, path, body) {
  const login = await fetch(`${base}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: process.env.ADMIN_USER, password: process.env.ADMIN_PASSWORD }),
  });
  if (!login.ok) throw new Error(`admin log-in: ${login.status} ${await login.text()}`);
  const { access_token: token } = await login.json();
  const reply = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  if (!reply.ok) throw new Error(`${method} ${path}: ${reply.status} ${await reply.text()}`);
  return reply.json();
}

/** Play a started Dudo table on both pages (call when you can, else raise) to its result. */
async function playDudo(pages) {
  let actions = 0;
  for (;;) {
    const page = await mover(pages);
    if (!page) break;
    await actAndWait(page, (await page.locator("[data-action=dudo]").count()) ? "[data-action=dudo]" : "[data-action=bid]");
    actions += 1;
  }
  return actions;
}

async function community(browser) {
  const a = await context(browser, DESKTOP, EN);
  const b = await context(browser, PHONE, PT);
  const stamp = Date.now().toString(36);
  const [anaName, biaName] = [`ana_${stamp}`, `bia_${stamp}`];
  const ana = await newPage(a, base);
  await signUp(ana, anaName);
  const bia = await newPage(b, base);
  await signUp(bia, biaName);
  const shots = [];

  // Friends: Ana asks Bia by username; the request reaches Bia's page on her social feed.
  await section(ana, "friends");
  await ana.fill("#friend-username", biaName);
  await ana.click("[data-action=request-friend]");
  await ana.locator(".friends [role=status]").waitFor({ timeout: STEP_MS });
  await section(bia, "friends");
  await bia.locator(".incoming [data-action=accept]").waitFor({ timeout: STEP_MS });
  shots.push(await screen(bia, "friends-request-phone-pt"));
  await bia.click(".incoming [data-action=accept]");
  // Bia shows online on Ana's list (her page's social feed is open).
  await ana.locator(".friend-list li[data-online=yes]", { hasText: biaName }).waitFor({ timeout: STEP_MS });
  shots.push(await screen(ana, "friends-desktop-en"));

  // Private messages, each side's arriving live.
  const hello = "Oi, Bia! Uma partida de dominó? <i>sem HTML</i>";
  await ana.click(".friend-list [data-action=message]");
  await ana.fill("#message-text", hello);
  await ana.press("#message-text", "Enter");
  await ana.locator(".messages.private .text", { hasText: "Oi, Bia!" }).waitFor({ timeout: STEP_MS });
  await bia.locator("header [data-section=friends] .badge").waitFor({ timeout: STEP_MS });
  await bia.locator(".friend-list [data-action=message]").waitFor({ timeout: STEP_MS });
  await bia.click(".friend-list [data-action=message]");
  const received = await bia.locator(".messages.private .text").first().innerText({ timeout: STEP_MS });
  if (received !== hello) throw new Error(`Bia read "${received}", not the message as written`);
  await bia.fill("#message-text", "Bora!");
  await bia.press("#message-text", "Enter");
  await ana.locator(".messages.private .text", { hasText: "Bora!" }).waitFor({ timeout: STEP_MS });
  shots.push(await screen(ana, "messages-desktop-en"), await screen(bia, "messages-phone-pt"));

  // A ranked Bozó duel found by matchmaking: ratings for the rankings and the profiles.
  for (const page of [ana, bia]) {
    await section(page, "play");
    await page.selectOption("#game", "bozo");
    await page.selectOption("#mode", "duel");
    await page.check("#ranked");
    await page.click("[data-action=find]");
  }
  for (const page of [ana, bia]) await page.waitForSelector(".match", { timeout: 60_000 });
  let rankedActions = 0;
  for (;;) {
    const page = await mover([ana, bia]);
    if (!page) break;
    const scoring = await page.locator("button[data-box]").count();
    await actAndWait(page, scoring ? "button[data-box] >> nth=0" : "[data-action=throw]");
    rankedActions += 1;
  }
  for (const page of [ana, bia]) await page.waitForSelector("#result", { timeout: STEP_MS });

  // Dominó: Ana opens a table with CPUs at her sides and invites Bia, who takes the seat opposite.
  await section(ana, "play");
  await ana.selectOption("#game", "domino");
  await ana.check("#cpu-seat-1");
  await ana.check("#cpu-seat-3");
  await ana.click("[data-action=create]");
  await ana.locator(".invite-friends [data-action=invite-friend]").click({ timeout: STEP_MS });
  await ana.locator(".invite-friends [role=status]").waitFor({ timeout: STEP_MS });
  shots.push(await screen(ana, "domino-invite-friend-desktop-en"));
  await bia.locator(".invites-banner [data-action=accept-invite]").waitFor({ timeout: STEP_MS });
  shots.push(await screen(bia, "invite-received-phone-pt"));
  await bia.click(".invites-banner [data-action=accept-invite]");
  // Bia seated opposite; the last seat taken may start the match by itself
  // (then the match replaces the seats at once, before a slow page draws them).
  await ana.locator(".match, .seats li:nth-child(3) strong:has-text(" + JSON.stringify(biaName) + ")")
    .first().waitFor({ timeout: STEP_MS });
  await ana.waitForSelector(".match, [data-action=start]:not([disabled])", { timeout: STEP_MS });
  if (!(await ana.locator(".match").count())) await ana.click("[data-action=start]", { timeout: 2000 }).catch(() => undefined);
  for (const page of [ana, bia]) await page.waitForSelector(".match", { timeout: STEP_MS });
  const partners = await bia.locator(".scores").innerText();
  if (!partners.includes(anaName)) throw new Error(`Bia's page does not show Ana as her partner: ${partners}`);
  shots.push(await screen(bia, "domino-partners-phone-pt"));

  // From the table chat: Ana reports one of Bia's messages, then blocks her.
  await bia.fill("#chat-text", "mensagem para denunciar");
  await bia.press("#chat-text", "Enter");
  const reported = ana.locator(".chat .messages li", { hasText: "mensagem para denunciar" });
  await reported.locator("[data-action=moderate]").click({ timeout: STEP_MS });
  await reported.locator("input").fill("only a test");
  shots.push(await screen(ana, "chat-report-desktop-en"));
  await reported.locator("[data-action=report]").click();
  await reported.locator(".moderated").waitFor({ timeout: STEP_MS });
  await bia.fill("#chat-text", "e agora?");
  await bia.press("#chat-text", "Enter");
  const next = ana.locator(".chat .messages li", { hasText: "e agora?" });
  await next.locator("[data-action=moderate]").click({ timeout: STEP_MS });
  await next.locator("[data-action=block]").click();
  await next.waitFor({ state: "detached", timeout: STEP_MS });
  await section(ana, "friends");
  await ana.locator(".blocked [data-action=unblock]").waitFor({ timeout: STEP_MS });
  if (await ana.locator(".friend-list li", { hasText: biaName }).count()) throw new Error("a blocked user is still a friend");
  shots.push(await screen(ana, "friends-blocked-desktop-en"));

  // A Dudo tournament of two, one die each: announced, registered for, started, played, followed to its end.
  const tour = await asAdmin("POST", "/v1/tournaments", {
    name: `Copa ${stamp}`, game: "dudo", options: { dice_per_player: 1 },
    format: "TOURNAMENT_FORMAT_SWISS", max_entrants: 2, table_size: 2,
  });
  const c = await context(browser, DESKTOP, PT);
  const boss = await newPage(c, base);
  await boss.fill("#username", process.env.ADMIN_USER);
  await boss.fill("#password", process.env.ADMIN_PASSWORD);
  await boss.click("[data-action=login]");
  await boss.waitForSelector("#game", { timeout: STEP_MS });
  await boss.goto(`${base}/?tournament=${tour.id}`);
  for (const page of [ana, bia]) {
    await section(page, "tournaments");
    await page.locator(`[data-tournament="${tour.id}"] a`).click({ timeout: STEP_MS });
    await page.locator("[data-action=register]").click({ timeout: STEP_MS });
    await page.locator(".registered").waitFor({ timeout: STEP_MS });
  }
  shots.push(await screen(bia, "tournament-registered-phone-pt"));
  await boss.locator(".entrants li:nth-child(2)").waitFor({ timeout: STEP_MS }); // live: both registrations
  shots.push(await screen(boss, "tournament-admin-desktop-pt"));
  await boss.click("[data-action=start-tournament]");
  for (const page of [ana, bia]) await page.locator("[data-action=play-board]").click({ timeout: STEP_MS });
  for (const page of [ana, bia]) await page.waitForSelector(".match", { timeout: STEP_MS });
  let actions = await playDudo([ana, bia]);
  shots.push(await screen(boss, "tournament-running-desktop-pt"));
  await boss.locator(".tournament[data-status=TOURNAMENT_STATUS_FINISHED]").waitFor({ timeout: 60_000 });
  const standings = await boss.locator(".standings tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.place));
  if (standings.join() !== "1,2") throw new Error(`the final standings are ${standings}`);
  shots.push(await screen(boss, "tournament-final-desktop-pt"));
  for (const page of [ana, bia]) {
    await section(page, "tournaments");
    await page.locator(`[data-tournament="${tour.id}"] a`).click({ timeout: STEP_MS });
    await page.locator(".tournament[data-status=TOURNAMENT_STATUS_FINISHED] .standings").waitFor({ timeout: STEP_MS });
  }
  shots.push(await screen(ana, "tournament-final-desktop-en"), await screen(bia, "tournament-final-phone-pt"));

  // A knockout of two: its bracket, followed live to the winner.
  const knockout = await asAdmin("POST", "/v1/tournaments", {
    name: `Mata-mata ${stamp}`, game: "dudo", options: { dice_per_player: 1 },
    format: "TOURNAMENT_FORMAT_SINGLE_ELIMINATION", max_entrants: 2, table_size: 2,
  });
  await boss.goto(`${base}/?tournament=${knockout.id}`);
  for (const page of [ana, bia]) {
    await page.goto(`${base}/?tournament=${knockout.id}`);
    await page.locator("[data-action=register]").click({ timeout: STEP_MS });
    await page.locator(".registered").waitFor({ timeout: STEP_MS });
  }
  await boss.locator(".entrants li:nth-child(2)").waitFor({ timeout: STEP_MS });
  await boss.click("[data-action=start-tournament]");
  for (const page of [ana, bia]) await page.locator("[data-action=play-board]").click({ timeout: STEP_MS });
  for (const page of [ana, bia]) await page.waitForSelector(".match", { timeout: STEP_MS });
  actions += await playDudo([ana, bia]);
  await boss.locator(".tournament[data-status=TOURNAMENT_STATUS_FINISHED] .bracket .winner").waitFor({ timeout: 60_000 });
  shots.push(await screen(boss, "tournament-bracket-desktop-pt"));
  await bia.goto(`${base}/?tournament=${knockout.id}`);
  await bia.locator(".tournament[data-status=TOURNAMENT_STATUS_FINISHED] .bracket .winner").waitFor({ timeout: STEP_MS });
  shots.push(await screen(bia, "tournament-bracket-phone-pt"));

  // A partnership game's tournament: Ana starts a team and gives Bia its code.
  const duplas = await asAdmin("POST", "/v1/tournaments", {
    name: `Duplas ${stamp}`, game: "domino", format: "TOURNAMENT_FORMAT_SWISS", max_entrants: 4,
  });
  await ana.goto(`${base}/?tournament=${duplas.id}`);
  await ana.locator("[data-action=register]").click({ timeout: STEP_MS });
  const code = await ana.locator("#team-code").innerText({ timeout: STEP_MS });
  shots.push(await screen(ana, "tournament-team-code-desktop-en"));
  await bia.goto(`${base}/?tournament=${duplas.id}`);
  await bia.fill("#team-code-input", code);
  await bia.locator("[data-action=register]").click({ timeout: STEP_MS });
  await bia.locator(".registered").waitFor({ timeout: STEP_MS });
  const team = await bia.locator(".entrants li").first().innerText({ timeout: STEP_MS });
  if (!(team.includes(anaName) && team.includes(biaName))) throw new Error(`the team is "${team}"`);
  shots.push(await screen(bia, "tournament-team-phone-pt"));
  // Ana withdraws: Bia's social feed tells her, with the code a new partner registers with —
  // a badge on the tournaments section, the notice on the tournament's page and the list.
  await ana.locator("[data-action=withdraw]").click({ timeout: STEP_MS });
  await bia.locator("header nav [data-section=tournaments] .badge").waitFor({ timeout: STEP_MS });
  const told = await bia.locator(".tournament-notices li[data-notice=TOURNAMENT_NOTICE_KIND_PARTNER_WITHDREW]")
    .innerText({ timeout: STEP_MS });
  if (!(told.includes(anaName) && told.includes(code))) throw new Error(`the notice is "${told}"`);
  await section(bia, "tournaments");
  await bia.locator(`.tournament-notices li[data-tournament="${duplas.id}"]`).waitFor({ timeout: STEP_MS });
  shots.push(await screen(bia, "tournament-notice-phone-pt"));
  await bia.click(".tournament-notices [data-action=dismiss-notice]");
  await bia.locator("header nav [data-section=tournaments] .badge").waitFor({ state: "detached", timeout: STEP_MS });

  // The rankings (the ranked duel's two players, Bozó's duel listed first) and the profiles.
  for (const page of [bia, ana]) {
    await section(page, "leaderboards");
    for (const name of [anaName, biaName]) {
      await page.locator(".leaderboard tbody tr", { hasText: name }).waitFor({ timeout: STEP_MS });
    }
  }
  shots.push(await screen(bia, "rankings-phone-pt"), await screen(ana, "rankings-desktop-en"));
  // Bia's profile, from her name on the leaderboard; then Ana's own, the rating's history open.
  await ana.locator(".leaderboard tbody a", { hasText: biaName }).click();
  await ana.locator(".profile .match-list li").first().waitFor({ timeout: STEP_MS });
  shots.push(await screen(ana, "profile-other-desktop-en"));
  for (const page of [ana, bia]) {
    await section(page, "profile");
    await page.locator(".rating-list li button").first().click({ timeout: STEP_MS });
    await page.locator(".rating-history li").first().waitFor({ timeout: STEP_MS });
    await page.locator(".trophy-list li").first().waitFor({ timeout: STEP_MS });
  }
  shots.push(await screen(ana, "profile-desktop-en"), await screen(bia, "profile-phone-pt"));
  for (const ctx of [a, b, c]) await ctx.close();
  return { scenario: "community", actions: actions + rankedActions, tournament: tour.id, standings, screenshots: shots };
}

// One browser for every scenario; each prints its outcome (or its error) and
// the requests its pages made outside the gateway, and the others still run.
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
let failed = false;
try {
  for (const name of scenarios) {
    const started = Date.now();
    const before = foreign.length;
    let outcome;
    try {
      outcome = await { yatzy, dudo, bozo, bozu_mekuri: bozuMekuri, domino, matchmaking, claim, community, nim }[name](browser);
    } catch (error) {
      failed = true;
      console.error(error);
      outcome = { scenario: name, error: String(error?.stack ?? error) };
      for (const ctx of browser.contexts()) await ctx.close().catch(() => undefined);
    }
    const outside = foreign.slice(before);
    if (outside.length) failed = true;
    console.log(JSON.stringify({ ...outcome, foreign: outside, seconds: (Date.now() - started) / 1000 }));
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
