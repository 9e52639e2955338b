import { act, fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import i18n, { LANGUAGE_STORAGE_KEY } from "../i18n";
import { LanguageSwitcher } from "./LanguageSwitcher";

describe("LanguageSwitcher", () => {
  it("offers every shipped language by its own name", () => {
    render(<LanguageSwitcher />);
    const options = screen.getAllByRole("option").map((option) => option.textContent);
    expect(options).toEqual(["English", "Español", "繁體中文"]);
    expect(screen.getByRole("combobox", { name: "Language" })).toHaveValue("en");
  });

  it("switches the language and remembers the choice", async () => {
    render(<LanguageSwitcher />);

    fireEvent.change(screen.getByRole("combobox", { name: "Language" }), {
      target: { value: "zh-Hant" },
    });

    expect(await screen.findByRole("combobox", { name: "語言" })).toHaveValue("zh-Hant");
    expect(i18n.language).toBe("zh-Hant");
    expect(window.localStorage.getItem(LANGUAGE_STORAGE_KEY)).toBe("zh-Hant");
    expect(document.documentElement.lang).toBe("zh-Hant");
  });

  it("follows a language change made elsewhere", async () => {
    render(<LanguageSwitcher />);
    await act(() => i18n.changeLanguage("es"));
    expect(screen.getByRole("combobox", { name: "Idioma" })).toHaveValue("es");
  });
});
