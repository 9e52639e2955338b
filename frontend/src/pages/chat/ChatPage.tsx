import { MessagesSquare } from "lucide-react";
import { useTranslation } from "react-i18next";

import { EmptyState } from "../../components/StatusViews";
import { useDocumentTitle } from "../../shell/useDocumentTitle";

/** Chat arrives in part 2; until then the section explains what it will hold. */
export function ChatPage() {
  const { t } = useTranslation();
  useDocumentTitle(t("chat.title"));
  return (
    <section className="page">
      <header className="page__header">
        <h1 className="page__title">{t("chat.title")}</h1>
      </header>
      <EmptyState icon={<MessagesSquare aria-hidden="true" size={28} />} title={t("chat.soonTitle")}>
        <p className="muted">{t("chat.soonBody")}</p>
      </EmptyState>
    </section>
  );
}
