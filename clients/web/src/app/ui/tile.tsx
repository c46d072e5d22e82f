/** A domino tile in SVG: two halves with their pips, laid across (a double
 * stands crosswise in the line, as on a real table). Its accessible name is
 * its numbers, "5–6" or "double 4". */
import type { JSX } from "preact";
import { t } from "../i18n";
import { pips } from "./pips";

function Half({ value, dx }: { value: number; dx: number }) {
  return <g transform={`translate(${dx} 0)`}>{pips(value, 50).map(([x, y]) => <circle cx={x} cy={y} r="4.5" />)}</g>;
}

/** The picture alone (a 100×50 tile, or 50×100 standing). */
export function TileFace({ a, b, standing = false }: { a: number; b: number; standing?: boolean }) {
  return (
    <svg viewBox={standing ? "0 0 50 100" : "0 0 100 50"} class={`tile-face${standing ? " standing" : ""}`}
      aria-hidden="true" focusable="false">
      <g transform={standing ? "rotate(90 25 25)" : undefined}>
        <rect x="1.5" y="1.5" width="97" height="47" rx="7" />
        <line x1="50" y1="7" x2="50" y2="43" />
        <Half value={a} dx={0} />
        <Half value={b} dx={50} />
      </g>
    </svg>
  );
}

interface TileProps {
  a: number;
  b: number;
  standing?: boolean;
  fresh?: boolean;
  /** More words for the accessible name, e.g. who played it. */
  detail?: string;
  onPlay?: () => void;
  playLabel?: string;
  attrs?: Record<string, string>;
}

export function Tile({ a, b, standing = false, fresh = false, detail, onPlay, playLabel, attrs }: TileProps): JSX.Element {
  const name = t.domino.tileName(a, b) + (detail ? `, ${detail}` : "");
  const classes = `tile${fresh ? " fresh" : ""}${standing ? " double" : ""}`;
  if (onPlay) {
    return (
      <button type="button" class={`${classes} playable`} aria-label={playLabel ?? name} onClick={onPlay} {...attrs}>
        <TileFace a={a} b={b} standing={standing} />
      </button>
    );
  }
  return (
    <span class={classes} role="img" aria-label={name} {...attrs}>
      <TileFace a={a} b={b} standing={standing} />
    </span>
  );
}

/** A tile's back (another player's hidden tile). */
export function TileBack() {
  return (
    <svg viewBox="0 0 25 50" class="tile-back" aria-hidden="true" focusable="false">
      <rect x="1" y="1" width="23" height="48" rx="4" />
    </svg>
  );
}
