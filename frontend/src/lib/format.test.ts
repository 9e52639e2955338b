import { describe, expect, it } from "vitest";

import { formatBytes } from "./format";

describe("formatBytes", () => {
  it.each([
    ["en", 827, "827 bytes"],
    ["en", 1, "1 byte"],
    ["en", 12_345, "12.3 kB"],
    ["en", 2_500_000, "2.5 MB"],
    ["es", 827, "827 bytes"],
    ["es", 1, "1 byte"],
    ["es", 12_345, "12,3 kB"],
    ["zh-Hant", 827, "827 位元組"],
    ["zh-Hant", 12_345, "12.3 KB"],
  ])("says %s %d as %s: the language's number and unit", (language, bytes, expected) => {
    expect(formatBytes(bytes, language)).toBe(expected);
  });
});
