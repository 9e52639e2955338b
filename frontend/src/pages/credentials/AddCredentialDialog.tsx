import { useEffect, useId, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";

import type { ComponentDetail } from "../../api/components";
import { createCredential, type Credential } from "../../api/credentials";
import { useCatalog } from "../../catalog/CatalogProvider";
import { SchemaForm } from "../../components/SchemaForm/SchemaForm";
import { toErrorSchema } from "../../components/SchemaForm/errors";
import type { Params } from "../../components/SchemaForm/schemaUi";
import { SubmitDialog, useSubmission } from "../../components/SubmitDialog";
import { useToast } from "../../components/Toasts";
import { valueParam } from "./secrets";

const OPENAI_KEY = "OpenAIAPIKey";

interface AddCredentialDialogProps {
  onDone: (credential: Credential) => void;
  onClose: () => void;
}

/**
 * Store a credential: its kind, the name pipelines will know it by, and the kind's values (the
 * secret ones in password inputs). The values leave the browser once; the dialog forgets them.
 */
export function AddCredentialDialog({ onDone, onClose }: AddCredentialDialogProps) {
  const { t } = useTranslation();
  const toast = useToast();
  const { list, loadDetail } = useCatalog();
  const kinds = useMemo(
    () => (list.status === "ready" ? list.components.filter((component) => component.kind === "credential") : []),
    [list],
  );
  const [kind, setKind] = useState("");
  const [detail, setDetail] = useState<ComponentDetail | null>(null);
  const [name, setName] = useState("");
  const [values, setValues] = useState<Params>({});
  const submission = useSubmission(t("credentials.addFailed"));
  const { errors, busy } = submission;
  const ids = { kind: useId(), name: useId(), form: useId() };
  // An OpenAI-compatible key is what most users come to add: offered first when the server has it.
  const chosen = kind || (kinds.find((component) => component.name === OPENAI_KEY) ?? kinds[0])?.name || "";

  useEffect(() => {
    if (!chosen) return;
    let current = true;
    setDetail(null);
    loadDetail(chosen).then(
      (loaded) => current && setDetail(loaded),
      (error: unknown) => current && toast.error(t("credentials.kindFailed"), error),
    );
    return () => {
      current = false;
    };
  }, [chosen, loadDetail, toast, t]);

  const messagesAt = (path: string) => errors.filter((error) => error.path === path).map((error) => error.message);
  const valueErrors = useMemo(
    () => toErrorSchema(errors.flatMap((error) => {
      const param = valueParam(error.path);
      return param ? [{ path: [param], message: error.message }] : [];
    })),
    [errors],
  );
  const unplaced = errors.filter((error) => error.path !== "name" && error.path !== "kind" && valueParam(error.path) === null);

  const submit = () =>
    submission.send(() => createCredential({ name: name.trim(), kind: chosen, values }), (saved) => {
      setValues({});
      onDone(saved);
    });

  return (
    <SubmitDialog
      title={t("credentials.addTitle")}
      submitLabel={t("credentials.save")}
      ready={name.trim() !== "" && detail !== null}
      busy={busy}
      onSubmit={submit}
      onClose={onClose}
      unplacedErrors={unplaced}
      autoComplete="off"
    >
      <div className="field">
        <label htmlFor={ids.kind} className="field__label">
          {t("credentials.kind")}
        </label>
        <select
          id={ids.kind}
          className="input"
          value={chosen}
          onChange={(event) => {
            setKind(event.target.value);
            setValues({});
            submission.setErrors([]);
          }}
        >
          {kinds.map((component) => (
            <option key={component.name} value={component.name}>
              {component.display_name}
            </option>
          ))}
        </select>
        {detail && <p className="form-field__hint">{detail.description}</p>}
        {messagesAt("kind").map((message) => (
          <p key={message} className="form-error">
            {message}
          </p>
        ))}
      </div>
      <div className="field">
        <label htmlFor={ids.name} className="field__label">
          {t("credentials.name")}
        </label>
        <input
          id={ids.name}
          className="input"
          value={name}
          maxLength={100}
          data-autofocus
          placeholder="openai-main"
          aria-invalid={messagesAt("name").length > 0 || undefined}
          onChange={(event) => setName(event.target.value)}
        />
        <p className="form-field__hint">{t("credentials.nameHint")}</p>
        {messagesAt("name").map((message) => (
          <p key={message} className="form-error">
            {message}
          </p>
        ))}
      </div>
      {detail ? (
        <SchemaForm
          key={detail.name}
          schema={detail.schema}
          value={values}
          onChange={(next) => setValues(next)}
          idPrefix={`${ids.form}-values`}
          extraErrors={valueErrors}
          disabled={busy}
        />
      ) : (
        <p className="muted">{t("credentials.kindLoading")}</p>
      )}
      <p className="form-field__hint">{t("credentials.neverShown")}</p>
    </SubmitDialog>
  );
}
