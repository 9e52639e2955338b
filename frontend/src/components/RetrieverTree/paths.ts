/** One step of a JSON path: a property name or an array index. */
export type Segment = string | number;

/** `a.b[1].c` → `["a", "b", 1, "c"]`; the empty path is the root. */
export function parsePath(path: string): Segment[] {
  const segments: Segment[] = [];
  for (const match of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    segments.push(match[2] !== undefined ? Number(match[2]) : match[1]!);
  }
  return segments;
}

/** The inverse of `parsePath`: the server's notation, `params.children[1].params.top_k`. */
export function formatPath(segments: readonly Segment[]): string {
  return segments
    .map((segment, index) =>
      typeof segment === "number" ? `[${segment}]` : index === 0 ? segment : `.${segment}`,
    )
    .join("");
}

export function startsWith(path: readonly Segment[], prefix: readonly Segment[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, index) => path[index] === segment);
}
