import type { ErrorSchema, FieldProps } from "@rjsf/utils";
import { ChevronRight } from "lucide-react";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";

import type { CatalogComponent, ComponentRef } from "../../api/components";
import { groupByCategory } from "../../catalog/categories";
import { useCatalog, useComponentDetails } from "../../catalog/CatalogProvider";
import { useToast } from "../Toasts";
import { ownErrors } from "./errors";
import { SchemaForm } from "./SchemaForm";
import { COMPONENT_KIND, defaultParams } from "./schemaUi";

interface ComponentRefEditorProps {
  id: string;
  kind: string;
  value: ComponentRef | null | undefined;
  /** `edited` is false when a nested form only filled in defaults. */
  onChange: (value: ComponentRef | null, edited: boolean) => void;
  /** Whether "none" (the default the server picks) is allowed. */
  nullable: boolean;
  errorSchema?: ErrorSchema;
  disabled?: boolean;
  describedBy?: string;
}

/** Pick a component of `kind`, then edit its own params in a nested form. */
export function ComponentRefEditor({ id, kind, value, onChange, nullable, errorSchema, disabled, describedBy }: ComponentRefEditorProps) {
  const { t } = useTranslation();
  const toast = useToast();
  const { list, loadDetail } = useCatalog();
  const name = value?.component ?? "";
  const { details } = useComponentDetails(name ? [name] : []);
  const detail = details.get(name);
  const paramErrors = (errorSchema as Record<string, ErrorSchema> | undefined)?.params;
  const hasParamErrors = !!paramErrors && Object.keys(paramErrors).length > 0;
  const [expanded, setExpanded] = useState(hasParamErrors);
  useEffect(() => {
    if (hasParamErrors) setExpanded(true);
  }, [hasParamErrors]);

  const choices: CatalogComponent[] = list.status === "ready" ? list.components.filter((c) => c.kind === kind) : [];
  const componentErrors = ownErrors((errorSchema as Record<string, ErrorSchema> | undefined)?.component);

  const choose = async (next: string) => {
    if (!next) {
      onChange(null, true);
      return;
    }
    try {
      const chosen = await loadDetail(next);
      onChange({ component: next, params: defaultParams(chosen.schema) }, true);
    } catch (error) {
      toast.error(t("componentRef.loadFailed"), error);
    }
  };

  return (
    <div className="component-ref">
      <select
        id={id}
        className="input"
        value={name}
        disabled={disabled}
        aria-describedby={describedBy}
        aria-invalid={componentErrors.length > 0 || undefined}
        onChange={(event) => void choose(event.target.value)}
      >
        {(nullable || !name) && <option value="">{nullable ? t("componentRef.unset") : t("componentRef.choose")}</option>}
        {groupByCategory(choices).map((group) => (
          <optgroup key={group.category} label={t(`categories.${group.category}`, { defaultValue: group.category })}>
            {group.components.map((component) => (
              <option key={component.name} value={component.name}>
                {component.display_name}
              </option>
            ))}
          </optgroup>
        ))}
        {name && !choices.some((component) => component.name === name) && <option value={name}>{name}</option>}
      </select>
      {componentErrors.length > 0 && (
        <ul className="form-field__errors">
          {componentErrors.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
      {value && (
        <div className="component-ref__nested">
          <button
            type="button"
            className="disclosure"
            aria-expanded={expanded}
            aria-controls={`${id}__settings`}
            onClick={() => setExpanded((open) => !open)}
          >
            <ChevronRight aria-hidden="true" size={16} className="disclosure__chevron" />
            {t("componentRef.settings", { name: detail?.display_name ?? name })}
          </button>
          <div id={`${id}__settings`} hidden={!expanded}>
            {detail ? (
              <>
                {detail.description && <p className="form-field__hint">{detail.description}</p>}
                <SchemaForm
                  schema={detail.schema}
                  value={value.params ?? {}}
                  onChange={(params, edited) => onChange({ ...value, params }, edited)}
                  idPrefix={`${id}_params`}
                  extraErrors={paramErrors}
                  disabled={disabled}
                />
              </>
            ) : (
              <p className="form-field__hint">{t("componentRef.loading")}</p>
            )}
          </div>
        </div>
      )}
    </div>
  );
}

/** rjsf's field for a param holding one nested component (`x-component-kind`). */
export function ComponentRefField({ schema, formData, onChange, fieldPathId, errorSchema, disabled, readonly, name }: FieldProps) {
  const nullable = Array.isArray(schema.type) && schema.type.includes("null");
  const id = fieldPathId.$id;
  return (
    <div className="form-field">
      <label htmlFor={id} className="form-field__label">
        {schema.title ?? name}
      </label>
      <ComponentRefEditor
        id={id}
        kind={String(schema[COMPONENT_KIND])}
        value={formData as ComponentRef | null | undefined}
        nullable={nullable}
        errorSchema={errorSchema}
        disabled={disabled || readonly}
        describedBy={schema.description ? `${id}__description` : undefined}
        // The field's id tells the form that the user changed it (see SchemaForm's onChange).
        onChange={(next, edited) => onChange(next ?? (nullable ? null : undefined), fieldPathId.path, undefined, edited ? id : undefined)}
      />
      {schema.description && (
        <p id={`${id}__description`} className="form-field__hint">
          {schema.description}
        </p>
      )}
    </div>
  );
}
