/**
 * An href built from stored or retrieved data (a web page a search returned, a document's
 * source, a report's address): kept only when it is http(s), or a path on this site. Anything
 * else (`javascript:`, `data:`, `vbscript:`, however it is spelt or padded) gives `undefined`,
 * so the caller shows text instead of a link.
 */
export function safeHref(value: unknown): string | undefined {
  if (typeof value !== "string" || !value.trim()) return undefined;
  let url: URL;
  try {
    // The URL parser reads the scheme as a browser does: case, leading spaces and control characters, tabs inside.
    url = new URL(value, window.location.origin);
  } catch {
    return undefined;
  }
  // The value itself, as the browser will read it the same way.
  return url.protocol === "http:" || url.protocol === "https:" ? value : undefined;
}
