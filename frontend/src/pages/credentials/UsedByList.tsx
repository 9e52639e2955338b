import { Database, Workflow } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { CredentialUse } from "../../api/credentials";
import { Link } from "../../router/Router";

/** The pipelines and knowledge bases that use a credential, each a link to its page. */
export function UsedByList({ uses }: { uses: CredentialUse[] }) {
  const { t } = useTranslation();
  return (
    <ul className="used-by" aria-label={t("credentials.usedBy")}>
      {uses.map((use) => {
        const Icon = use.type === "pipeline" ? Workflow : Database;
        const to = use.type === "pipeline" ? `/pipelines/${use.id}` : `/knowledge-bases/${use.id}`;
        return (
          <li key={`${use.type}-${use.id}`}>
            <Link to={to} className="used-by__link">
              <Icon aria-hidden="true" size={14} />
              <span>{use.name}</span>
            </Link>
            <span className="document__note">{t(`credentials.useType.${use.type}`)}</span>
          </li>
        );
      })}
    </ul>
  );
}
