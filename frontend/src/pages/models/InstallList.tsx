import { CircleAlert, RotateCw, Trash2 } from "lucide-react";
import { useTranslation } from "react-i18next";

import { isActiveInstall, type ModelInstall } from "../../api/models";
import { ProgressBar } from "../../components/StatusViews";
import { formatBytes } from "../../lib/format";

const BADGE: Record<string, string> = { ready: " badge--ready", failed: " badge--failed", queued: " badge--queued", removed: " badge--queued" };

interface InstallListProps {
  installs: readonly ModelInstall[];
  /** Ids with a retry or removal under way: their buttons wait. */
  busy: ReadonlySet<number>;
  onRetry: (install: ModelInstall) => void;
  onRemove: (install: ModelInstall) => void;
}

/**
 * The user's installs, newest first: what each installs and where it stands, live. A failed one
 * can be tried again from the same source, or removed with what it kept on the server.
 */
export function InstallList({ installs, busy, onRetry, onRemove }: InstallListProps) {
  const { t, i18n } = useTranslation();
  const language = i18n.resolvedLanguage ?? "en";
  return (
    <ul className="install-list" aria-label={t("models.installs.title")}>
      {installs.map((install) => {
        const active = isActiveInstall(install.status);
        const measured = install.total > 0 && (install.status === "downloading" || install.status === "extracting");
        return (
          <li key={install.id} className={`document${install.status === "failed" ? " document--failed" : ""}`} data-install-name={install.name}>
            <div className="document__body">
              <div className="document__head">
                <span className="document__name">{install.name}</span>
                <span className={`badge${BADGE[install.status] ?? ""}`} data-status={install.status}>
                  {t(`models.status.${install.status}`)}
                </span>
                <span className="chip">{t(`models.kind.${install.kind}`)}</span>
              </div>
              <span className="document__note model__source">
                {t(`models.from.${install.source}`, { detail: install.reference })}
              </span>
              {active && (
                <div className="stages">
                  <ProgressBar
                    value={measured ? install.done / install.total : install.status === "checking" ? 1 : 0}
                    label={t("models.installs.progressLabel", { name: install.name })}
                  />
                  <span className="stages__count">
                    {measured
                      ? t("models.installs.bytes", { done: formatBytes(install.done, language), total: formatBytes(install.total, language) })
                      : t(`models.status.${install.status}`)}
                  </span>
                </div>
              )}
              {install.error && (
                <p className="document__error">
                  <CircleAlert aria-hidden="true" size={14} />
                  {install.error}
                </p>
              )}
            </div>
            {install.status === "failed" && (
              <div className="document__actions">
                <button
                  type="button"
                  className="button button--small"
                  aria-label={t("models.installs.retryNamed", { name: install.name })}
                  disabled={busy.has(install.id)}
                  onClick={() => onRetry(install)}
                >
                  <RotateCw aria-hidden="true" size={14} />
                  {t("models.installs.retry")}
                </button>
                <button
                  type="button"
                  className="icon-button icon-button--danger"
                  aria-label={t("models.installs.removeNamed", { name: install.name })}
                  title={t("models.installs.remove")}
                  disabled={busy.has(install.id)}
                  onClick={() => onRemove(install)}
                >
                  <Trash2 aria-hidden="true" size={16} />
                </button>
              </div>
            )}
          </li>
        );
      })}
    </ul>
  );
}
