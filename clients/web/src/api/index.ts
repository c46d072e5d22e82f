/**
 * Rodada's TypeScript client: `Client` (every HTTP operation, client.ts), the
 * feeds (feed.ts) and the types generated from the gateway's OpenAPI
 * (types.ts). Works in browsers and on Node 20 (give it `ws` for WebSocket).
 */
export * from "./client";
export * from "./feed";
export type * from "./types";
