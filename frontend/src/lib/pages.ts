import i18n from "../i18n";

/**
 * "Page 1" for a chunk on one page, "Pages 1–2" for one that runs across a page break (in the
 * language asked); null for a document without pages. `last` missing (a citation stored before
 * it was recorded) reads as one page.
 */
export function pageRangeLabel(first: number | null | undefined, last: number | null | undefined, language?: string): string | null {
  if (first === null || first === undefined) return null;
  const options = language ? { lng: language } : {};
  if (last !== null && last !== undefined && last !== first) return i18n.t("chunks.pages", { ...options, from: first, to: last });
  return i18n.t("chunks.page", { ...options, page: first });
}

/** The page label of a chunk's metadata (`page`, and `pages`: every page it covers). */
export function chunkPagesLabel(metadata: { page?: unknown; pages?: unknown }, language?: string): string | null {
  const pages = Array.isArray(metadata.pages) ? metadata.pages.filter((page): page is number => typeof page === "number") : [];
  const first = pages.length ? Math.min(...pages) : typeof metadata.page === "number" ? metadata.page : null;
  return pageRangeLabel(first, pages.length ? Math.max(...pages) : null, language);
}
