import type { RJSFSchema, UiSchema } from "@rjsf/utils";

import { valueKey } from "../../catalog/representation";

/** JSON Schema keys the backend adds to a parameter that holds components or credentials. */
export const COMPONENT_KIND = "x-component-kind";
export const COMPONENT_MULTIPLE = "x-component-multiple";
const CREDENTIAL = "x-credential";
/** The kind of installed model a string parameter names (`cross-encoder`, `embedding`). */
export const MODEL_KIND = "x-model-kind";
/** `{value: label}` of an enumerated parameter, in the catalog's language. */
const ENUM_LABELS = "x-enum-labels";

export type Params = Record<string, unknown>;

/** Long texts (prompts) get a text area. */
const TEXTAREA_MIN_LENGTH = 1000;

function isNullSchema(schema: unknown): boolean {
  return typeof schema === "object" && schema !== null && (schema as RJSFSchema).type === "null";
}

/**
 * `anyOf: [S, {"type": "null"}]` (pydantic's `Optional`) as one schema whose type admits null:
 * rjsf then shows S's widget instead of an option picker, and ajv still accepts null.
 */
function flattenNullable(schema: RJSFSchema): { schema: RJSFSchema; nullable: boolean } {
  const options = schema.anyOf;
  if (!Array.isArray(options) || options.length !== 2 || !options.some(isNullSchema)) {
    return { schema, nullable: false };
  }
  const inner = options.find((option) => !isNullSchema(option)) as RJSFSchema;
  const { anyOf: _, ...outer } = schema;
  const flat: RJSFSchema = { ...inner, ...outer };
  if (typeof inner.type === "string") flat.type = [inner.type, "null"];
  if (Array.isArray(inner.enum)) flat.enum = [...inner.enum, null];
  return { schema: flat, nullable: true };
}

function isComponentField(schema: RJSFSchema | undefined): boolean {
  return typeof schema?.[COMPONENT_KIND] === "string";
}

function isString(schema: RJSFSchema | undefined): boolean {
  const type = schema?.type;
  return type === "string" || (Array.isArray(type) && type[0] === "string");
}

function hasLineBreak(value: unknown): boolean {
  return typeof value === "string" ? value.includes("\n") : Array.isArray(value) && value.some(hasLineBreak);
}

function isSecret(schema: RJSFSchema): boolean {
  return schema.writeOnly === true || schema.format === "password";
}

function propertyUi(schema: RJSFSchema, nullable: boolean, nullLabel: string): UiSchema {
  if (isComponentField(schema)) return { "ui:field": "componentRef" };
  if (schema[CREDENTIAL] === true) return { "ui:widget": "credential", "ui:emptyValue": null };
  if (typeof schema[MODEL_KIND] === "string") return { "ui:widget": "installedModel", "ui:options": { modelKind: schema[MODEL_KIND] } };
  const ui: UiSchema = {};
  if (isSecret(schema)) ui["ui:widget"] = "secret";
  else if (isString(schema) && ((schema.maxLength ?? 0) >= TEXTAREA_MIN_LENGTH || hasLineBreak(schema.default))) {
    ui["ui:widget"] = "textarea";
  } else if (schema.type === "array" && isString(schema.items as RJSFSchema) && hasLineBreak(schema.default)) {
    // A text input would drop the line breaks of values such as "\n\n" (a paragraph separator).
    ui.items = { "ui:widget": "textarea", "ui:options": { rows: 2 } };
  }
  const labels = schema[ENUM_LABELS] as Record<string, string> | undefined;
  if (nullable) ui["ui:emptyValue"] = null;
  if (Array.isArray(schema.enum) && (nullable || labels)) {
    ui["ui:enumNames"] = schema.enum.map((value) => (value === null ? nullLabel : (labels?.[valueKey(value)] ?? String(value))));
  }
  return ui;
}

export interface PreparedSchema {
  schema: RJSFSchema;
  uiSchema: UiSchema;
}

/**
 * The form's schema and uiSchema for a component's params: nullable fields flattened, nested
 * component fields, credential pickers and secrets given their widgets, and `hidden` fields
 * (edited elsewhere, e.g. in the tree) left out.
 */
export function prepareSchema(schema: RJSFSchema, hidden: readonly string[], nullLabel: string): PreparedSchema {
  const properties: Record<string, RJSFSchema> = {};
  const uiSchema: UiSchema = { "ui:submitButtonOptions": { norender: true } };
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    if (hidden.includes(name) || typeof raw !== "object") continue;
    const { schema: property, nullable } = flattenNullable(raw as RJSFSchema);
    properties[name] = property;
    const ui = propertyUi(property, nullable, nullLabel);
    if (Object.keys(ui).length) uiSchema[name] = ui;
  }
  const { $schema: _, ...rest } = schema;
  return {
    schema: {
      ...rest,
      properties,
      required: (schema.required ?? []).filter((name) => !hidden.includes(name)),
    },
    uiSchema,
  };
}

/** The params without the fields edited elsewhere. */
export function omitFields(params: Params, hidden: readonly string[]): Params {
  return Object.fromEntries(Object.entries(params).filter(([name]) => !hidden.includes(name)));
}

/** `params`' hidden fields, taken back into what the form produced. */
export function restoreFields(formData: Params, params: Params, hidden: readonly string[]): Params {
  const kept = Object.fromEntries(Object.entries(params).filter(([name]) => hidden.includes(name)));
  return { ...formData, ...kept };
}

/** A component's params as its schema's defaults fill them (what a fresh node starts with). */
export function defaultParams(schema: RJSFSchema): Params {
  return Object.fromEntries(
    Object.entries(schema.properties ?? {})
      .filter(([, property]) => typeof property === "object" && "default" in property)
      .map(([name, property]) => [name, structuredClone((property as RJSFSchema).default)]),
  );
}
