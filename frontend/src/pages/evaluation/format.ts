import type { Interval } from "../../api/evaluation";

/** How metric names read in tables; the same in every language (they are the field's notation). */
export const METRIC_LABELS: Record<string, string> = {
  "ndcg@10": "nDCG@10",
  "recall@1": "R@1",
  "recall@5": "R@5",
  "recall@10": "R@10",
  "recall@100": "R@100",
  "mrr@10": "MRR@10",
  map: "MAP",
};

/** Below this p-value a difference is marked significant. */
export const SIGNIFICANCE = 0.05;

const formats = new Map<string, Intl.NumberFormat>();

function formatter(language: string, digits: number, signed = false): Intl.NumberFormat {
  const key = `${language}:${digits}:${signed}`;
  let format = formats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(language, {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
      signDisplay: signed ? "exceptZero" : "auto",
    });
    formats.set(key, format);
  }
  return format;
}

const DASH = "—";

/** A score in [0, 1] with three decimals; a dash when missing. */
export function formatScore(value: number | null | undefined, language: string): string {
  return value === null || value === undefined ? DASH : formatter(language, 3).format(value);
}

/** A difference with its sign. */
export function formatDifference(value: number | null | undefined, language: string): string {
  return value === null || value === undefined ? DASH : formatter(language, 3, true).format(value);
}

/** "0.412–0.538"; a dash when either bound is missing. */
export function formatInterval(interval: Interval | undefined, language: string, signed = false): string {
  if (!interval || interval[0] === null || interval[1] === null) return DASH;
  const format = signed ? formatDifference : formatScore;
  return `${format(interval[0], language)} – ${format(interval[1], language)}`;
}

/** Half the interval's width, the "±" a reader expects; null when unknown. */
export function halfWidth(interval: Interval | undefined): number | null {
  if (!interval || interval[0] === null || interval[1] === null) return null;
  return (interval[1] - interval[0]) / 2;
}

/** A p-value: three decimals, or "< 0.001". */
export function formatP(value: number | null | undefined, language: string): string {
  if (value === null || value === undefined) return DASH;
  if (value < 0.001) return `< ${formatter(language, 3).format(0.001)}`;
  return formatter(language, 3).format(value);
}

/** Milliseconds: whole above 100, one decimal below. */
export function formatMs(value: number | null | undefined, language: string): string {
  if (value === null || value === undefined) return DASH;
  return formatter(language, value >= 100 ? 0 : 1).format(value);
}

/** A count or average with one decimal. */
export function formatOne(value: number | null | undefined, language: string): string {
  return value === null || value === undefined ? DASH : formatter(language, 1).format(value);
}

export function formatDate(iso: string | null, language: string): string {
  if (!iso) return DASH;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return DASH;
  return new Intl.DateTimeFormat(language, { dateStyle: "medium", timeStyle: "short" }).format(date);
}

/** What a number field holds: its number, or null when empty (or not a number). */
export function parseOptionalInt(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : null;
}

/** "English", "Chinese"… for a language code, in the UI's language; the code when unknown. */
export function languageName(code: string, language: string): string {
  try {
    return new Intl.DisplayNames([language], { type: "language" }).of(code) ?? code;
  } catch {
    return code;
  }
}
