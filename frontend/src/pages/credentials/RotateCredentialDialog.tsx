import { useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";

import type { ComponentDetail } from "../../api/components";
import { rotateCredential, type Credential } from "../../api/credentials";
import { useCatalog } from "../../catalog/CatalogProvider";
import { SubmitDialog, useSubmission } from "../../components/SubmitDialog";
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
  const submission = useSubmission(t("credentials.rotateFailed", { name: credential.name }));
  const { errors, busy } = submission;
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

  const submit = () =>
    submission.send(() => rotateCredential(credential.id, secrets), (saved) => {
      setSecrets({});
      onDone(saved);
    });

  return (
    <SubmitDialog
      title={t("credentials.rotateTitle", { name: credential.name })}
      submitLabel={t("credentials.rotate")}
      ready={complete}
      busy={busy}
      onSubmit={submit}
      onClose={onClose}
      unplacedErrors={unplaced}
      autoComplete="off"
      size="small"
    >
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
    </SubmitDialog>
  );
}
