import { useEffect } from "react";
import { useTranslation } from "react-i18next";

/** "Trellis · <page>" while the page is shown. */
export function useDocumentTitle(page: string): void {
  const { t } = useTranslation();
  useEffect(() => {
    document.title = t("app.documentTitle", { page });
  }, [t, page]);
}
