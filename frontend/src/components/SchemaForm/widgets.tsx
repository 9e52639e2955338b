import type { WidgetProps } from "@rjsf/utils";
import { ariaDescribedByIds, descriptionId } from "@rjsf/utils";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";

import { fetchCredentials, type Credential } from "../../api/credentials";

/** Holds the NAME of a stored credential: a picker of the user's credentials, never a secret. */
export function CredentialWidget({ id, value, onChange, disabled, readonly, options }: WidgetProps) {
  const { t } = useTranslation();
  const [credentials, setCredentials] = useState<Credential[] | null>(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    fetchCredentials(controller.signal).then(setCredentials, () => {
      if (!controller.signal.aborted) setFailed(true);
    });
    return () => controller.abort();
  }, []);

  const current = typeof value === "string" ? value : "";
  const missing = current && credentials && !credentials.some((credential) => credential.name === current);

  return (
    <>
      <select
        id={id}
        className="input"
        value={current}
        disabled={disabled || readonly}
        aria-describedby={ariaDescribedByIds(id)}
        onChange={(event) => onChange(event.target.value || (options.emptyValue ?? null))}
      >
        <option value="">{t("credentials.none")}</option>
        {credentials?.map((credential) => (
          <option key={credential.id} value={credential.name}>
            {t("credentials.option", { name: credential.name, kind: credential.kind, mask: credential.mask })}
          </option>
        ))}
        {missing && <option value={current}>{t("credentials.missing", { name: current })}</option>}
      </select>
      {credentials === null && !failed && <p className="form-field__hint">{t("credentials.loading")}</p>}
      {failed && <p className="form-field__hint">{t("credentials.failed")}</p>}
      {credentials?.length === 0 && <p className="form-field__hint">{t("credentials.empty")}</p>}
    </>
  );
}

/** A secret is typed, sent and forgotten: the field never shows a stored value. */
export function SecretWidget({ id, value, onChange, disabled, readonly, options }: WidgetProps) {
  return (
    <input
      id={id}
      className="input"
      type="password"
      autoComplete="new-password"
      value={typeof value === "string" ? value : ""}
      disabled={disabled || readonly}
      aria-describedby={ariaDescribedByIds(id)}
      onChange={(event) => onChange(event.target.value || options.emptyValue)}
    />
  );
}

/** A checkbox with its label beside it and its description under it. */
export function CheckboxWidget({ id, value, onChange, label, disabled, readonly, schema }: WidgetProps) {
  return (
    <div className="checkbox-field">
      <label className="checkbox-field__label">
        <input
          id={id}
          type="checkbox"
          checked={value === true}
          disabled={disabled || readonly}
          aria-describedby={ariaDescribedByIds(id)}
          onChange={(event) => onChange(event.target.checked)}
        />
        <span>{label}</span>
      </label>
      {schema.description && (
        <p id={descriptionId(id)} className="form-field__hint">
          {schema.description}
        </p>
      )}
    </div>
  );
}
