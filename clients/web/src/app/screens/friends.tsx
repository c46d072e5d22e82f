/** Friends: asking someone by username, the requests both ways, friends
 * with their presence (online, at which table), a message, a profile, and
 * the users blocked. Beside them: the invitations to tables friends sent
 * (Invites, shown on every screen), and at a table before its start, the
 * friends to invite (InviteFriends: Dominó's partner sits opposite). */
import { useEffect, useState } from "preact/hooks";
import type { Friend, Schemas, Table } from "../../api/types";
import type { Go } from "../app";
import { t } from "../i18n";
import { client, gameTitle, isGuest } from "../session";
import { type Invite, social, useSocial } from "../social";
import { Card, ErrorNote, useAction } from "../ui/parts";

type Friends = Schemas["rodada.platform.v1.ListFriendsResponse"];

/** The caller's friends, loaded again on every social event and every 15 s (presence). */
export function useFriends(): [Friends | null, () => Promise<void>, string | null] {
  const { events } = useSocial();
  const [friends, setFriends] = useState<Friends | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => client.friends().then((found) => { setFriends(found); setError(null); },
    (failure: unknown) => setError(String((failure as Error).message ?? failure)));
  useEffect(() => {
    void load();
    const timer = setInterval(load, 15_000);
    return () => clearInterval(timer);
  }, [events.length]);
  return [friends, load, error];
}

export function FriendsScreen({ go }: { go: Go }) {
  return isGuest() ? <Card title={t.friends.title}><p>{t.friends.guest}</p></Card> : <FriendsPage go={go} />;
}

function FriendsPage({ go }: { go: Go }) {
  const [friends, reload] = useFriends();
  const { unread } = useSocial();
  const [username, setUsername] = useState("");
  const [sent, setSent] = useState<string | null>(null);
  const action = useAction();
  const run = (job: () => Promise<unknown>) => action.run(async () => { await job(); await reload(); });
  const ask = (event: Event) => {
    event.preventDefault();
    const name = username.trim();
    if (!name) return;
    run(async () => {
      const reply = await client.requestFriend({ username: name });
      setSent(reply.friends ? t.friends.nowFriends(name) : t.friends.requestSent(name));
      setUsername("");
    });
  };
  return (
    <div class="community friends">
      <h1>{t.friends.title}</h1>
      <Card title={t.friends.add}>
        <form class="row" onSubmit={ask}>
          <p class="field">
            <label for="friend-username">{t.friends.username}</label>
            <input id="friend-username" value={username} autocomplete="off" required
              onInput={(e) => setUsername((e.target as HTMLInputElement).value)} />
          </p>
          <button type="submit" data-action="request-friend" disabled={action.busy}>{t.friends.ask}</button>
        </form>
        {sent ? <p role="status" class="muted">{sent}</p> : null}
        <ErrorNote error={action.error} />
      </Card>
      {friends && friends.incoming.length ? (
        <Card title={t.friends.incoming} class="incoming">
          <ul class="people">
            {friends.incoming.map((r) => (
              <li data-user={r.user_id}>
                <strong>{r.name}</strong>{" "}
                <button type="button" class="primary" data-action="accept" disabled={action.busy}
                  onClick={() => run(() => client.acceptFriend(r.user_id))}>{t.friends.accept}</button>
                <button type="button" class="quiet" data-action="decline" disabled={action.busy}
                  onClick={() => run(() => client.declineFriend(r.user_id))}>{t.friends.decline}</button>
              </li>
            ))}
          </ul>
        </Card>
      ) : null}
      <Card title={t.friends.list} class="friend-list">
        {friends === null ? <p>{t.loading}</p> : friends.friends.length === 0 ? <p class="muted">{t.friends.none}</p> : (
          <ul class="people">
            {friends.friends.map((f) => (
              <li data-user={f.user_id} data-online={f.online ? "yes" : "no"}>
                <span class={`presence ${f.online ? "online" : "offline"}`} aria-hidden="true" />
                <strong>{f.name}</strong>{" "}
                <span class="muted">{presence(f)}</span>
                {unread.get(f.user_id) ? <span class="badge">{t.friends.unread(unread.get(f.user_id) ?? 0)}</span> : null}
                <span class="person-actions">
                  <button type="button" data-action="message"
                    onClick={() => go({ name: "messages", userId: f.user_id, userName: f.name })}>
                    {t.friends.message}
                  </button>
                  {f.table_id ? (
                    <button type="button" class="quiet" onClick={() => go({ name: "table", tableId: f.table_id })}>
                      {f.table_status === "open" ? t.friends.joinTable : t.friends.watch}
                    </button>
                  ) : null}
                  <button type="button" class="quiet" data-action="profile"
                    onClick={() => go({ name: "profile", userId: f.user_id, userName: f.name })}>
                    {t.friends.profile}
                  </button>
                  <button type="button" class="quiet" data-action="unfriend" disabled={action.busy}
                    onClick={() => confirm(t.friends.removeConfirm(f.name)) && run(() => client.removeFriend(f.user_id))}>
                    {t.friends.remove}
                  </button>
                </span>
              </li>
            ))}
          </ul>
        )}
      </Card>
      {friends && friends.outgoing.length ? (
        <Card title={t.friends.outgoing}>
          <ul class="people">
            {friends.outgoing.map((r) => (
              <li data-user={r.user_id}>
                <strong>{r.name}</strong>{" "}
                <button type="button" class="quiet" disabled={action.busy}
                  onClick={() => run(() => client.declineFriend(r.user_id))}>{t.friends.withdraw}</button>
              </li>
            ))}
          </ul>
        </Card>
      ) : null}
      {friends && friends.blocked.length ? (
        <Card title={t.friends.blocked} class="blocked">
          <ul class="people">
            {friends.blocked.map((userId) => (
              <li data-user={userId}>
                <code>{userId}</code>{" "}
                <button type="button" class="quiet" data-action="unblock" disabled={action.busy}
                  onClick={() => run(() => client.unblock(userId))}>{t.friends.unblock}</button>
              </li>
            ))}
          </ul>
        </Card>
      ) : null}
    </div>
  );
}

function presence(f: Friend): string {
  if (!f.online) return t.friends.offline;
  if (!f.table_id) return t.friends.online;
  const game = gameTitle(f.table_game);
  return f.table_status === "open" ? t.friends.atOpenTable(game) : t.friends.playing(game);
}

/** The invitations friends sent, on every screen until answered. */
export function Invites({ go }: { go: Go }) {
  const { invites } = useSocial();
  const action = useAction();
  if (!invites.length) return null;
  const accept = (invite: Invite) => action.run(async () => {
    if (invite.invite_code) await client.join(invite.invite_code);
    else await client.sit(invite.table_id, invite.seat);
    social.dismiss(invite);
    go({ name: "table", tableId: invite.table_id });
  });
  return (
    <section class="card invites-banner" aria-labelledby="invites-title">
      <h2 id="invites-title">{t.friends.invitesTitle}</h2>
      <ul>
        {invites.map((invite) => (
          <li data-table={invite.table_id}>
            {t.friends.invitedYou(invite.from_name, gameTitle(invite.game),
              invite.seat === undefined ? "" : t.seat(invite.seat))}{" "}
            <button type="button" class="primary" data-action="accept-invite" disabled={action.busy}
              onClick={() => accept(invite)}>{t.friends.acceptInvite}</button>
            <button type="button" class="quiet" data-action="dismiss-invite" onClick={() => social.dismiss(invite)}>
              {t.friends.dismiss}
            </button>
          </li>
        ))}
      </ul>
      <ErrorNote error={action.error} />
    </section>
  );
}

/** At a table before its start: the seated player's friends to invite (online ones first). */
export function InviteFriends({ table }: { table: Table }) {
  return isGuest() ? null : <InviteFriendsList table={table} />;
}

function InviteFriendsList({ table }: { table: Table }) {
  const [friends] = useFriends();
  const action = useAction();
  const [invited, setInvited] = useState<string | null>(null);
  const here = new Set(table.players.map((p) => p.user_id));
  const candidates = (friends?.friends ?? []).filter((f) => !here.has(f.user_id))
    .sort((a, b) => Number(b.online) - Number(a.online));
  return (
    <div class="invite-friends">
      <h3>{t.friends.inviteTitle}</h3>
      {friends === null ? <p>{t.loading}</p> : candidates.length === 0 ? <p class="muted">{t.friends.noneToInvite}</p> : (
        <ul class="people">
          {candidates.map((f) => (
            <li data-user={f.user_id}>
              <span class={`presence ${f.online ? "online" : "offline"}`} aria-hidden="true" />
              <strong>{f.name}</strong> <span class="muted">{f.online ? t.friends.online : t.friends.offline}</span>{" "}
              <button type="button" data-action="invite-friend" disabled={action.busy}
                onClick={() => action.run(async () => {
                  const sent = await client.inviteFriend(f.user_id, table.id);
                  setInvited(sent.seat === undefined ? t.friends.invited(f.name)
                    : t.friends.invitedToSeat(f.name, t.seat(sent.seat)));
                })}>
                {t.friends.invite}
              </button>
            </li>
          ))}
        </ul>
      )}
      {invited ? <p role="status" class="muted">{invited}</p> : null}
      <ErrorNote error={action.error} />
    </div>
  );
}
