import i18n from "../i18n";

const UNITS = ["bytes", "kilobytes", "megabytes", "gigabytes"] as const;

/**
 * "827 bytes", "12.3 kB", "12,3 kB", "827 位元組": the number in the language's own format, the
 * unit (and its plural) from the UI's translations. (Browsers' unit names are uneven: Chromium
 * writes "827 byte" in English.)
 */
export function formatBytes(bytes: number, language: string): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  const number = new Intl.NumberFormat(language, { maximumFractionDigits: unit === 0 ? 0 : 1 }).format(value);
  return i18n.t(`units.${UNITS[unit]}`, { lng: language, value: number, count: unit === 0 ? value : undefined });
}
