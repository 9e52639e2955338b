import { render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";

import type { RoundSummary } from "../../api/chat";
import i18n from "../../i18n";
import { RoundsChart } from "./RoundsChart";

const rounds = (count: number): RoundSummary[] =>
  Array.from({ length: count }, (_, index) => ({ round: index + 1, operations: [], added: [index], pool_size: index + 1, verdict: null, attempts: 1 }));

const labels = () => [...document.querySelectorAll(".rounds-chart__label")].map((label) => label.textContent).slice(2);

afterEach(async () => {
  await i18n.changeLanguage("en");
});

describe("RoundsChart", () => {
  it.each([
    ["es", ["Ronda 1", "Ronda 2", "Ronda 3"]],
    ["zh-Hant", ["第 1 輪", "第 2 輪", "第 3 輪"]],
    ["en", ["R1", "R2", "R3"]],
  ])("labels each round in %s", async (language, expected) => {
    await i18n.changeLanguage(language);
    render(<RoundsChart rounds={rounds(3)} />);
    expect(labels()).toEqual(expected);
    expect(screen.getByRole("img")).toBeInTheDocument();
  });

  it("numbers the rounds alone when a word would not fit under each bar", async () => {
    await i18n.changeLanguage("es");
    render(<RoundsChart rounds={rounds(10)} />);
    expect(labels()).toEqual(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]);
  });
});
