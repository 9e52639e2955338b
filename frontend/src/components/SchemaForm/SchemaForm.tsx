import Form from "@rjsf/core";
import type { ErrorSchema, RegistryFieldsType, RegistryWidgetsType, RJSFSchema } from "@rjsf/utils";
import { useMemo } from "react";
import { useTranslation } from "react-i18next";

import { BUTTON_TEMPLATES } from "./buttons";
import { ComponentRefField } from "./ComponentRefEditor";
import { omitFields, prepareSchema, restoreFields, type Params } from "./schemaUi";
import { FieldErrorTemplate, FieldTemplate, ObjectFieldTemplate } from "./templates";
import { translateString, validator } from "./validator";
import { CheckboxWidget, CredentialWidget, InstalledModelWidget, SecretWidget } from "./widgets";

const FIELDS: RegistryFieldsType = { componentRef: ComponentRefField };
const WIDGETS: RegistryWidgetsType = {
  CheckboxWidget,
  credential: CredentialWidget,
  installedModel: InstalledModelWidget,
  secret: SecretWidget,
};
const TEMPLATES = { FieldTemplate, FieldErrorTemplate, ObjectFieldTemplate, ButtonTemplates: BUTTON_TEMPLATES };
const NONE: readonly string[] = [];

export interface SchemaFormProps {
  /** The component's params schema, as the catalog sends it. */
  schema: RJSFSchema;
  value: Params;
  /** `edited` is false when the form only filled in defaults (not a change the user made). */
  onChange: (value: Params, edited: boolean) => void;
  /** Makes field ids unique on the page. */
  idPrefix: string;
  /** Params edited elsewhere (the tree): not in the form, kept as they are. */
  hidden?: readonly string[];
  /** Errors the server found, on the fields they concern. */
  extraErrors?: ErrorSchema;
  disabled?: boolean;
}

/** A component's params, edited in a form rendered from its JSON Schema. */
export function SchemaForm({ schema, value, onChange, idPrefix, hidden = NONE, extraErrors, disabled }: SchemaFormProps) {
  const { t } = useTranslation();
  const prepared = useMemo(() => prepareSchema(schema, hidden, t("schemaForm.none")), [schema, hidden, t]);
  const formData = useMemo(() => omitFields(value, hidden), [value, hidden]);

  return (
    <Form
      tagName="div"
      className="schema-form"
      schema={prepared.schema}
      uiSchema={prepared.uiSchema}
      formData={formData}
      validator={validator}
      fields={FIELDS}
      widgets={WIDGETS}
      templates={TEMPLATES}
      idPrefix={idPrefix}
      liveValidate="onChange"
      showErrorList={false}
      noHtml5Validate
      extraErrors={extraErrors}
      translateString={translateString}
      disabled={disabled}
      experimental_defaultFormStateBehavior={{ emptyObjectFields: "skipEmptyDefaults" }}
      // rjsf names the field that changed; it names none when it fills in defaults by itself.
      onChange={(event, id) => onChange(restoreFields(event.formData as Params, value, hidden), id !== undefined)}
    />
  );
}
