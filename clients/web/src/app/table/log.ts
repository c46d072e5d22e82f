/** The table's log in plain words: table changes, the platform's notices
 * and each game's own events (the game's `describe`). */
import type { MatchEvent } from "../../api/types";
import { gameUi } from "../games";
import { gameEvent } from "../games/types";
import { t } from "../i18n";

type Names = (seat: number) => string;

const CHANGES: Record<string, (name: string) => string> = {
  TABLE_CHANGE_KIND_OPENED: () => t.log.opened,
  TABLE_CHANGE_KIND_JOINED: (name) => t.log.joined(name),
  TABLE_CHANGE_KIND_LEFT: (name) => t.log.left(name),
  TABLE_CHANGE_KIND_ARRANGED: () => t.log.arranged,
  TABLE_CHANGE_KIND_INVITE_CREATED: () => t.log.inviteCreated,
  TABLE_CHANGE_KIND_INVITE_REVOKED: () => t.log.inviteRevoked,
  TABLE_CHANGE_KIND_STARTED: () => t.log.started,
  TABLE_CHANGE_KIND_REOPENED: () => t.log.reopened,
};

const NOTICES: Record<string, (name: string, by: string) => string> = {
  NOTICE_KIND_INACTIVE: (name) => t.log.inactive(name),
  NOTICE_KIND_CPU_TOOK_OVER: (name) => t.log.cpuTookOver(name),
  NOTICE_KIND_SEAT_TAKEN_BACK: (name) => t.log.seatTakenBack(name),
  NOTICE_KIND_DISCONNECTED: (name) => t.log.disconnected(name),
  NOTICE_KIND_RECONNECTED: (name) => t.log.reconnected(name),
  NOTICE_KIND_LEFT: (name) => t.log.leftMatch(name),
  NOTICE_KIND_CLAIMED: (name, by) => t.log.claimed(name, by),
  NOTICE_KIND_EXPIRED: (name) => t.log.expired(name),
};

/** The line for one event, or null for what the log does not show (chat has its own place). */
export function describe(event: MatchEvent, game: string, name: Names): string | null {
  if ("table" in event && event.table) {
    const change = event.table;
    // A join names the player from the table it carries (the seat may be new to us).
    const seated = change.seat === undefined ? "" : change.table?.players?.[change.seat]?.name || name(change.seat);
    return CHANGES[change.kind]?.(seated) ?? null;
  }
  if ("notice" in event && event.notice) {
    const notice = event.notice;
    return NOTICES[notice.kind]?.(name(notice.seat), notice.by === undefined ? "" : name(notice.by)) ?? null;
  }
  const body = gameEvent(event);
  return body ? gameUi(game).describe(body, name) : null;
}
