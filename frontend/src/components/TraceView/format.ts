import type { TFunction } from "i18next";

/** "12.3 ms", or "1.24 s" past a second, in the UI's language. */
export function formatDuration(t: TFunction, language: string, ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  if (ms >= 1000) {
    return t("trace.seconds", { value: new Intl.NumberFormat(language, { maximumFractionDigits: 2 }).format(ms / 1000) });
  }
  return t("trace.milliseconds", { value: new Intl.NumberFormat(language, { maximumFractionDigits: ms < 10 ? 2 : 1 }).format(ms) });
}

export function formatScore(language: string, score: number): string {
  return new Intl.NumberFormat(language, { maximumSignificantDigits: 3 }).format(score);
}

/** Each score's share of the bar: scores are on each retriever's own scale, so relative to the node. */
export function scoreShares(scores: readonly number[]): number[] {
  if (scores.length === 0) return [];
  const low = Math.min(0, ...scores);
  const high = Math.max(...scores);
  if (high <= low) return scores.map(() => 1);
  return scores.map((score) => (score - low) / (high - low));
}

export function clip(text: string, length: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}
