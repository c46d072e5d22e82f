/** Under someone else's chat message (at a table or in private): report it
 * to the moderators with a reason, or block its sender (no more friend
 * requests or messages from them; their table chat is hidden here). */
import { useState } from "preact/hooks";
import type { ChatMessage } from "../../api/types";
import { t } from "../i18n";
import { client, isGuest } from "../session";
import { ErrorNote, useAction } from "../ui/parts";

/** The senders blocked from this page (hidden from its chats until reloaded). */
export const blockedHere = new Set<string>();

export function Moderate({ message, withUser, onBlocked }: {
  message: ChatMessage; withUser?: string; onBlocked?: () => void;
}) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const id = `report-${message.id.replace(/[^\w-]/g, "_")}`;
  if (done) return <span role="status" class="muted moderated"> {done}</span>;
  if (!open) {
    return (
      <button type="button" class="quiet small" data-action="moderate" aria-expanded="false"
        aria-label={t.moderate.open(message.sender_name)} onClick={() => setOpen(true)}>
        {t.moderate.menu}
      </button>
    );
  }
  const report = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      await client.report({
        channel: message.channel,
        message_id: message.id,
        ...(message.table_id ? { table_id: message.table_id } : {}),
        ...(withUser ? { user_id: withUser } : {}),
        reason: reason.trim(),
      });
      setDone(t.moderate.reported);
    });
  };
  const block = () => action.run(async () => {
    await client.block(message.sender_id);
    blockedHere.add(message.sender_id);
    setDone(t.moderate.blocked(message.sender_name));
    onBlocked?.();
  });
  return (
    <form class="moderate" onSubmit={report}>
      <label for={id}>{t.moderate.reason}</label>
      <input id={id} value={reason} maxLength={500} autocomplete="off"
        onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      <button type="submit" data-action="report" disabled={action.busy}>{t.moderate.report}</button>
      {!isGuest() ? (
        <button type="button" class="call" data-action="block" disabled={action.busy} onClick={block}>
          {t.moderate.block(message.sender_name)}
        </button>
      ) : null}
      <button type="button" class="quiet" onClick={() => setOpen(false)}>{t.moderate.cancel}</button>
      <ErrorNote error={action.error} />
    </form>
  );
}
