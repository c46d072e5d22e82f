/**
 * Names for the generated types (schema.d.ts, made by `make web` from the
 * gateway's OpenAPI with openapi-typescript; never committed), and the types
 * of any operation read off it by path and method: its path parameters,
 * query, body and reply. Nothing here restates what the OpenAPI says.
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
export type SocialEvent = Schemas["rodada.platform.v1.SocialEvent"];
export type ChatMessage = Schemas["rodada.platform.v1.ChatMessage"];
export type Friend = Schemas["rodada.platform.v1.Friend"];
export type Tournament = Schemas["rodada.platform.v1.Tournament"];
export type ApiError = Schemas["Error"];

// -- operations, by path and method --

export type Path = keyof paths;
export type Method = "get" | "put" | "post" | "delete";
/** The methods a path has. */
export type MethodOf<P extends Path> = {
  [M in Method]: paths[P][M] extends { responses: unknown } ? M : never;
}[Method];
type Operation<P extends Path, M extends MethodOf<P>> = NonNullable<paths[P][M]>;

/** An operation's path parameters (`{}` for none). */
export type PathParams<P extends Path, M extends MethodOf<P>> =
  Operation<P, M> extends { parameters: { path: infer T extends object } } ? T : Record<never, never>;

/** An operation's query parameters (`{}` for none). */
export type Query<P extends Path, M extends MethodOf<P>> =
  Operation<P, M> extends { parameters: { query?: infer T } } ? ([T] extends [object] ? T : never) : never;

/** The body of an operation's JSON request (`never` for none). */
export type RequestBody<P extends Path, M extends MethodOf<P>> =
  Operation<P, M> extends { requestBody?: infer R }
    ? [NonNullable<R>] extends [never]
      ? never
      : NonNullable<R> extends { content: { "application/json": infer B } }
        ? B
        : never
    : never;

/** An operation's JSON reply on success (`void` for 204 No Content). */
export type Reply<P extends Path, M extends MethodOf<P>> =
  Operation<P, M> extends { responses: infer R } ? Success<R> : never;
type Success<R> = R extends { 200: { content: { "application/json": infer T } } }
  ? T
  : R extends { 201: { content: { "application/json": infer T } } }
    ? T
    : R extends { 101: { content: { "application/json": infer T } } }
      ? T
      : void;

/** Any game's action, as a client writes it (the table's game's). */
export type Action = RequestBody<"/v1/tables/{table_id}/actions", "post">["action"];
export type Question = RequestBody<"/v1/tables/{table_id}/ask", "post">["question"];
/** Any game's options, each left out taking the game's default (`option_defaults` in GET /v1/games). */
export type Options = Defaults<NonNullable<RequestBody<"/v1/tables", "post">["options"]>>;
type Defaults<T> = T extends object ? Partial<T> : T;

/** A game's own messages, by game package (e.g. `"yatzy"`). */
export type View<G extends string> = Schemas[`rodada.${G}.v1.View` & keyof Schemas];
export type GameAction<G extends string> = Schemas[`rodada.${G}.v1.Action` & keyof Schemas];
export type GameEvent<G extends string> = Schemas[`rodada.${G}.v1.Event` & keyof Schemas];

// -- the feeds' items (the AsyncAPI document, /v1/feeds/asyncapi.json, on these same schemas) --

/** A table feed's item: an event, a snapshot or the table. */
export type TableFeedItem = FeedItem;
export type SocialFeedItem = Schemas["rodada.platform.v1.FollowSocialResponse"];
/** A tournament feed's item: the tournament now and after every change. */
export type TournamentFeedItem = { tournament: Tournament };
