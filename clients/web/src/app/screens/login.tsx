/** Log in: play at once as a guest, or with an account (log in or create one). */
import { useState } from "preact/hooks";
import type { Session } from "../../api/types";
import { t } from "../i18n";
import { client } from "../session";
import { Card, ErrorNote, useAction } from "../ui/parts";

export function Login({ done }: { done: () => void }) {
  const [name, setName] = useState("");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const guest = useAction();
  const account = useAction();
  const busy = guest.busy || account.busy;
  const go = (action: typeof guest, how: () => Promise<Session>) => {
    (action === guest ? account : guest).setError(null);
    action.run(async () => {
      await how();
      done();
    });
  };
  const value = (set: (v: string) => void) => (event: Event) => set((event.target as HTMLInputElement).value);

  return (
    <div class="login">
      <h1>{t.login.title}</h1>
      <p class="lead">{t.tagline}</p>
      <div class="columns">
        <Card title={t.login.guestTitle}>
          <form onSubmit={(e) => { e.preventDefault(); go(guest, () => client.guest(name.trim() || undefined)); }}
            aria-busy={guest.busy}>
            <p class="field">
              <label for="guest-name">{t.login.guestName}</label>
              <input id="guest-name" autocomplete="nickname" maxLength={24} value={name} onInput={value(setName)} />
            </p>
            <p class="muted">{t.login.guestHint}</p>
            <button type="submit" class="primary" data-action="guest" disabled={busy}>
              {guest.busy ? t.busy : t.login.playAsGuest}
            </button>
            <ErrorNote error={guest.error} />
          </form>
        </Card>
        <Card title={t.login.accountTitle}>
          <form onSubmit={(e) => { e.preventDefault(); go(account, () => client.logIn(username, password)); }}
            aria-busy={account.busy}>
            <p class="field">
              <label for="username">{t.login.username}</label>
              <input id="username" autocomplete="username" value={username} onInput={value(setUsername)} />
            </p>
            <p class="field">
              <label for="password">{t.login.password}</label>
              <input id="password" type="password" autocomplete="current-password" value={password}
                onInput={value(setPassword)} />
            </p>
            <p class="muted">{t.login.accountHint}</p>
            <button type="submit" class="primary" data-action="login" disabled={busy}>
              {account.busy ? t.busy : t.login.logIn}
            </button>
            <button type="button" data-action="signup" disabled={busy}
              onClick={() => go(account, () => client.signUp(username, password))}>
              {t.login.signUp}
            </button>
            <ErrorNote error={account.error} />
          </form>
        </Card>
      </div>
    </div>
  );
}
