/** A die drawn in SVG: its pips, a kept die marked (ring and a label under
 * it), a die under the cup drawn as the cup. As a button it toggles keeping;
 * its accessible name says the face and whether it is kept. */
import type { JSX } from "preact";
import { t } from "../i18n";
import { pips } from "./pips";

export function DieFace({ face, hidden = false }: { face: number; hidden?: boolean }) {
  return (
    <svg viewBox="0 0 100 100" class="die-face" aria-hidden="true" focusable="false">
      {hidden ? (
        <g class="cup">
          <path d="M18 88 L28 14 H72 L82 88 Z" />
          <ellipse cx="50" cy="14" rx="22" ry="6" />
        </g>
      ) : (
        <>
          <rect x="4" y="4" width="92" height="92" rx="18" />
          {pips(face, 100).map(([x, y]) => <circle cx={x} cy={y} r="9" />)}
        </>
      )}
    </svg>
  );
}

interface DieProps {
  /** 0-based position among the dice (named 1-based). */
  index: number;
  face: number;
  hidden?: boolean;
  kept?: boolean;
  /** Drawn as just thrown (a short roll; none with reduced motion). */
  fresh?: boolean;
  /** Makes it a keep toggle. */
  onToggle?: () => void;
}

export function Die({ index, face, hidden = false, kept = false, fresh = false, onToggle }: DieProps): JSX.Element {
  // The visible "kept" mark is part of the name (as the pressed state says it too).
  const name = (hidden ? t.dice.hidden(index + 1) : t.dice.die(index + 1, face)) + (kept ? `, ${t.dice.kept}` : "");
  const classes = `die${kept ? " kept" : ""}${hidden ? " hidden" : ""}${fresh ? " fresh" : ""}`;
  const body = (
    <>
      <DieFace face={face} hidden={hidden} />
      <span class="die-mark" aria-hidden="true">{kept ? t.dice.kept : ""}</span>
    </>
  );
  if (onToggle) {
    return (
      <button type="button" class={classes} aria-pressed={kept} aria-label={name} data-die={index} onClick={onToggle}>
        {body}
      </button>
    );
  }
  return (
    <span class={classes} role="img" aria-label={name}>
      {body}
    </span>
  );
}

/** A row of dice (a list for screen readers). */
export function DiceRow({ children, label }: { children: JSX.Element[]; label?: string }) {
  return (
    <div class="dice" role="group" aria-label={label ?? t.dice.area}>
      {children.length ? children : <span class="muted">{t.dice.none}</span>}
    </div>
  );
}

/** Small inline dice for text (a bid, a log line): the faces as pictures with words for readers. */
export function InlineDice({ faces }: { faces: number[] }) {
  return (
    <span class="inline-dice" role="img" aria-label={faces.join(", ")}>
      {faces.map((f) => <DieFace face={f} />)}
    </span>
  );
}
