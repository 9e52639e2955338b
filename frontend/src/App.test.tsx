import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { App } from "./App";
import { jsonResponse, mockFetch } from "./test/fetch";

describe("App", () => {
  it("shows the product name, the language switcher and the catalog", async () => {
    mockFetch(() => jsonResponse([]));
    render(<App />);

    expect(screen.getByText("Trellis")).toBeInTheDocument();
    expect(screen.getByRole("combobox", { name: "Language" })).toBeInTheDocument();
    expect(screen.getByRole("heading", { level: 1, name: "Component catalog" })).toBeInTheDocument();
    expect(await screen.findByText("No components are registered yet.")).toBeInTheDocument();
    expect(document.title).toBe("Trellis · Component catalog");
  });
});
