/** Table chat: the players' channel for the seated, the spectators' for
 * everyone else (players never see it). Messages are text, never markup
 * (Preact sets them as text). */
import { useState } from "preact/hooks";
import type { ChatMessage } from "../../api/types";
import { t } from "../i18n";
import { Moderate, blockedHere } from "../screens/moderate";
import { client } from "../session";
import { ErrorNote, useAction } from "../ui/parts";
import { Say, useScrolledToEnd } from "../ui/say";

export type { ChatMessage };

export function Chat({ tableId, messages, seated, closed }: {
  tableId: string; messages: ChatMessage[]; seated: boolean; closed: boolean;
}) {
  const [, setBlocked] = useState(0);
  const me = client.user?.id;
  const shown = messages.filter((m) => !blockedHere.has(m.sender_id));
  const action = useAction();
  const list = useScrolledToEnd(messages.length);
  return (
    <section class="card chat" aria-labelledby="chat-title">
      <h2 id="chat-title">{t.chat.title}</h2>
      <p class="muted channel">{seated ? t.chat.players : t.chat.spectators}</p>
      <ol class="messages" ref={list} aria-live="polite" tabIndex={0} aria-label={t.chat.title}>
        {shown.length === 0 ? <li class="muted">{t.chat.empty}</li> : shown.map((m) => (
          <li key={m.id} data-channel={m.channel === "CHAT_CHANNEL_TABLE_SPECTATORS" ? "spectators" : "players"}>
            <strong>{m.sender_name}</strong>
            {": "}
            <span class="text">{m.text}</span>
            {m.sender_id !== me ? <Moderate message={m} onBlocked={() => setBlocked((n) => n + 1)} /> : null}
          </li>
        ))}
      </ol>
      {closed ? <p class="muted">{t.chat.closed}</p> : (
        <Say name="chat" action={action} send={(message) => client.sendTableMessage(tableId, message)} />
      )}
      <ErrorNote error={action.error} />
    </section>
  );
}
