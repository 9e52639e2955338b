import { Download } from "lucide-react";
import { useTranslation } from "react-i18next";

import { installLink, installTargetOf, type ErrorAction } from "../api/models";
import { Link } from "../router/Router";

/**
 * Where an error that a missing model causes sends the user: the Models page with its install
 * dialog filled in (kind and id). Renders nothing for any other action, or none.
 */
export function InstallModelLink({ action }: { action: ErrorAction | null | undefined }) {
  const { t } = useTranslation();
  const target = installTargetOf(action);
  if (!target) return null;
  return (
    <Link to={installLink(target)} className="install-link" data-install-link={target.reference}>
      <Download aria-hidden="true" size={14} />
      {t("models.installLink", { model: target.reference })}
    </Link>
  );
}
