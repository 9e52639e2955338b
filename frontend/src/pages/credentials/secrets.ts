import type { RJSFSchema } from "@rjsf/utils";

/** The secret params of a credential kind's schema (write-only, shown as password inputs), in schema order. */
export function secretParams(schema: RJSFSchema | undefined): string[] {
  const properties = (schema?.properties ?? {}) as Record<string, RJSFSchema>;
  return Object.entries(properties)
    .filter(([, property]) => property.writeOnly === true || property.format === "password")
    .map(([name]) => name);
}

/** Where a server error belongs: `values.api_key` → `api_key`; null for any other path. */
export function valueParam(path: string): string | null {
  return path.startsWith("values.") ? path.slice("values.".length).split(/[.[]/)[0] ?? null : null;
}
