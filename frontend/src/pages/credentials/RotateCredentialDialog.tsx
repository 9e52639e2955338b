import { useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { pathErrorsOf, type ComponentDetail, type PathError } from "../../api/components";
import { rotateCredential, type Credential } from "../../api/credentials";
import { useCatalog } from "../../catalog/CatalogProvider";
import { Modal } from "../../components/Modal";
import { useToast } from "../../components/Toasts";
import { secretParams, valueParam } from "./secrets";

interface RotateCredentialDialogProps {
  credential: Credential;
  onDone: (credential: Credential) => void;
  onClose: () => void;
}

/** Replace a credential's secret values; its name, kind and other values stay, so its pipelines keep it. */
export function RotateCredentialDialog({ credential, onDone, onClose }: RotateCredentialDialogProps) {
  const { t } = useTranslation();
  const toast = useToast();
  const { loadDetail } = useCatalog();
  const [detail, setDetail] = useState<ComponentDetail | null>(null);
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<PathError[]>([]);
  const [busy, setBusy] = useState(false);
  const formId = useId();
  const fieldId = useId();

  useEffect(() => {
    let current = true;
    loadDetail(credential.kind).then(
      (loaded) => current && setDetail(loaded),
      (error: unknown) => current && toast.error(t("credentials.kindFailed"), error),
    );
    return () => {
      current = false;
    };
  }, [credential.kind, loadDetail, toast, t]);

  const params = secretParams(detail?.schema);
  const complete = params.length > 0 && params.every((param) => (secrets[param] ?? "").trim() !== "");
  const unplaced = errors.filter((error) => !params.includes(valueParam(error.path) ?? ""));

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setErrors([]);
    try {
      const saved = await rotateCredential(credential.id, secrets);
      setSecrets({});
      onDone(saved);
    } catch (error) {
      const list = pathErrorsOf(error);
      if (list?.length) setErrors(list);
      else toast.error(t("credentials.rotateFailed", { name: credential.name }), error);
      setBusy(false);
    }
  };

  return (
    <Modal
      title={t("credentials.rotateTitle", { name: credential.name })}
      onClose={onClose}
      size="small"
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t("common.cancel")}
          </button>
          <button type="submit" form={formId} className="button button--primary" disabled={busy || !complete}>
            {t("credentials.rotate")}
          </button>
        </>
      }
    >
      <form id={formId} className="stack" onSubmit={submit} noValidate autoComplete="off">
        <p>{t("credentials.rotateIntro", { mask: credential.mask })}</p>
        {!detail && <p className="muted">{t("credentials.kindLoading")}</p>}
        {params.map((param, index) => {
          const property = (detail?.schema.properties?.[param] ?? {}) as { title?: string };
          const messages = errors.filter((error) => valueParam(error.path) === param).map((error) => error.message);
          return (
            <div key={param} className="field">
              <label htmlFor={`${fieldId}-${param}`} className="field__label">
                {t("credentials.newValue", { field: property.title ?? param })}
              </label>
              <input
                id={`${fieldId}-${param}`}
                className="input"
                type="password"
                autoComplete="new-password"
                data-autofocus={index === 0 || undefined}
                value={secrets[param] ?? ""}
                aria-invalid={messages.length > 0 || undefined}
                onChange={(event) => setSecrets((current) => ({ ...current, [param]: event.target.value }))}
              />
              {messages.map((message) => (
                <p key={message} className="form-error">
                  {message}
                </p>
              ))}
            </div>
          );
        })}
        <p className="form-field__hint">{t("credentials.rotateHint")}</p>
        {unplaced.length > 0 && (
          <ul className="form-error">
            {unplaced.map((error) => (
              <li key={error.path + error.message}>{error.message}</li>
            ))}
          </ul>
        )}
      </form>
    </Modal>
  );
}
