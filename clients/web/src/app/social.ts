/**
 * The signed-in account's social feed, one for the whole page: friends'
 * requests and answers, private messages, table invites and notices about
 * one's tournament registrations (a partner withdrew, an admin removed you)
 * as they come.
 * Screens subscribe (useSocial) and re-render on each; the header counts
 * what waits. Guests have no friends, so no feed. While it is open the
 * player shows as online to their friends.
 */
import { useEffect, useState } from "preact/hooks";
import type { SocialFeed } from "../api/feed";
import type { SocialEvent } from "../api/types";
import { client, isGuest } from "./session";

export type Invite = Extract<SocialEvent, { invite: unknown }>["invite"];
export type TournamentNotice = Extract<SocialEvent, { tournament: unknown }>["tournament"];

const KEPT = 200;
/** Where the feed resumes on the next page load (per account): old notices are not shown twice. */
const lastIdKey = (userId: string) => `rodada.social.${userId}`;

class Social {
  private feed: SocialFeed | null = null;
  private userId = "";
  private readonly listeners = new Set<() => void>();
  /** What came since the page opened, oldest first. */
  events: SocialEvent[] = [];
  /** Invitations not yet answered. */
  invites: Invite[] = [];
  /** Tournament notices not yet dismissed (the tournaments screen shows them). */
  notices: TournamentNotice[] = [];
  /** Private messages not yet read, by the friend's id. */
  unread = new Map<string, number>();
  /** The friend whose conversation is on screen (their messages are read as they come). */
  reading = "";

  /** Follow the account's feed (again, after a log-in as someone else). */
  start(): void {
    const user = client.user;
    if (!user || isGuest()) return this.stop();
    if (this.feed && this.userId === user.id) return;
    this.stop();
    this.userId = user.id;
    const after = localStorage.getItem(lastIdKey(user.id)) ?? "";
    this.feed = client.followSocial({ event: (event) => this.take(event) }, after);
  }

  stop(): void {
    this.feed?.close();
    this.feed = null;
    this.userId = "";
    this.events = [];
    this.invites = [];
    this.notices = [];
    this.unread = new Map();
    this.changed();
  }

  private take(event: SocialEvent): void {
    localStorage.setItem(lastIdKey(this.userId), event.id);
    this.events = [...this.events.slice(-(KEPT - 1)), event];
    if ("invite" in event) {
      this.invites = [...this.invites.filter((i) => i.table_id !== event.invite.table_id), event.invite];
    } else if ("tournament" in event) {
      this.notices = [...this.notices, event.tournament];
    } else if ("message" in event) {
      const from = event.message.sender_id;
      if (from !== this.userId && from !== this.reading) this.unread.set(from, (this.unread.get(from) ?? 0) + 1);
    }
    this.changed();
  }

  dismiss(invite: Invite): void {
    this.invites = this.invites.filter((i) => i !== invite);
    this.changed();
  }

  dismissNotice(notice: TournamentNotice): void {
    this.notices = this.notices.filter((n) => n !== notice);
    this.changed();
  }

  read(friendId: string): void {
    this.reading = friendId;
    if (this.unread.delete(friendId)) this.changed();
  }

  get unreadTotal(): number {
    return [...this.unread.values()].reduce((a, b) => a + b, 0);
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

export const social = new Social();

/** The social state, re-rendering the caller on every change. */
export function useSocial(): Social {
  const [, setTick] = useState(0);
  useEffect(() => social.subscribe(() => setTick((n) => n + 1)), []);
  return social;
}
