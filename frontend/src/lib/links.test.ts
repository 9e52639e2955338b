import { describe, expect, it } from "vitest";

import { safeHref } from "./links";

describe("safeHref", () => {
  it("keeps http(s) links and paths on this site", () => {
    expect(safeHref("https://example.org/a?b=1#c")).toBe("https://example.org/a?b=1#c");
    expect(safeHref("http://example.org")).toBe("http://example.org");
    expect(safeHref("/api/v1/evaluations/3/report/report.md")).toBe("/api/v1/evaluations/3/report/report.md");
  });

  it.each([
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "  javascript:alert(1)",
    "\u0001javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "blob:https://example.org/x",
  ])("refuses %j", (value) => {
    expect(safeHref(value)).toBeUndefined();
  });

  it("refuses what is not a string or is empty", () => {
    for (const value of [undefined, null, 42, {}, "", "   "]) expect(safeHref(value)).toBeUndefined();
  });
});
