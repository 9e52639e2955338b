import i18n from "i18next";
import { initReactI18next } from "react-i18next";

import {
  DEFAULT_LANGUAGE,
  SUPPORTED_LANGUAGES,
  detectInitialLanguage,
  readStoredLanguage,
  storeLanguage,
  type LanguageCode,
} from "./languages";
import en from "./locales/en.json";
import es from "./locales/es.json";
import zhHant from "./locales/zh-Hant.json";

export * from "./languages";

export const resources = {
  en: { translation: en },
  es: { translation: es },
  "zh-Hant": { translation: zhHant },
} as const;

i18n.on("languageChanged", (language) => {
  document.documentElement.lang = language;
});

void i18n.use(initReactI18next).init({
  resources,
  lng: detectInitialLanguage(readStoredLanguage(), navigator.language),
  fallbackLng: DEFAULT_LANGUAGE,
  supportedLngs: SUPPORTED_LANGUAGES.map(({ code }) => code),
  // "zh-Hant" must not fall back through a bare "zh" that is not shipped.
  load: "currentOnly",
  initAsync: false,
  interpolation: { escapeValue: false },
});

/** The shipped language the UI is showing now. */
export function currentLanguage(): LanguageCode {
  return (i18n.resolvedLanguage ?? i18n.language ?? DEFAULT_LANGUAGE) as LanguageCode;
}

/** Django's language cookie, so server-rendered and websocket texts follow the UI as well. */
const SERVER_LANGUAGE_COOKIE = "trellis_language";

/** Switch the UI language and remember the choice for the next visit. */
export async function setLanguage(code: LanguageCode): Promise<void> {
  storeLanguage(code);
  document.cookie = `${SERVER_LANGUAGE_COOKIE}=${code.toLowerCase()}; path=/; max-age=31536000; SameSite=Lax`;
  await i18n.changeLanguage(code);
}

export default i18n;
