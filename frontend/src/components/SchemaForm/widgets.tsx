import type { WidgetProps } from "@rjsf/utils";
import { ariaDescribedByIds, descriptionId } from "@rjsf/utils";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";

import { fetchCredentials, type Credential } from "../../api/credentials";
import { fetchModels, type InstalledModel, type ModelKind } from "../../api/models";

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

/**
 * Holds the NAME of a model: any text (a local directory or a hub id also work), with the
 * installed models of the field's kind offered as suggestions and listed under it.
 */
export function InstalledModelWidget({ id, value, onChange, disabled, readonly, options }: WidgetProps) {
  const { t } = useTranslation();
  const kind = options.modelKind as ModelKind;
  const [models, setModels] = useState<InstalledModel[] | null>(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    fetchModels(controller.signal, kind).then(setModels, () => {
      if (!controller.signal.aborted) setFailed(true);
    });
    return () => controller.abort();
  }, [kind]);

  const current = typeof value === "string" ? value : "";
  const listId = `${id}-installed`;
  const names = models?.map((model) => model.name) ?? [];
  const missing = current !== "" && models !== null && !names.includes(current);

  return (
    <>
      <input
        id={id}
        className="input"
        list={listId}
        value={current}
        spellCheck={false}
        autoComplete="off"
        disabled={disabled || readonly}
        aria-describedby={ariaDescribedByIds(id)}
        onChange={(event) => onChange(event.target.value || options.emptyValue)}
      />
      <datalist id={listId}>
        {names.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      {models === null && !failed && <p className="form-field__hint">{t("installedModels.loading")}</p>}
      {failed && <p className="form-field__hint">{t("installedModels.failed")}</p>}
      {models !== null && names.length > 0 && (
        <p className="form-field__hint" data-installed-models>
          {t("installedModels.available", { names: names.join(", ") })}
        </p>
      )}
      {models !== null && names.length === 0 && (
        <p className="form-field__hint">
          {t("installedModels.none")}{" "}
          <a href="/models" target="_blank" rel="noopener">
            {t("installedModels.install")}
          </a>
        </p>
      )}
      {missing && names.length > 0 && <p className="form-field__hint">{t("installedModels.notInstalled", { name: current })}</p>}
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
