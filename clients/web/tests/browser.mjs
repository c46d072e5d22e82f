// The reference web client in a real browser (Debian's headless chromium,
// driven by playwright-core): two browser contexts play a complete Yatzy duel
// (watched by a third, a spectator) and a complete Dudo game by clicking, one
// of them closing its tab mid-match and coming back to its seat; one player
// plays Bozó (with the cup, "cantar embaixo"), Bozu Mekuri and Dominó (with
// CPUs) to the end; a player signs up, logs out and in, and two find a Bozó
// duel by matchmaking. Half the single player's moves are made from the
// keyboard, and a phone-sized page must not scroll sideways. Every request
// the pages make must go to the gateway. Screenshots go to ARTIFACTS. Run
// by tests/web/test_browser.py:
//
//   node tests/browser.mjs <gateway URL> <artifacts dir> [yatzy|dudo|bozo|bozu_mekuri|domino|matchmaking|claim ...]
//
// Prints one JSON line per scenario; exits non-zero on the first failure.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const [base, artifacts, ...wanted] = process.argv.slice(2);
const scenarios = wanted.length ? wanted : ["yatzy", "dudo"];
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const STEP_MS = 20_000;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1100, height: 900 };
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

async function newPage(context, url) {
  const page = await context.newPage();
  watch(page);
  await page.goto(url);
  return page;
}

async function guest(page, name) {
  await page.fill("#guest-name", name);
  await page.click("[data-action=guest]");
}

async function shot(page, name) {
  const path = join(artifacts, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
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

/** A table opened by `host` with `options`, joined by `guestPage` through the invite link. */
async function openTable(host, other, game, options) {
  await host.selectOption("#game", game);
  await host.selectOption("#seats", "2");
  await host.fill("#options", JSON.stringify(options));
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
  await page.waitForSelector("#status:has-text('Reconnected')", { timeout: STEP_MS });
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

/** Close the tab of `context`'s page and open the table again in a new one
 * (with its stored access token expired meanwhile). */
async function comeBack(context, page, tableId, seatName) {
  // Meanwhile the access token has expired: the page must refresh its session.
  const used = await page.evaluate(() => {
    const session = JSON.parse(localStorage.getItem("rodada.session"));
    localStorage.setItem("rodada.session", JSON.stringify({ ...session, access_token: "expired" }));
    return session.refresh_token;
  });
  await page.close();
  const again = await newPage(context, `${base}/?table=${tableId}`);
  await again.waitForSelector(".match", { timeout: STEP_MS });
  const refreshed = await again.evaluate(() => JSON.parse(localStorage.getItem("rodada.session")));
  if (refreshed.refresh_token === used || refreshed.access_token === "expired") {
    throw new Error("the expired session was not refreshed");
  }
  const mine = await again.locator(".scores li", { hasText: "(you)" }).innerText();
  if (!mine.startsWith(seatName)) throw new Error(`came back to "${mine}", not ${seatName}'s seat`);
  return again;
}

async function yatzy(browser) {
  const a = await browser.newContext({ viewport: DESKTOP });
  const b = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  let ana = await newPage(a, base);
  await guest(ana, "Ana");
  let bia = await b.newPage();
  watch(bia);
  const { tableId } = await openTable(ana, bia, "yatzy", { card: "CLASSIC" });
  const c = await browser.newContext({ viewport: DESKTOP });
  const cai = await newPage(c, `${base}/?table=${tableId}`);
  await guest(cai, "Cai");
  await cai.waitForSelector(".turn:has-text('Watching')", { timeout: STEP_MS });
  let actions = 0;
  let reconnected = false;
  const shots = [];
  for (;;) {
    const page = await mover([ana, bia]);
    if (!page) break;
    // Roll once, keep the first two dice, roll again, then score the best preview.
    await actAndWait(page, "[data-action=roll]");
    await page.click("[data-die='0']");
    await page.click("[data-die='1']");
    await actAndWait(page, "[data-action=roll]");
    const previews = page.locator("button[data-box]");
    if ((await previews.count()) === 0) throw new Error("no score previews on the mover's card");
    let best = 0;
    let bestPoints = -1;
    for (let i = 0; i < (await previews.count()); i++) {
      const points = Number(await previews.nth(i).innerText());
      if (points > bestPoints) [best, bestPoints] = [i, points];
    }
    if (actions === 6) shots.push(await shot(page, "yatzy-previews"));
    await actAndWait(page, `button[data-box] >> nth=${best}`);
    actions += 3;
    if (!reconnected && actions >= 12 && page === bia) {
      bia = await comeBack(b, bia, tableId, "Bia");
      reconnected = true;
    }
  }
  for (const page of [ana, bia, cai]) await page.waitForSelector("#result", { timeout: STEP_MS });
  shots.push(await shot(ana, "yatzy-ana-final"), await shot(bia, "yatzy-bia-final-phone"), await shot(cai, "yatzy-spectator"));
  const result = await ana.locator("#result").innerText();
  await a.close();
  await b.close();
  await c.close();
  if (!reconnected) throw new Error("the reconnection never happened");
  return { scenario: "yatzy", actions, reconnected, result: result.split("\n").slice(1, 3), screenshots: shots };
}

async function dudo(browser) {
  const a = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  const b = await browser.newContext({ viewport: DESKTOP });
  let ana = await newPage(a, base);
  await guest(ana, "Ana");
  let bia = await b.newPage();
  watch(bia);
  // Bia's table feed goes through a route that can cut it, as a network drop
  // or a draining replica would: her page must reconnect and resume.
  const feeds = await proxyFeeds(bia);
  const { tableId } = await openTable(ana, bia, "dudo", { dice_per_player: 2 });
  const shots = [];
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
    if (await page.locator("[data-action=dudo]").count()) {
      if (page === ana && actions > 2) shots.push(await shot(ana, `dudo-assisted-${actions}`));
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
  for (const page of [ana, bia]) await page.waitForSelector("#result", { timeout: STEP_MS });
  shots.push(await shot(ana, "dudo-ana-final-phone"), await shot(bia, "dudo-bia-final"));
  const result = await bia.locator("#result").innerText();
  await a.close();
  await b.close();
  if (!reconnected) throw new Error("the reconnection never happened");
  if (!oddsSeen) throw new Error("assisted mode never showed odds");
  if (!resumedFrom) throw new Error("the feed was never cut and resumed");
  return { scenario: "dudo", actions, reconnected, resumedFrom, result: result.split("\n").slice(1, 3), screenshots: shots };
}

/** One player against the game's CPUs (or alone): open a table, start it,
 * and on each turn click what `choose` picks, until the result shows. */
async function solo(browser, game, seats, cpuSeats, options, choose, check) {
  const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  const page = await newPage(context, base);
  await guest(page, "Ana");
  await page.selectOption("#game", game);
  if (seats === 1) await page.selectOption("#mode", "solo");
  await page.selectOption("#seats", String(seats));
  if (options) await page.fill("#options", JSON.stringify(options));
  if (cpuSeats.length) await page.fill("#cpu-seats", cpuSeats.join(" "));
  await page.click("[data-action=create]");
  await page.waitForSelector("[data-action=start]:not([disabled])", { timeout: STEP_MS });
  await page.click("[data-action=start]");
  await page.waitForSelector(".match", { timeout: STEP_MS });
  const seen = new Set();
  const shots = [];
  let actions = 0;
  for (;;) {
    const mine = await mover([page]);
    if (!mine) break;
    const selector = await choose(page, actions);
    await actAndWait(page, selector, actions % 2 === 0); // every other move from the keyboard
    actions += 1;
    for (const found of await check(page)) {
      if (!seen.has(found)) {
        seen.add(found);
        shots.push(await shot(page, `${game}-${found}`));
      }
    }
  }
  shots.push(await shot(page, `${game}-final-phone`));
  const width = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  if (width[0] > width[1]) throw new Error(`the page is ${width[0]} px wide on a ${width[1]} px phone`);
  const result = await page.locator("#result").innerText();
  await context.close();
  return { scenario: game, actions, seen: [...seen], result: result.split("\n").slice(1, 3), screenshots: shots };
}

/** Bozó alone: each turn thrown with the cup, declared alternately "cantar
 * embaixo" and "por cima", then the best preview scored; the conversions
 * (e.g. "6 → 1") must show. */
async function bozo(browser) {
  let declared = 0;
  const outcome = await solo(browser, "bozo", 1, [], null, async (page) => {
    if (await page.locator("[data-action=bottom]").count()) return declared++ % 2 ? "[data-action=top]" : "[data-action=bottom]";
    if (await page.locator("[data-action=cup]:not([disabled])").count() && !(await page.locator("button[data-box]").count())) return "[data-action=cup]";
    return "button[data-box] >> nth=0";
  }, async (page) => ((await page.locator(".conversion").count()) ? ["embaixo"] : []));
  const text = outcome.seen.includes("embaixo");
  if (!text) throw new Error("no 'cantar embaixo' conversion was shown");
  return outcome;
}

/** Bozu Mekuri against a CPU: flip until the deck runs out; the poets' names show. */
async function bozuMekuri(browser) {
  return solo(browser, "bozu_mekuri", 2, [1], null, async (page) => "[data-action=flip]",
    async (page) => ((await page.locator(".flipped .card").count()) ? ["poet"] : []));
}

/** Dominó with three CPUs: lay the first tile that fits, until a team wins. */
async function domino(browser) {
  return solo(browser, "domino", 4, [1, 2, 3], null, async (page) => "[data-tile] >> nth=0",
    async (page) => ((await page.locator(".ends", { hasText: "open ends" }).count()) ? ["line"] : []));
}

/** Sign up, log out, log in again; then two players find a Bozó duel by
 * matchmaking and both land at the started table. */
async function matchmaking(browser) {
  const a = await browser.newContext({ viewport: DESKTOP });
  const b = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  const ana = await newPage(a, base);
  const username = `ana${Date.now().toString(36)}`;
  await ana.fill("#username", username);
  await ana.fill("#password", "correct horse battery");
  await ana.click("[data-action=signup]");
  await ana.waitForSelector("#game", { timeout: STEP_MS });
  await ana.click("#logout");
  await ana.fill("#username", username);
  await ana.fill("#password", "correct horse battery");
  await ana.click("[data-action=login]");
  await ana.waitForSelector("#game", { timeout: STEP_MS });
  const who = await ana.locator("#who").innerText();
  if (who !== username) throw new Error(`logged in as "${who}", not ${username}`);
  const bia = await newPage(b, base);
  await guest(bia, "Bia");
  for (const page of [ana, bia]) {
    await page.waitForSelector("#game", { timeout: STEP_MS });
    await page.selectOption("#game", "bozo");
    await page.selectOption("#mode", "duel");
    await page.click("[data-action=find]");
  }
  const seen = await ana.locator("#ticket-state").innerText({ timeout: STEP_MS }).catch(() => "matched at once");
  for (const page of [ana, bia]) await page.waitForSelector(".match", { timeout: 60_000 });
  const tables = await Promise.all([ana, bia].map((page) => new URL(page.url()).searchParams.get("table")));
  if (!tables[0] || tables[0] !== tables[1]) throw new Error(`matched to different tables: ${tables}`);
  const shots = [await shot(bia, "matchmaking-matched-phone")];
  await a.close();
  await b.close();
  return { scenario: "matchmaking", queue: seen, table: tables[0], screenshots: shots };
}

/** A seat idle past its time is claimed against from the browser: the test
 * prints the table and waits (on stdin) while pytest makes the idle seat's
 * time run out; the other player's page then offers the claim. */
async function claim(browser) {
  const a = await browser.newContext({ viewport: DESKTOP });
  const b = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  const ana = await newPage(a, base);
  await guest(ana, "Ana");
  const bia = await b.newPage();
  watch(bia);
  const { tableId } = await openTable(ana, bia, "dudo", {});
  const idle = await mover([ana, bia]);
  const other = idle === ana ? bia : ana;
  console.log(JSON.stringify({ waiting: tableId, version: await version(idle) }));
  await new Promise((resolve) => createInterface({ input: process.stdin }).once("line", resolve));
  await other.waitForSelector("[data-action=claim]", { timeout: 60_000 });
  const shots = [await shot(other, "claim-offered")];
  await other.click("[data-action=claim]");
  for (const page of [ana, bia]) await page.waitForSelector("#result", { timeout: STEP_MS });
  shots.push(await shot(idle, "claim-removed"));
  const result = await other.locator("#result").innerText();
  await a.close();
  await b.close();
  return { scenario: "claim", claimedBy: other === ana ? "Ana" : "Bia", result: result.split("\n").slice(1, 3), screenshots: shots };
}

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
let failed = false;
try {
  for (const name of scenarios) {
    const started = Date.now();
    const outcome = await { yatzy, dudo, bozo, bozu_mekuri: bozuMekuri, domino, matchmaking, claim }[name](browser);
    console.log(JSON.stringify({ ...outcome, seconds: (Date.now() - started) / 1000 }));
  }
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await browser.close();
}
if (foreign.length) {
  console.error(`requests outside the gateway: ${JSON.stringify(foreign)}`);
  failed = true;
}
process.exit(failed ? 1 : 0);
