import { Compass } from "lucide-react";
import { useTranslation } from "react-i18next";

import { EmptyState } from "../components/StatusViews";
import { Link } from "../router/Router";
import { useDocumentTitle } from "../shell/useDocumentTitle";

export function NotFoundPage() {
  const { t } = useTranslation();
  useDocumentTitle(t("notFound.title"));
  return (
    <section className="page">
      <EmptyState icon={<Compass aria-hidden="true" size={28} />} title={t("notFound.title")}>
        <Link to="/" className="button">
          {t("notFound.home")}
        </Link>
      </EmptyState>
    </section>
  );
}
