import { KeyRound, Plus, RotateCw, Trash2 } from "lucide-react";
import { useState } from "react";
import { useTranslation } from "react-i18next";

import { fetchCredentials, type Credential } from "../../api/credentials";
import { useComponentName } from "../../catalog/CatalogProvider";
import { EmptyState, ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { formatDate } from "../evaluation/format";
import { AddCredentialDialog } from "./AddCredentialDialog";
import { RemoveCredentialDialog } from "./RemoveCredentialDialog";
import { RotateCredentialDialog } from "./RotateCredentialDialog";
import { UsedByList } from "./UsedByList";

type Dialog = { type: "add" } | { type: "rotate"; credential: Credential } | { type: "remove"; credential: Credential };

/** The user's own credentials first, then the shared ones they may use; each by name. */
function ordered(credentials: Credential[]): Credential[] {
  return [...credentials].sort((a, b) => Number(!a.owned) - Number(!b.owned) || a.name.localeCompare(b.name));
}

/**
 * The signed-in user's credentials (API keys and tokens their pipelines send to hosted models and
 * web search): added, rotated and removed here, their values never shown again, each with the
 * pipelines and knowledge bases that use it. Shared credentials are an administrator's: listed,
 * not changed.
 */
export function CredentialsPage() {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const componentName = useComponentName();
  const language = i18n.resolvedLanguage ?? "en";
  const credentials = useLoad(fetchCredentials, []);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  useDocumentTitle(t("credentials.title"));

  const replace = (saved: Credential) =>
    credentials.update((rows) => (rows.some((row) => row.id === saved.id) ? rows.map((row) => (row.id === saved.id ? saved : row)) : [...rows, saved]));

  return (
    <section className="page">
      <header className="page__header">
        <div>
          <h1 className="page__title">{t("credentials.title")}</h1>
          <p className="page__subtitle">{t("credentials.intro")}</p>
        </div>
        <button type="button" className="button button--primary" onClick={() => setDialog({ type: "add" })}>
          <Plus aria-hidden="true" size={16} />
          {t("credentials.add")}
        </button>
      </header>

      {credentials.state.status === "loading" && <Loading label={t("credentials.loading")} />}
      {credentials.state.status === "error" && (
        <ErrorNotice title={t("credentials.failed")} message={credentials.state.message} onRetry={credentials.reload} />
      )}
      {credentials.state.status === "ready" && credentials.state.data.length === 0 && (
        <EmptyState icon={<KeyRound aria-hidden="true" size={28} />} title={t("credentials.noneYet")}>
          <p className="muted">{t("credentials.noneYetHint")}</p>
        </EmptyState>
      )}
      {credentials.state.status === "ready" && credentials.state.data.length > 0 && (
        <ul className="token-list" aria-label={t("credentials.title")}>
          {ordered(credentials.state.data).map((credential) => {
            const baseUrl = credential.public_params.base_url;
            return (
              <li key={credential.id} className="document" data-credential-name={credential.name}>
                <div className="document__body">
                  <div className="document__head">
                    <span className="document__name">{credential.name}</span>
                    <span className="chip">{componentName(credential.kind)}</span>
                    {!credential.owned && <span className="badge">{t("credentials.sharedByAdmin")}</span>}
                  </div>
                  <div className="card__meta">
                    <code className="chip" aria-label={t("credentials.maskLabel")}>{credential.mask}</code>
                    {typeof baseUrl === "string" && baseUrl && <code className="document__note credential__url">{baseUrl}</code>}
                    <span className="document__note">{t("credentials.created", { date: formatDate(credential.created_at, language) })}</span>
                    {credential.rotated_at && (
                      <span className="document__note">{t("credentials.rotated", { date: formatDate(credential.rotated_at, language) })}</span>
                    )}
                    <span className="document__note">
                      {credential.last_used_at
                        ? t("credentials.lastUsed", { date: formatDate(credential.last_used_at, language) })
                        : t("credentials.neverUsed")}
                    </span>
                  </div>
                  {credential.used_by.length > 0 ? (
                    <div className="credential__uses">
                      <span className="document__note">{t("credentials.usedBy")}</span>
                      <UsedByList uses={credential.used_by} />
                    </div>
                  ) : (
                    <p className="document__note">{t("credentials.unused")}</p>
                  )}
                </div>
                {credential.owned && (
                  <div className="document__actions">
                    <button
                      type="button"
                      className="button button--small"
                      aria-label={t("credentials.rotateNamed", { name: credential.name })}
                      onClick={() => setDialog({ type: "rotate", credential })}
                    >
                      <RotateCw aria-hidden="true" size={14} />
                      {t("credentials.rotate")}
                    </button>
                    <button
                      type="button"
                      className="button button--small button--danger"
                      aria-label={t("credentials.removeNamed", { name: credential.name })}
                      onClick={() => setDialog({ type: "remove", credential })}
                    >
                      <Trash2 aria-hidden="true" size={14} />
                      {t("credentials.remove")}
                    </button>
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}

      {dialog?.type === "add" && (
        <AddCredentialDialog
          onClose={() => setDialog(null)}
          onDone={(saved) => {
            setDialog(null);
            replace(saved);
            toast.success(t("credentials.added", { name: saved.name }));
          }}
        />
      )}
      {dialog?.type === "rotate" && (
        <RotateCredentialDialog
          credential={dialog.credential}
          onClose={() => setDialog(null)}
          onDone={(saved) => {
            setDialog(null);
            replace(saved);
            toast.success(t("credentials.rotatedToast", { name: saved.name }));
          }}
        />
      )}
      {dialog?.type === "remove" && (
        <RemoveCredentialDialog
          credential={dialog.credential}
          onClose={() => setDialog(null)}
          onDone={() => {
            const { credential } = dialog;
            setDialog(null);
            credentials.update((rows) => rows.filter((row) => row.id !== credential.id));
            toast.success(t("credentials.removed", { name: credential.name }));
          }}
        />
      )}
    </section>
  );
}
