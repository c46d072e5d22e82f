/** Finding a match: where the ticket stands in its queue, the expected wait
 * and the time waited, and — in casual queues of games with computer
 * players — that CPUs fill the table if nobody else comes. The open feed
 * keeps the ticket; "Stop searching" drops it. */
import { useEffect, useState } from "preact/hooks";
import { TicketFeed } from "../../api/feed";
import type { GameInfo, Ticket } from "../../api/types";
import type { Go } from "../app";
import { t } from "../i18n";
import { client } from "../session";
import { Card, ErrorNote } from "../ui/parts";
import { modeLabel } from "./lobby";

export interface Search {
  ticket: Ticket;
  game: string;
  mode: string;
}

interface Standing {
  position?: number;
  length?: number;
  estimate?: number;
  closed?: string;
}

export function Queue({ search, games, go }: { search: Search; games: GameInfo[]; go: Go }) {
  const { ticket } = search;
  const game = games.find((g) => g.name === search.game);
  const [standing, setStanding] = useState<Standing>({
    position: ticket.position, length: ticket.queue_length, estimate: ticket.estimated_wait_seconds,
  });
  const [now, setNow] = useState(Date.now());
  const since = (ticket.enqueued_at ?? ticket.created_at) * 1000 || Date.now();

  useEffect(() => {
    const feed = new TicketFeed(client, ticket.id, {
      update: (update) => {
        if ("matched" in update) {
          feed.close();
          go({ name: "table", tableId: update.matched.table_id });
        } else if ("closed" in update) {
          setStanding((s) => ({ ...s, closed: update.closed.reason || update.closed.state }));
        } else {
          const q = update.queue;
          setStanding({ position: q.position, length: q.queue_length, estimate: q.estimated_wait_seconds });
        }
      },
      closed: (code, reason) => {
        if (code !== 1000) setStanding((s) => ({ ...s, closed: reason || String(code) }));
      },
    });
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => {
      clearInterval(timer);
      feed.close();
    };
  }, [ticket.id]);

  const stop = () => {
    void client.cancelTicket(ticket.id).catch(() => undefined);
    go({ name: "lobby" });
  };
  const waited = Math.max(0, (now - since) / 1000);
  const cpuFill = !!game?.cpu_seats && !ticket.ranked;
  return (
    <Card title={t.queue.title} class="queue">
      <p class="muted">{t.queue.game(game?.title ?? search.game, modeLabel(search.mode))}</p>
      <div id="ticket-state" role="status" aria-live="polite">
        {standing.closed ? <ErrorNote error={t.queue.closed(standing.closed)} /> : (
          <>
            <p class="spinner-line"><span class="spinner" aria-hidden="true" />
              {standing.position ? t.queue.position(standing.position, standing.length ?? standing.position) : t.queue.joining}
            </p>
            <p>{standing.estimate === undefined ? t.queue.noEstimate : t.queue.estimate(t.duration(standing.estimate))}</p>
          </>
        )}
      </div>
      <p class="waited">{t.queue.waited(t.duration(waited))}</p>
      <p class="notice">{cpuFill ? t.queue.cpuFill : ticket.ranked ? t.queue.noCpuFill : null}</p>
      {ticket.party_code ? <p>{t.queue.partyCode(ticket.party_code)}</p> : null}
      <button type="button" data-action="cancel" onClick={stop}>{t.queue.cancel}</button>
    </Card>
  );
}
