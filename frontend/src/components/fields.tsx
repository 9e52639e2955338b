import type { ReactNode } from "react";

import type { PathError } from "../api/components";

export function FieldErrors({ messages }: { messages: readonly string[] }) {
  return (
    <>
      {messages.map((message) => (
        <p key={message} className="form-error">
          {message}
        </p>
      ))}
    </>
  );
}

/** A labelled input with its hint and the server's errors for it. */
export function Field(props: {
  id: string;
  label: string;
  hint?: string;
  errors: readonly string[];
  children: (describedBy: string | undefined, invalid: boolean) => ReactNode;
}) {
  const hintId = props.hint ? `${props.id}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={props.id} className="field__label">
        {props.label}
      </label>
      {props.children(hintId, props.errors.length > 0)}
      {props.hint && (
        <p id={hintId} className="form-field__hint">
          {props.hint}
        </p>
      )}
      <FieldErrors messages={props.errors} />
    </div>
  );
}

/** A whole-number input with its label, hint and errors, growing to share a form row. */
export function NumberField(props: {
  id: string;
  label: string;
  hint?: string;
  errors?: readonly string[];
  value: string;
  min?: number;
  max?: number;
  onChange: (value: string) => void;
}) {
  return (
    <div className="field--grow">
      <Field id={props.id} label={props.label} hint={props.hint} errors={props.errors ?? []}>
        {(describedBy, invalid) => (
          <input id={props.id} className="input" type="number" min={props.min} max={props.max} step={1} inputMode="numeric"
            value={props.value} aria-describedby={describedBy} aria-invalid={invalid || undefined}
            onChange={(event) => props.onChange(event.target.value)} />
        )}
      </Field>
    </div>
  );
}

/** Errors no field shows, with their path. */
export function UnplacedErrors({ errors }: { errors: readonly PathError[] }) {
  if (errors.length === 0) return null;
  return (
    <ul className="form-error" role="alert">
      {errors.map((error) => (
        <li key={error.path + error.message}>{error.path ? `${error.path}: ${error.message}` : error.message}</li>
      ))}
    </ul>
  );
}
