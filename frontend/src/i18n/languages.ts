/** The languages the UI ships, with their names as speakers of each language write them. */
export const SUPPORTED_LANGUAGES = [
  { code: "en", label: "English" },
  { code: "es", label: "Español" },
  { code: "zh-Hant", label: "繁體中文" },
] as const;

export type LanguageCode = (typeof SUPPORTED_LANGUAGES)[number]["code"];

export const DEFAULT_LANGUAGE: LanguageCode = "en";
export const LANGUAGE_STORAGE_KEY = "trellis.lang";

const TRADITIONAL_CHINESE_REGIONS = new Set(["tw", "hk", "mo"]);

/**
 * Map a BCP 47 tag (a browser's `navigator.language`, a stored choice) to a shipped language.
 *
 * Chinese maps to Traditional Chinese only when the tag says so by script (`zh-Hant`) or by a
 * region that writes it (Taiwan, Hong Kong, Macau); Simplified Chinese is not shipped.
 */
export function matchLanguage(tag: string | null | undefined): LanguageCode | null {
  if (!tag) return null;
  const subtags = tag.trim().replace(/_/g, "-").toLowerCase().split("-");
  const [primary, ...rest] = subtags;
  if (primary === "en") return "en";
  if (primary === "es") return "es";
  if (primary === "zh") {
    if (rest.includes("hant")) return "zh-Hant";
    if (rest.includes("hans")) return null;
    if (rest.some((subtag) => TRADITIONAL_CHINESE_REGIONS.has(subtag))) return "zh-Hant";
  }
  return null;
}

/** The stored choice wins; otherwise the browser's language; otherwise English. */
export function detectInitialLanguage(
  stored: string | null | undefined,
  browserLanguage: string | null | undefined,
): LanguageCode {
  return matchLanguage(stored) ?? matchLanguage(browserLanguage) ?? DEFAULT_LANGUAGE;
}

export function readStoredLanguage(): string | null {
  try {
    return window.localStorage.getItem(LANGUAGE_STORAGE_KEY);
  } catch {
    // Storage can be disabled (privacy mode, sandboxed iframe); the browser language still works.
    return null;
  }
}

export function storeLanguage(code: LanguageCode): void {
  try {
    window.localStorage.setItem(LANGUAGE_STORAGE_KEY, code);
  } catch {
    // See readStoredLanguage: the choice then lasts for this page only.
  }
}
