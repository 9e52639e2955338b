/**
 * A component's representation template rendered against its configuration: a port of the
 * backend's `rag.core.representation`, so a node reads the same in the builder as on the server.
 *
 * Templates use `{param}` and `{nested.param}` placeholders; `{param|text}` renders `text` when
 * the value is unset (null). `{{` and `}}` are literal braces. A value that cannot be found renders
 * visibly as `⟨name?⟩`; rendering never throws.
 */

const PLACEHOLDER = /\{\{|\}\}|\{([^{}]*)\}/g;
const MISSING = Symbol("missing");

type Mapping = Record<string, unknown>;

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

/**
 * Look `path` up in a component reference; `component` names a reference's class and other
 * segments read its params (`params` itself may be spelled out or skipped).
 */
function resolve(config: unknown, path: string): unknown {
  let value: unknown = config;
  for (const segment of path.split(".")) {
    if (isRef(value)) {
      if (segment === "component") {
        value = value.component;
        continue;
      }
      value = value.params || {};
      if (segment === "params") continue;
    }
    if (isMapping(value) && Object.hasOwn(value, segment) && value[segment] !== undefined) {
      value = value[segment];
    } else if (Array.isArray(value) && /^[0-9]+$/.test(segment) && Number(segment) < value.length) {
      value = value[Number(segment)];
    } else {
      return MISSING;
    }
  }
  return value;
}

/** Whether some segment of `path` is an unset (null) nested component. */
function unsetRef(config: unknown, path: string): boolean {
  const head = path.split(".");
  for (let length = 1; length < head.length; length++) {
    if (resolve(config, head.slice(0, length).join(".")) === null) return true;
  }
  return false;
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

function formatValue(value: unknown): string {
  if (isRef(value)) return value.component;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (value === null || value === undefined) return "—";
  // JSON cannot tell 2 from 2.0; whole numbers read as integers (as they almost always are).
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : formatG(value);
  if (Array.isArray(value)) return value.map(formatValue).join(", ");
  if (isMapping(value)) return Object.entries(value).map(([key, item]) => `${key}=${formatValue(item)}`).join(", ");
  return String(value);
}

/** Render `template` against `config` (a `{"component", "params"}` reference). */
export function render(template: string, config: unknown): string {
  return template.replace(PLACEHOLDER, (token: string, inner: string | undefined) => {
    if (token === "{{") return "{";
    if (token === "}}") return "}";
    const bar = inner!.indexOf("|");
    const path = (bar < 0 ? inner! : inner!.slice(0, bar)).trim();
    if (!path) return "⟨?⟩";
    const value = resolve(config, path);
    if (bar >= 0 && (value === null || value === MISSING || unsetRef(config, path))) return inner!.slice(bar + 1).trim();
    return value === MISSING ? `⟨${path}?⟩` : formatValue(value);
  });
}
