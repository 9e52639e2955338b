import { describe, expect, it } from "vitest";

import { resources } from ".";
import { detectInitialLanguage, matchLanguage } from "./languages";

describe("matchLanguage", () => {
  it.each([
    ["zh-TW", "zh-Hant"],
    ["zh-HK", "zh-Hant"],
    ["zh-Hant", "zh-Hant"],
    ["zh-Hant-TW", "zh-Hant"],
    ["es", "es"],
    ["es-MX", "es"],
    ["en-GB", "en"],
  ])("maps %s to %s", (tag, expected) => {
    expect(matchLanguage(tag)).toBe(expected);
  });

  it.each(["zh-CN", "zh-Hans", "zh", "fr-FR", "", null])("does not ship %s", (tag) => {
    expect(matchLanguage(tag)).toBeNull();
  });
});

describe("detectInitialLanguage", () => {
  it("prefers the stored choice, then the browser language, then English", () => {
    expect(detectInitialLanguage("es", "zh-TW")).toBe("es");
    expect(detectInitialLanguage(null, "zh-TW")).toBe("zh-Hant");
    expect(detectInitialLanguage("klingon", "fr-FR")).toBe("en");
  });
});

/** Flatten to dotted keys, dropping plural suffixes (Chinese has only `_other`). */
function textsOf(tree: object): string[] {
  return Object.values(tree).flatMap((value) =>
    typeof value === "object" && value !== null ? textsOf(value) : [String(value)],
  );
}

function keysOf(tree: object, prefix = ""): string[] {
  return Object.entries(tree).flatMap(([key, value]) =>
    typeof value === "object" && value !== null
      ? keysOf(value, `${prefix}${key}.`)
      : [`${prefix}${key.replace(/_(zero|one|two|few|many|other)$/, "")}`],
  );
}

describe("locale files", () => {
  it("translate every English key", () => {
    const english = new Set(keysOf(resources.en.translation));
    for (const language of ["es", "zh-Hant"] as const) {
      expect(new Set(keysOf(resources[language].translation))).toEqual(english);
    }
  });

  it("say 'token' in Chinese words, outside placeholders", () => {
    // A model's tokens are 詞元 and an API token 權杖; "首個 token" read as English in the chat.
    const leftInEnglish = textsOf(resources["zh-Hant"].translation)
      .map((text) => text.replace(/\{\{[^}]*\}\}/g, ""))
      .filter((text) => /token/i.test(text));
    expect(leftInEnglish).toEqual([]);
  });
});
