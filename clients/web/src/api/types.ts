/**
 * Names for the generated types (schema.d.ts, made by `make web` from the
 * gateway's OpenAPI with openapi-typescript; never committed).
 */
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];
export type Session = Schemas["rodada.platform.v1.Session"];
export type User = Schemas["rodada.platform.v1.User"];
export type GameInfo = Schemas["rodada.common.v1.GameInfo"];
export type Table = Schemas["rodada.platform.v1.Table"];
export type Invite = Schemas["rodada.platform.v1.Invite"];
export type Snapshot = Schemas["rodada.common.v1.Snapshot"];
export type MatchEvent = Schemas["rodada.common.v1.MatchEvent"];
export type Ticket = Schemas["rodada.platform.v1.Ticket"];
export type TicketUpdate = Schemas["rodada.platform.v1.TicketUpdate"];
export type FeedItem = Schemas["rodada.platform.v1.FollowTableResponse"];
export type ApiError = Schemas["Error"];

/** The body of an operation's JSON request, by path and method. */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;

/** Any game's action, as a client writes it (the table's game's). */
export type Action = RequestBody<"/v1/tables/{table_id}/actions", "post">["action"];
export type Question = RequestBody<"/v1/tables/{table_id}/ask", "post">["question"];
export type Options = RequestBody<"/v1/tables", "post">["options"];

/** A game's own messages, by game package (e.g. `"yatzy"`). */
export type View<G extends string> = Schemas[`rodada.${G}.v1.View` & keyof Schemas];
export type GameAction<G extends string> = Schemas[`rodada.${G}.v1.Action` & keyof Schemas];
export type GameEvent<G extends string> = Schemas[`rodada.${G}.v1.Event` & keyof Schemas];
