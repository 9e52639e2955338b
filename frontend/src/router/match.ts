export type RouteParams = Record<string, string>;

function segments(path: string): string[] {
  return path.split("/").filter(Boolean);
}

/** Match `pathname` against a pattern such as `/pipelines/:id`; a trailing slash is optional. */
export function matchPath(pattern: string, pathname: string): RouteParams | null {
  const expected = segments(pattern);
  const actual = segments(pathname);
  if (expected.length !== actual.length) return null;
  const params: RouteParams = {};
  for (const [index, part] of expected.entries()) {
    const value = actual[index]!;
    if (part.startsWith(":")) params[part.slice(1)] = decodeURIComponent(value);
    else if (part !== value) return null;
  }
  return params;
}
