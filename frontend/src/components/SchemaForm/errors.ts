import type { ErrorSchema } from "@rjsf/utils";

/** A path inside a component's params: property names and array indexes. */
export type FieldPath = (string | number)[];

export interface FieldError {
  path: FieldPath;
  message: string;
}

/** rjsf's error tree (`{top_k: {__errors: [...]}}`) for messages at params paths. */
export function toErrorSchema(errors: readonly FieldError[]): ErrorSchema {
  const root: Record<string, unknown> = {};
  for (const { path, message } of errors) {
    let node = root;
    for (const segment of path) {
      const key = String(segment);
      node[key] ??= {};
      node = node[key] as Record<string, unknown>;
    }
    const list = (node.__errors ??= []) as string[];
    if (!list.includes(message)) list.push(message);
  }
  return root as ErrorSchema;
}

/** The messages at the top of an error tree (not those of its fields). */
export function ownErrors(schema: ErrorSchema | undefined): string[] {
  return ((schema as { __errors?: string[] } | undefined)?.__errors ?? []).slice();
}
