import { Check, Copy, KeyRound, Plus } from "lucide-react";
import { useId, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";

import { createApiToken, fetchApiTokens, revokeApiToken, type ApiToken, type IssuedApiToken } from "../../api/tokens";
import { useAuth } from "../../auth/AuthProvider";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState, ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { formatDate } from "../evaluation/format";

/**
 * The signed-in user's account: API tokens for chat clients (the OpenAI-compatible API at
 * `/v1`) and MCP agents (`/mcp`): made here, their secret shown once with a copy button, and
 * revoked here.
 */
export function AccountPage() {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const { state: auth } = useAuth();
  const language = i18n.resolvedLanguage ?? "en";
  const tokens = useLoad(fetchApiTokens, []);
  const [name, setName] = useState("");
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<IssuedApiToken | null>(null);
  const [copied, setCopied] = useState(false);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const nameId = useId();
  useDocumentTitle(t("account.title"));
  const origin = window.location.origin;

  const create = async (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return;
    setCreating(true);
    try {
      const made = await createApiToken(name.trim());
      setIssued(made);
      setCopied(false);
      setName("");
      const { token: _secret, ...listed } = made;
      tokens.update((rows) => [listed, ...rows]);
    } catch (error) {
      toast.error(t("account.tokens.createFailed"), error);
    } finally {
      setCreating(false);
    }
  };

  const copy = async (secret: string) => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied(true);
    } catch (error) {
      toast.error(t("account.tokens.copyFailed"), error);
    }
  };

  const revoke = async (token: ApiToken) => {
    setRevoking(null);
    try {
      const revoked = await revokeApiToken(token.id);
      tokens.update((rows) => rows.map((row) => (row.id === revoked.id ? revoked : row)));
      if (issued?.id === revoked.id) setIssued(null);
      toast.success(t("account.tokens.revoked", { name: token.name }));
    } catch (error) {
      toast.error(t("account.tokens.revokeFailed", { name: token.name }), error);
    }
  };

  return (
    <section className="page">
      <header className="page__header">
        <div>
          <h1 className="page__title">{t("account.title")}</h1>
          {auth.status === "signed-in" && <p className="page__subtitle">{t("account.signedInAs", { name: auth.session.username })}</p>}
        </div>
      </header>

      <section className="section" aria-labelledby="tokens-title">
        <div className="section__header">
          <h2 id="tokens-title" className="section__title">
            {t("account.tokens.title")}
          </h2>
        </div>
        <p className="muted">{t("account.tokens.intro")}</p>
        <dl className="connect-info">
          <dt>{t("account.tokens.baseUrl")}</dt>
          <dd>
            <code>{`${origin}/v1`}</code>
          </dd>
          <dt>{t("account.tokens.mcpUrl")}</dt>
          <dd>
            <code>{`${origin}/mcp`}</code>
          </dd>
        </dl>

        <form className="token-form" onSubmit={create}>
          <div className="field field--grow">
            <label htmlFor={nameId} className="field__label">
              {t("account.tokens.name")}
            </label>
            <input
              id={nameId}
              className="input"
              value={name}
              maxLength={100}
              placeholder={t("account.tokens.namePlaceholder")}
              onChange={(event) => setName(event.target.value)}
            />
          </div>
          <button type="submit" className="button button--primary" disabled={creating || !name.trim()}>
            <Plus aria-hidden="true" size={16} />
            {t("account.tokens.create")}
          </button>
        </form>

        {issued && (
          <div className="notice notice--warning token-secret" role="status">
            <KeyRound aria-hidden="true" className="notice__icon" size={20} />
            <div>
              <p className="notice__title">{t("account.tokens.issuedTitle", { name: issued.name })}</p>
              <p className="notice__detail">{t("account.tokens.issuedDetail")}</p>
              <p className="token-secret__value">
                <code aria-label={t("account.tokens.secretLabel")}>{issued.token}</code>
                <button type="button" className="button button--small" onClick={() => void copy(issued.token)}>
                  {copied ? <Check aria-hidden="true" size={14} /> : <Copy aria-hidden="true" size={14} />}
                  {copied ? t("account.tokens.copied") : t("account.tokens.copy")}
                </button>
                <button type="button" className="button button--small" onClick={() => setIssued(null)}>
                  {t("account.tokens.done")}
                </button>
              </p>
            </div>
          </div>
        )}

        {tokens.state.status === "loading" && <Loading label={t("account.tokens.loading")} />}
        {tokens.state.status === "error" && (
          <ErrorNotice title={t("account.tokens.loadFailed")} message={tokens.state.message} onRetry={tokens.reload} />
        )}
        {tokens.state.status === "ready" && tokens.state.data.length === 0 && (
          <EmptyState icon={<KeyRound aria-hidden="true" size={28} />} title={t("account.tokens.empty")} />
        )}
        {tokens.state.status === "ready" && tokens.state.data.length > 0 && (
          <ul className="token-list" aria-label={t("account.tokens.title")}>
            {tokens.state.data.map((token) => (
              <li key={token.id} className="document" data-token-name={token.name}>
                <div className="document__body">
                  <div className="document__head">
                    <span className="document__name">{token.name}</span>
                    <span className={`badge ${token.active ? "badge--ready" : "badge--failed"}`}>
                      {token.active ? t("account.tokens.active") : t("account.tokens.revokedBadge")}
                    </span>
                  </div>
                  <div className="card__meta">
                    <code className="chip">{`${token.prefix}…`}</code>
                    <span className="document__note">{t("account.tokens.created", { date: formatDate(token.created_at, language) })}</span>
                    <span className="document__note">
                      {token.last_used_at
                        ? t("account.tokens.lastUsed", { date: formatDate(token.last_used_at, language) })
                        : t("account.tokens.neverUsed")}
                    </span>
                    {token.revoked_at && (
                      <span className="document__note">{t("account.tokens.revokedOn", { date: formatDate(token.revoked_at, language) })}</span>
                    )}
                  </div>
                </div>
                {token.active && (
                  <div className="document__actions">
                    <button
                      type="button"
                      className="button button--small button--danger"
                      aria-label={t("account.tokens.revokeNamed", { name: token.name })}
                      onClick={() => setRevoking(token)}
                    >
                      {t("account.tokens.revoke")}
                    </button>
                  </div>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      {revoking && (
        <ConfirmDialog
          title={t("account.tokens.revokeTitle", { name: revoking.name })}
          message={t("account.tokens.revokeMessage")}
          confirmLabel={t("account.tokens.revoke")}
          danger
          onConfirm={() => void revoke(revoking)}
          onCancel={() => setRevoking(null)}
        />
      )}
    </section>
  );
}
