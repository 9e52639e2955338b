import type { RJSFSchema } from "@rjsf/utils";

import { ApiError, api } from "./client";

/** `{"component": name, "params": {...}}`: how every nested component is referenced. */
export interface ComponentRef {
  component: string;
  params?: Record<string, unknown>;
}

/** One entry of `GET /api/v1/components/`; the text fields arrive in the requested language. */
export interface CatalogComponent {
  name: string;
  kind: string;
  category: string;
  icon: string;
  display_name: string;
  description: string;
  representation: string | null;
  composite: boolean;
  child_kind: string | null;
  min_children: number | null;
  max_children: number | null;
  /** Params holding nested components, and the kind each holds. */
  slots: Record<string, string>;
  available: boolean;
}

/** `GET /api/v1/components/<name>/`: the entry plus the JSON Schema of its params. */
export interface ComponentDetail extends CatalogComponent {
  schema: RJSFSchema;
}

/** A problem at a JSON path, as every Trellis API reports it. */
export interface PathError {
  path: string;
  message: string;
  code: string;
}

export interface TreeValidation {
  valid: boolean;
  config?: ComponentRef;
  errors: PathError[];
}

const COMPONENTS_URL = "/api/v1/components/";

export function fetchComponents(signal?: AbortSignal): Promise<CatalogComponent[]> {
  return api.get<CatalogComponent[]>(COMPONENTS_URL, { signal });
}

export function fetchComponent(name: string, signal?: AbortSignal): Promise<ComponentDetail> {
  return api.get<ComponentDetail>(`${COMPONENTS_URL}${encodeURIComponent(name)}/`, { signal });
}

/** Validate a tree; an invalid one (HTTP 400) resolves too, with its errors. */
export async function validateTree(
  tree: ComponentRef,
  kind: string,
  signal?: AbortSignal,
): Promise<TreeValidation> {
  try {
    return await api.post<TreeValidation>(`${COMPONENTS_URL}validate/`, { tree, kind }, { signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 400 && isValidation(error.payload)) return error.payload;
    throw error;
  }
}

function isValidation(payload: unknown): payload is TreeValidation {
  return typeof payload === "object" && payload !== null && Array.isArray((payload as TreeValidation).errors);
}
