/**
 * A game's table options as form controls, built from the game's `Options`
 * message in the gateway's /openapi.json (a select for each enum, a checkbox
 * for each flag, a choice of numbers for each count) with the defaults of
 * GET /v1/games. Only legal values are offered: the schema has the enums'
 * values; the counts' limits, which it does not state, are in COUNTS.
 */
import { useEffect, useState } from "preact/hooks";
import type { GameInfo } from "../../api/types";
import { t } from "../i18n";

type Value = string | number | boolean;
export type OptionValues = Record<string, Value>;

export interface OptionField {
  name: string;
  kind: "enum" | "flag" | "count";
  choices: Value[];
  fallback: Value;
}

interface JsonSchema {
  type?: string;
  $ref?: string;
  enum?: string[];
  properties?: Record<string, JsonSchema>;
}

/** The counts' legal values (the games refuse any other with `invalid_options`). */
const COUNTS: Record<string, number[]> = {
  "dudo.dice_per_player": [1, 2, 3, 4, 5],
  "bozu_mekuri.turn_timer_seconds": [0, 30, 60],
};
/** Fields the form does not show: the mode sets them. */
const FROM_MODE = new Set(["mode"]);

let schemas: Promise<Record<string, JsonSchema>> | null = null;

function loadSchemas(): Promise<Record<string, JsonSchema>> {
  schemas ??= fetch("/openapi.json")
    .then((reply) => reply.json() as Promise<{ components: { schemas: Record<string, JsonSchema> } }>)
    .then((doc) => doc.components.schemas)
    .catch((error: unknown) => {
      schemas = null; // try again next time
      throw error;
    });
  return schemas;
}

export async function optionFields(game: GameInfo): Promise<OptionField[]> {
  const all = await loadSchemas();
  const options = all[`${game.proto_package}.Options`]?.properties ?? {};
  const fields: OptionField[] = [];
  for (const [name, schema] of Object.entries(options)) {
    if (FROM_MODE.has(name)) continue;
    const target = schema.$ref ? all[schema.$ref.replace("#/components/schemas/", "")] : schema;
    if (target?.enum) {
      const choices = target.enum.filter((v) => !v.endsWith("_UNSPECIFIED"));
      fields.push({ name, kind: "enum", choices, fallback: choices[0] ?? "" });
    } else if (target?.type === "boolean") {
      fields.push({ name, kind: "flag", choices: [false, true], fallback: false });
    } else if (target?.type === "integer") {
      const choices = COUNTS[`${game.name}.${name}`] ?? [0, 1, 2, 3, 4, 5, 6];
      fields.push({ name, kind: "count", choices, fallback: choices[0] ?? 0 });
    }
  }
  return fields;
}

/** The fields' starting values: the mode's, else the game's defaults, else the first legal one. */
export function defaults(game: GameInfo, modeOptions: Record<string, unknown>, fields: OptionField[]): OptionValues {
  const values: OptionValues = {};
  for (const field of fields) {
    const given = modeOptions[field.name] ?? game.option_defaults?.[field.name];
    values[field.name] = field.kind === "count" && typeof given === "number" ? given
      : field.kind === "flag" && typeof given === "boolean" ? given
      : field.kind === "enum" && typeof given === "string" && field.choices.includes(given) ? given
      : field.fallback;
  }
  return values;
}

export function useOptionFields(game: GameInfo): { fields: OptionField[] | null; failed: boolean } {
  const [state, setState] = useState<{ game: string; fields: OptionField[] | null; failed: boolean }>(
    { game: "", fields: null, failed: false });
  useEffect(() => {
    let live = true;
    optionFields(game).then(
      (fields) => live && setState({ game: game.name, fields, failed: false }),
      () => live && setState({ game: game.name, fields: [], failed: true }),
    );
    return () => { live = false; };
  }, [game.name]);
  return state.game === game.name ? state : { fields: null, failed: false };
}

function label(name: string): string {
  return t.options.labels[name] ?? name.replace(/_/g, " ");
}

function choiceLabel(field: OptionField, value: Value): string {
  if (field.name === "turn_timer_seconds") return value ? t.options.timer(Number(value)) : t.options.noTimer;
  return typeof value === "string" ? (t.options.values[value] ?? value.replace(/_/g, " ").toLowerCase()) : String(value);
}

export function OptionsForm({ fields, values, onChange, disabled }: {
  fields: OptionField[];
  values: OptionValues;
  onChange: (values: OptionValues) => void;
  disabled?: Set<string>;
}) {
  if (!fields.length) return null;
  const set = (name: string, value: Value) => onChange({ ...values, [name]: value });
  return (
    <fieldset class="options">
      <legend>{t.options.title}</legend>
      {fields.map((field) => {
        const id = `option-${field.name}`;
        if (field.kind === "flag") {
          return (
            <p class="check">
              <input type="checkbox" id={id} checked={values[field.name] === true} disabled={disabled?.has(field.name)}
                onChange={(e) => set(field.name, (e.target as HTMLInputElement).checked)} />
              <label for={id}>{label(field.name)}</label>
            </p>
          );
        }
        return (
          <p class="field">
            <label for={id}>{label(field.name)}</label>
            <select id={id} value={String(values[field.name])}
              onChange={(e) => {
                const raw = (e.target as HTMLSelectElement).value;
                set(field.name, field.kind === "count" ? Number(raw) : raw);
              }}>
              {field.choices.map((choice) => <option value={String(choice)}>{choiceLabel(field, choice)}</option>)}
            </select>
          </p>
        );
      })}
    </fieldset>
  );
}
