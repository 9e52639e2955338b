import { api } from "./client";

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
  min_children: number | null;
  max_children: number | null;
}

export const COMPONENTS_URL = "/api/v1/components/";

export function fetchComponents(signal?: AbortSignal): Promise<CatalogComponent[]> {
  return api.get<CatalogComponent[]>(COMPONENTS_URL, { signal });
}
