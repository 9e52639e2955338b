import { describe, expect, it } from "vitest";

import { chunkPagesLabel, pageRangeLabel } from "./pages";

describe("pageRangeLabel", () => {
  it.each([
    ["en", 1, 1, "Page 1"],
    ["en", 1, 2, "Pages 1–2"],
    ["es", 1, 2, "Páginas 1–2"],
    ["es", 3, 3, "Página 3"],
    ["zh-Hant", 1, 2, "第 1–2 頁"],
    ["zh-Hant", 4, null, "第 4 頁"],
  ])("says in %s pages %s to %s as %s", (language, first, last, expected) => {
    expect(pageRangeLabel(first, last, language)).toBe(expected);
  });

  it("says nothing for a document without pages", () => {
    expect(pageRangeLabel(null, null, "en")).toBeNull();
  });
});

describe("chunkPagesLabel", () => {
  it("reads the first and last of every page a chunk covers", () => {
    expect(chunkPagesLabel({ page: 2, pages: [2, 3, 4] }, "en")).toBe("Pages 2–4");
    expect(chunkPagesLabel({ page: 7 }, "en")).toBe("Page 7");
    expect(chunkPagesLabel({}, "en")).toBeNull();
  });
});
