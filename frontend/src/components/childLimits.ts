import type { TFunction } from "i18next";

/** "Exactly 1 child", "At least 2 children", "1 to 3 children"; null when a list has no limits. */
export function childLimitLabel(t: TFunction, min: number | null, max: number | null, composite = true): string | null {
  if (!composite) return null;
  const lower = min ?? 0;
  if (max === null) return lower > 0 ? t("limits.atLeast", { count: lower }) : null;
  if (lower === max) return t("limits.exactly", { count: max });
  return t("limits.range", { min: lower, max });
}
