/** What both chats share (a table's, and private messages): a list kept
 * scrolled to its newest message, and the box to say something in. */
import type { Ref } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { t } from "../i18n";
import type { ActionState } from "./parts";

/** A ref for the messages' list; it scrolls to the end when ``count`` changes. */
export function useScrolledToEnd(count: number): Ref<HTMLOListElement> {
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const element = list.current;
    if (element) element.scrollTop = element.scrollHeight;
  }, [count]);
  return list;
}

/** The box and its button (``name``-text, ``name``-send): ``send`` gets the
 * text through ``action`` (busy, errors), and the box empties once it went. */
export function Say({ name, action, send }: {
  name: string; action: ActionState; send: (text: string) => Promise<unknown>;
}) {
  const [text, setText] = useState("");
  const submit = (event: Event) => {
    event.preventDefault();
    const message = text;
    if (!message.trim()) return;
    action.run(async () => {
      await send(message);
      setText("");
    });
  };
  return (
    <form class="say" onSubmit={submit}>
      <label for={`${name}-text`} class="visually-hidden">{t.chat.label}</label>
      {/* 500: the server's CHAT_MAX_LENGTH by default; a longer one is refused with a reason. */}
      <input id={`${name}-text`} value={text} autocomplete="off" placeholder={t.chat.placeholder} maxLength={500}
        onInput={(e) => setText((e.target as HTMLInputElement).value)} />
      <button type="submit" data-action={`${name}-send`} disabled={action.busy}>{t.chat.send}</button>
    </form>
  );
}
