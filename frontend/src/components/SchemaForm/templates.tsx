import type { FieldErrorProps, FieldTemplateProps, ObjectFieldTemplateProps } from "@rjsf/utils";
import { errorId, getUiOptions } from "@rjsf/utils";

export function FieldTemplate(props: FieldTemplateProps) {
  const { id, label, children, errors, description, hidden, required, displayLabel, rawErrors, uiSchema, schema } = props;
  if (hidden) return <div hidden>{children}</div>;
  const checkbox = getUiOptions(uiSchema).widget === "checkbox" || schema.type === "boolean";
  return (
    <div className={`form-field${rawErrors?.length ? " form-field--invalid" : ""}`}>
      {displayLabel && !checkbox && (
        <label htmlFor={id} className="form-field__label">
          {label}
          {required && <span aria-hidden="true"> *</span>}
        </label>
      )}
      {children}
      {displayLabel && !checkbox && description}
      {errors}
    </div>
  );
}

/** The field's errors; the form's and the server's often say the same thing, shown once. */
export function FieldErrorTemplate({ errors = [], fieldPathId }: FieldErrorProps) {
  const messages = [...new Set(errors.filter(Boolean))];
  if (messages.length === 0) return null;
  return (
    <ul id={errorId(fieldPathId)} className="form-field__errors">
      {messages.map((message, index) => (
        <li key={index}>{message}</li>
      ))}
    </ul>
  );
}

/** Params are listed plainly: the component's name and description are shown around the form. */
export function ObjectFieldTemplate({ properties, fieldPathId, title, description, registry, schema, uiSchema }: ObjectFieldTemplateProps) {
  const root = fieldPathId.path.length === 0;
  const Description = registry.templates.DescriptionFieldTemplate;
  return (
    <div className={root ? "form-fields" : "form-fieldset"} id={fieldPathId.$id}>
      {!root && title && <p className="form-fieldset__title">{title}</p>}
      {!root && description && (
        <Description id={`${fieldPathId.$id}__description`} description={description} schema={schema} uiSchema={uiSchema} registry={registry} />
      )}
      {properties.filter((property) => !property.hidden).map((property) => property.content)}
    </div>
  );
}
