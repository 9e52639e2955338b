/**
 * A component's representation template rendered against its configuration: a port of the
 * backend's `rag.core.representation`, so a node reads the same in the builder as on the server.
 *
 * A template is a run of segments joined by separators (` · ` or ` → `). Placeholders are
 * `{param}` and `{nested.param}`; a path through a list maps over its items (`{branches.name}`),
 * a number picks one. `{param|text}` renders `text` when the value is unset. `{{` and `}}` are
 * literal braces. A placeholder with nothing to show (unset, missing, an empty list or text, a
 * nested component not chosen yet) takes its whole segment with it, so a node reads well at every
 * stage of building. Nested components render as their short names and enumerated values as
 * their labels, through a `Vocabulary`. Rendering never throws.
 */

import type { CatalogComponent } from "../api/components";

const PLACEHOLDER = /\{\{|\}\}|\{([^{}]*)\}/g;
const TOKEN = /\{\{|\}\}|\{([^{}]*)\}|(\s*[·→]\s*)/g;
/** More list items than this read as "a, b, c +2". */
export const LIST_ITEMS_SHOWN = 3;

type Mapping = Record<string, unknown>;

/** How list items are joined, by language ("BM25, Dense"; "稠密、BM25"), as on the server. */
const LIST_SEPARATORS: Record<string, string> = { "zh-Hant": "、" };

/** The words a representation is rendered with, in one language. */
export interface Vocabulary {
  /** How list items are joined. */
  listSeparator: string;
  /** What a nested component of this name is called (its short name). */
  name(component: string): string;
  /** The label of `value` of `component`'s parameter `param`, if it has one. */
  label(component: string, param: string, value: unknown): string | undefined;
}

/** How an enumerated value is keyed in a table of labels, as on the server. */
export function valueKey(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The catalog's words (in `language`): each component's short name and its params' value labels. */
export function catalogVocabulary(byName: ReadonlyMap<string, CatalogComponent>, language: string): Vocabulary {
  return {
    listSeparator: LIST_SEPARATORS[language] ?? ", ",
    name: (component) => byName.get(component)?.short_name ?? component,
    label: (component, param, value) => byName.get(component)?.value_labels?.[param]?.[valueKey(value)],
  };
}

function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRef(value: unknown): value is Mapping & { component: string } {
  return isMapping(value) && typeof value.component === "string";
}

/** The placeholder paths of `template` in order (`["top_k", "embedding_model.component"]`). */
export function placeholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)]
    .filter((match) => match[1] !== undefined)
    .map((match) => match[1]!.split("|", 1)[0]!.trim());
}

/** Python's `format(value, "g")`: six significant digits, trailing zeros dropped. */
export function formatG(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf";
  if (value === 0) return Object.is(value, -0) ? "-0" : "0";
  const [mantissa, exponentText] = value.toExponential(5).split("e") as [string, string];
  const exponent = Number(exponentText);
  const trim = (digits: string) => (digits.includes(".") ? digits.replace(/0+$/, "").replace(/\.$/, "") : digits);
  if (exponent >= -4 && exponent < 6) return trim(value.toFixed(5 - exponent));
  const sign = exponent < 0 ? "-" : "+";
  return `${trim(mantissa)}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
}

function separator(vocabulary?: Vocabulary): string {
  return vocabulary?.listSeparator ?? ", ";
}

/** Joins already shown items the vocabulary's way, without naming or labelling them again. */
function joiner(vocabulary?: Vocabulary): Vocabulary {
  return { listSeparator: separator(vocabulary), name: (component) => component, label: () => undefined };
}

/** `value` as shown, or null when there is nothing to show. */
function format(value: unknown, owner: string | null, param: string | null, vocabulary?: Vocabulary): string | null {
  if (value === null || value === undefined) return null;
  if (isRef(value)) return vocabulary ? vocabulary.name(value.component) : value.component;
  if (Array.isArray(value)) {
    const items = value.map((item) => format(item, owner, param, vocabulary)).filter((item): item is string => item !== null);
    if (items.length === 0) return null;
    const hidden = items.length - LIST_ITEMS_SHOWN;
    return items.slice(0, LIST_ITEMS_SHOWN).join(separator(vocabulary)) + (hidden > 0 ? ` +${hidden}` : "");
  }
  if (isMapping(value)) {
    const entries = Object.entries(value).flatMap(([key, item]) => {
      const shown = format(item, owner, null, vocabulary);
      return shown === null ? [] : [`${key}=${shown}`];
    });
    return entries.length ? entries.join(separator(vocabulary)) : null;
  }
  if (vocabulary && owner && param) {
    const label = vocabulary.label(owner, param, value);
    if (label) return label;
  }
  if (typeof value === "boolean") return value ? "true" : "false";
  // JSON cannot tell 2 from 2.0; whole numbers read as integers (as they almost always are).
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : formatG(value);
  const text = String(value).trim();
  return text || null;
}

/**
 * What `path` shows below `value`: a reference's `component` is its name, other segments read its
 * params (`params` itself may be spelled out or skipped).
 */
function show(value: unknown, path: readonly string[], owner: string | null, param: string | null, vocabulary?: Vocabulary): string | null {
  if (path.length === 0) return format(value, owner, param, vocabulary);
  const [head, ...rest] = path as [string, ...string[]];
  if (isRef(value)) {
    if (head === "component") return rest.length === 0 ? format(value, null, null, vocabulary) : null;
    const params = isMapping(value.params) ? value.params : {};
    if (head === "params") return show(params, rest, value.component, null, vocabulary);
    return Object.hasOwn(params, head) ? show(params[head], rest, value.component, head, vocabulary) : null;
  }
  if (isMapping(value)) return Object.hasOwn(value, head) ? show(value[head], rest, owner, param ?? head, vocabulary) : null;
  if (Array.isArray(value)) {
    if (/^[0-9]+$/.test(head)) {
      const index = Number(head);
      return index < value.length ? show(value[index], rest, owner, param, vocabulary) : null;
    }
    return format(value.map((item) => show(item, path, owner, param, vocabulary)), null, null, joiner(vocabulary));
  }
  return null;
}

/** Render `template` against `config` (a `{"component", "params"}` reference); "" when nothing in it can be shown yet. */
export function render(template: string, config: unknown, vocabulary?: Vocabulary): string {
  // Each segment: the separator before it, its text so far, whether a placeholder came up empty.
  const segments: { separator: string; text: string; empty: boolean }[] = [{ separator: "", text: "", empty: false }];
  let start = 0;
  for (const match of template.matchAll(TOKEN)) {
    let segment = segments[segments.length - 1]!;
    segment.text += template.slice(start, match.index);
    start = match.index + match[0].length;
    const token = match[0];
    if (token === "{{" || token === "}}") {
      segment.text += token[0];
    } else if (match[2] !== undefined) {
      segment = { separator: match[2], text: "", empty: false };
      segments.push(segment);
    } else {
      const inner = match[1]!;
      const bar = inner.indexOf("|");
      const path = (bar < 0 ? inner : inner.slice(0, bar)).trim();
      let shown = path ? show(config, path.split("."), null, null, vocabulary) : null;
      if (shown === null && bar >= 0) shown = inner.slice(bar + 1).trim() || null;
      if (shown === null) segment.empty = true;
      else segment.text += shown;
    }
  }
  segments[segments.length - 1]!.text += template.slice(start);

  // A dropped segment's separator joins the segments on either side ("A · {x} → B" reads "A · B").
  let out = "";
  let pending: string | null = null;
  for (const { separator, text, empty } of segments) {
    if (empty || !text.trim()) {
      pending ??= separator;
      continue;
    }
    if (out) out += pending ?? separator;
    out += text;
    pending = null;
  }
  return out.trim();
}
