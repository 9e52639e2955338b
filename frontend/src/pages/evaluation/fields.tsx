import type { ReactNode } from "react";

import type { PathError } from "../../api/components";
import { ApiError } from "../../api/client";

/** The `{"errors": [{path, message, code}]}` of a refused request, or null for any other failure. */
export function pathErrorsOf(error: unknown): PathError[] | null {
  if (!(error instanceof ApiError) || error.status !== 400) return null;
  return pathErrorsIn(error.payload);
}

export function pathErrorsIn(payload: unknown): PathError[] | null {
  const list = (payload as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(list) || list.length === 0) return null;
  return list.filter((item): item is PathError => typeof item?.path === "string" && typeof item?.message === "string");
}

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
