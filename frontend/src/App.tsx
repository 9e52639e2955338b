import { Sprout } from "lucide-react";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";

import { ComponentCatalog } from "./components/ComponentCatalog";
import { LanguageSwitcher } from "./components/LanguageSwitcher";

export function App() {
  const { t, i18n } = useTranslation();

  useEffect(() => {
    document.title = t("app.documentTitle");
  }, [t, i18n.resolvedLanguage]);

  return (
    <div className="app">
      <header className="app-header">
        <div className="app-header__inner">
          <div className="brand">
            <span className="brand__mark">
              <Sprout aria-hidden="true" size={20} />
            </span>
            <span className="brand__name">{t("app.name")}</span>
            <span className="brand__tagline">{t("app.tagline")}</span>
          </div>
          <LanguageSwitcher />
        </div>
      </header>
      <main className="app-main">
        <ComponentCatalog />
      </main>
    </div>
  );
}
