/** Private messages with one friend: the kept history, then each message
 * as the social feed brings it. Text is text (Preact sets it so), never
 * markup. A message can be reported, and its sender blocked. */
import { useEffect, useState } from "preact/hooks";
import type { ChatMessage } from "../../api/types";
import type { Go } from "../app";
import { t } from "../i18n";
import { client, errorText } from "../session";
import { social, useSocial } from "../social";
import { Card, ErrorNote, useAction } from "../ui/parts";
import { Say, useScrolledToEnd } from "../ui/say";
import { Moderate } from "./moderate";

export function MessagesScreen({ userId, userName, go }: { userId: string; userName: string; go: Go }) {
  const { events } = useSocial();
  const [history, setHistory] = useState<ChatMessage[] | null>(null);
  const action = useAction();
  const me = client.user?.id ?? "";

  useEffect(() => {
    social.read(userId);
    client.messages(userId).then(setHistory, (failure: unknown) => action.setError(errorText(failure)));
    return () => social.read("");
  }, [userId]);

  // The feed's messages of this conversation, after the history (by id, none twice).
  const live = events.flatMap((e) => ("message" in e ? [e.message] : []))
    .filter((m) => (m.sender_id === userId && m.recipient_id === me) || (m.sender_id === me && m.recipient_id === userId));
  const seen = new Set<string>();
  const messages = [...(history ?? []), ...live].filter((m) => !seen.has(m.id) && seen.add(m.id));
  const list = useScrolledToEnd(messages.length);
  const send = async (message: string) => {
    const sent = await client.sendMessage(userId, message);
    setHistory((known) => [...(known ?? []), sent]);
  };
  return (
    <div class="community conversation">
      <h1>{t.messages.title(userName)}</h1>
      <Card>
        {history === null ? <p>{t.loading}</p> : (
          <ol class="messages private" ref={list} aria-live="polite" tabIndex={0} aria-label={t.messages.title(userName)}>
            {messages.length === 0 ? <li class="muted">{t.messages.empty}</li> : messages.map((m) => (
              <li key={m.id} data-mine={m.sender_id === me ? "yes" : "no"}>
                <strong>{m.sender_id === me ? t.you : m.sender_name}</strong>
                {": "}
                <span class="text">{m.text}</span>{" "}
                <time class="muted" dateTime={new Date(m.sent_at * 1000).toISOString()}>
                  {new Date(m.sent_at * 1000).toLocaleTimeString()}
                </time>
                {m.sender_id !== me ? <Moderate message={m} withUser={userId} /> : null}
              </li>
            ))}
          </ol>
        )}
        <Say name="message" action={action} send={send} />
        <ErrorNote error={action.error} />
        <p><button type="button" class="quiet" onClick={() => go({ name: "friends" })}>{t.messages.back}</button></p>
      </Card>
    </div>
  );
}
