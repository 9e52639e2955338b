import { render } from "@testing-library/react";
import { FileText, Scissors, Shuffle } from "lucide-react";
import { describe, expect, it } from "vitest";

import { ComponentIcon, FallbackIcon, iconFor, kebabToPascal } from "./ComponentIcon";

describe("iconFor", () => {
  it("maps a kebab-case lucide name to that icon", () => {
    expect(iconFor("shuffle")).toBe(Shuffle);
    expect(iconFor("file-text")).toBe(FileText);
    expect(iconFor("scissors")).toBe(Scissors);
    expect(iconFor("shuffle")).not.toBe(FallbackIcon);
  });

  it("falls back to the generic icon for unknown or missing names", () => {
    expect(iconFor("definitely-not-an-icon")).toBe(FallbackIcon);
    expect(iconFor("constructor")).toBe(FallbackIcon);
    expect(iconFor("")).toBe(FallbackIcon);
    expect(iconFor(null)).toBe(FallbackIcon);
  });

  it("converts kebab-case to the PascalCase keys of lucide's map", () => {
    expect(kebabToPascal("file-text")).toBe("FileText");
    expect(kebabToPascal("arrow-down-a-z")).toBe("ArrowDownAZ");
    expect(kebabToPascal("axis-3d")).toBe("Axis3d");
  });
});

describe("ComponentIcon", () => {
  it("renders the named icon as a decorative svg", () => {
    const { container } = render(<ComponentIcon name="shuffle" />);
    const svg = container.querySelector("svg");
    expect(svg).toHaveClass("lucide-shuffle");
    expect(svg).toHaveAttribute("aria-hidden", "true");
  });

  it("renders the fallback icon for an unknown name", () => {
    const { container: unknown } = render(<ComponentIcon name="no-such-icon" />);
    const { container: fallback } = render(<FallbackIcon />);
    expect(unknown.querySelector("svg")?.innerHTML).toBe(fallback.querySelector("svg")?.innerHTML);
  });
});
