// A two-player Yatzy game through the gateway's gRPC face, written against
// the TypeScript stubs buf.gen.yaml generates (gen/ts) and nothing else of
// Rodada: the host signs up, opens a table and makes an invite, a guest
// joins with it and follows the table's feed, both play to the end. Prints
// what happened as JSON for tests/protos/test_stubs.py to check against the
// server. Usage: node yatzy.js <host:port of the gateway's gRPC face>
import { create } from "@bufbuild/protobuf";
import { anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import { MatchStatus, type Snapshot } from "../../gen/ts/rodada/common/v1/match_pb.js";
import { PlatformService } from "../../gen/ts/rodada/platform/v1/platform_pb.js";
import {
  ActionSchema,
  Card,
  OptionsSchema,
  ViewSchema,
} from "../../gen/ts/rodada/yatzy/v1/yatzy_pb.js";

type Platform = Client<typeof PlatformService>;

function auth(token: string) {
  return { headers: { authorization: `Bearer ${token}` } };
}

// Rolls once and scores the box the dice are worth most in.
async function playTurn(api: Platform, token: string, tableId: string, snap: Snapshot): Promise<Snapshot> {
  const roll = create(ActionSchema, { action: { case: "roll", value: {} } });
  const rolled = await api.act(
    { tableId, expectedVersion: snap.version, action: anyPack(ActionSchema, roll) },
    auth(token),
  );
  const view = anyUnpack(rolled.match!.view!, ViewSchema);
  if (view === undefined) throw new Error(`not a Yatzy view: ${rolled.match!.view!.typeUrl}`);
  const best = view.preview.reduce((a, b) => (b.points > a.points ? b : a));
  const score = create(ActionSchema, { action: { case: "score", value: { box: best.box } } });
  const scored = await api.act(
    { tableId, expectedVersion: rolled.match!.version, action: anyPack(ActionSchema, score) },
    auth(token),
  );
  return scored.match!;
}

async function main(): Promise<void> {
  const api: Platform = createClient(
    PlatformService,
    createGrpcTransport({ baseUrl: `http://${process.argv[2]}` }),
  );
  const username = `ts${Math.random().toString(36).slice(2, 10)}`;
  const host = (await api.signUp({ username, password: "correct horse" })).session!;
  const guest = (await api.logInAsGuest({ name: "guest" })).session!;

  const options = anyPack(OptionsSchema, create(OptionsSchema, { card: Card.CLASSIC }));
  const table = (await api.createTable({ game: "yatzy", seats: 2, options }, auth(host.accessToken))).table!;
  const invite = (await api.createInvite({ tableId: table.id }, auth(host.accessToken))).invite!;
  await api.joinTable({ inviteCode: invite.code }, auth(guest.accessToken));

  // The guest's feed, from the table's creation to the match's end.
  const feed = (async () => {
    const kinds: string[] = [];
    let last: Snapshot | undefined;
    for await (const item of api.followTable({ tableId: table.id }, auth(guest.accessToken))) {
      kinds.push(item.item.case ?? "");
      if (item.item.case === "snapshot") last = item.item.value;
    }
    return { kinds, last };
  })();

  const tokens = [host.accessToken, guest.accessToken];
  let snap = (await api.startTable({ tableId: table.id }, auth(host.accessToken))).match!;
  let turns = 0;
  while (snap.status === MatchStatus.ACTIVE) {
    const seat = snap.toAct[0];
    const seen = (await api.getView({ tableId: table.id }, auth(tokens[seat]))).match!;
    snap = await playTurn(api, tokens[seat], table.id, seen);
    turns += 1;
  }
  const { kinds, last } = await feed;
  console.log(
    JSON.stringify({
      table_id: table.id,
      players: [host.user!.id, guest.user!.id],
      turns,
      scores: snap.scores,
      ranks: snap.result!.ranks,
      feed_kinds: kinds,
      feed_final_scores: last?.scores ?? [],
      feed_final_status: last ? MatchStatus[last.status] : "",
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
