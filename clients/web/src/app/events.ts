/** One line of the table's log for an event. */
import type { MatchEvent } from "../api/types";

export function describeEvent(event: MatchEvent, name: (seat: number) => string): string {
  if ("table" in event) {
    const change = event.table;
    const kind = change.kind.replace(/^TABLE_CHANGE_KIND_/, "").toLowerCase();
    return change.seat === undefined ? `table ${kind}` : `${name(change.seat)}: ${kind}`;
  }
  if ("notice" in event) {
    const kind = event.notice.kind.replace(/^NOTICE_KIND_/, "").toLowerCase().replace(/_/g, " ");
    return `${name(event.notice.seat)}: ${kind}`;
  }
  if ("event" in event) {
    const { "@type": type, ...body } = event.event as Record<string, unknown>;
    void type;
    const [kind, detail] = Object.entries(body)[0] ?? ["event", {}];
    const fields = { ...(detail as Record<string, unknown>) };
    const seat = typeof fields.seat === "number" ? fields.seat : null;
    delete fields.seat;
    const text = Object.entries(fields)
      .filter(([, v]) => v !== null && typeof v !== "object")
      .map(([k, v]) => `${k.replace(/_/g, " ")} ${String(v)}`)
      .join(", ");
    const lists = Object.entries(fields)
      .filter(([, v]) => Array.isArray(v) && v.every((x) => typeof x !== "object"))
      .map(([k, v]) => `${k.replace(/_/g, " ")} [${(v as unknown[]).join(" ")}]`)
      .join(", ");
    return `${seat === null ? "" : `${name(seat)}: `}${kind.replace(/_/g, " ")}${text || lists ? ` (${[text, lists].filter(Boolean).join(", ")})` : ""}`;
  }
  return "…";
}
