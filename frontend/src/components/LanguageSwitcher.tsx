import { Languages } from "lucide-react";
import { useId } from "react";
import { useTranslation } from "react-i18next";

import { SUPPORTED_LANGUAGES, matchLanguage, setLanguage, DEFAULT_LANGUAGE } from "../i18n";

export function LanguageSwitcher() {
  const { t, i18n } = useTranslation();
  const selectId = useId();
  const current = matchLanguage(i18n.resolvedLanguage ?? i18n.language) ?? DEFAULT_LANGUAGE;

  return (
    <div className="language-switcher">
      <label htmlFor={selectId} className="language-switcher__label">
        <Languages aria-hidden="true" size={16} />
        <span className="visually-hidden">{t("language.label")}</span>
      </label>
      <select
        id={selectId}
        className="language-switcher__select"
        value={current}
        onChange={(event) => {
          const code = matchLanguage(event.target.value);
          if (code) void setLanguage(code);
        }}
      >
        {SUPPORTED_LANGUAGES.map(({ code, label }) => (
          <option key={code} value={code} lang={code}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}
