/** Small pieces every screen uses. */
import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";
import { errorText } from "../session";

/** An error shown where it happened (announced to screen readers). */
export function ErrorNote({ error }: { error: string | null }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}

export interface ActionState {
  busy: boolean;
  error: string | null;
  setError: (error: string | null) => void;
  /** Clear the last error, be busy until `job` settles, keep the error it
   * failed with. Ignored while busy (a double click sends once). */
  run: (job: () => Promise<unknown>) => void;
}

export function useAction(): ActionState {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const running = useRef(false);
  const run = (job: () => Promise<unknown>) => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(null);
    const done = (failure?: unknown) => {
      running.current = false;
      setBusy(false);
      if (failure !== undefined) setError(errorText(failure));
    };
    job().then(() => done(), (failure: unknown) => done(failure ?? "error"));
  };
  return { busy, error, setError, run };
}

export function Card({ title, children, class: extra }: {
  title?: ComponentChildren; children: ComponentChildren; class?: string;
}) {
  return (
    <section class={`card${extra ? ` ${extra}` : ""}`}>
      {title ? <h2>{title}</h2> : null}
      {children}
    </section>
  );
}
