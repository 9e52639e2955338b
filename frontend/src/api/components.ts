import type { RJSFSchema } from "@rjsf/utils";

import { ApiError, api } from "./client";
import type { ErrorAction } from "./models";

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
  /** What representations call a nested component of this kind ("BM25", "Fusion"). */
  short_name: string;
  description: string;
  representation: string | null;
  /** `{param: {value: label}}`: how enumerated values read ("rrf" → "RRF"). */
  value_labels: Record<string, Record<string, string>>;
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
  /** What the user can do about it in the application (install the model it needs). */
  action?: ErrorAction;
}

/** The `{"errors": [{path, message, code}]}` of a refused request (HTTP 400), or null for any other failure. */
export function pathErrorsOf(error: unknown): PathError[] | null {
  if (!(error instanceof ApiError) || error.status !== 400) return null;
  return pathErrorsIn(error.payload);
}

/** The path errors of a 400 body, or null when it holds none. */
export function pathErrorsIn(payload: unknown): PathError[] | null {
  const list = (payload as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(list) || list.length === 0) return null;
  return list.filter((item): item is PathError => typeof item?.path === "string" && typeof item?.message === "string");
}

export interface TreeValidation {
  valid: boolean;
  /** The tree normalised (every default filled); null when it is invalid. */
  config: ComponentRef | null;
  errors: PathError[];
}

const COMPONENTS_URL = "/api/v1/components/";

export function fetchComponents(signal?: AbortSignal): Promise<CatalogComponent[]> {
  return api.get<CatalogComponent[]>(COMPONENTS_URL, { signal });
}

export function fetchComponent(name: string, signal?: AbortSignal): Promise<ComponentDetail> {
  return api.get<ComponentDetail>(`${COMPONENTS_URL}${encodeURIComponent(name)}/`, { signal });
}

/** Validate a tree: the server answers an invalid one with `valid: false` and its errors. */
export function validateTree(tree: ComponentRef, kind: string, signal?: AbortSignal): Promise<TreeValidation> {
  return api.post<TreeValidation>(`${COMPONENTS_URL}validate/`, { tree, kind }, { signal });
}
