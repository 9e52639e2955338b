import { fireEvent, screen } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";

import { mockApi } from "../test/api";
import { catalogRoutes } from "../test/catalog";
import { renderWithProviders } from "../test/render";
import { InstallModelLink } from "./InstallModelLink";

beforeEach(() => {
  window.history.replaceState(null, "", "/pipelines");
  mockApi({ ...catalogRoutes() });
});

describe("InstallModelLink", () => {
  it("links an install_model action to the Models page's install form, filled in", () => {
    renderWithProviders(
      <InstallModelLink action={{ code: "install_model", params: { kind: "cross-encoder", model: "cross-encoder/ms-marco-MiniLM-L-6-v2" } }} />,
    );
    const link = screen.getByRole("link", { name: "Install cross-encoder/ms-marco-MiniLM-L-6-v2 on the Models page" });
    expect(link).toHaveAttribute("href", "/models?install=cross-encoder%3Across-encoder%2Fms-marco-MiniLM-L-6-v2");
    fireEvent.click(link);
    expect(window.location.pathname + window.location.search).toBe("/models?install=cross-encoder%3Across-encoder%2Fms-marco-MiniLM-L-6-v2");
  });

  it("shows nothing for no action, another action, or a kind that cannot be installed", () => {
    const { container } = renderWithProviders(
      <>
        <InstallModelLink action={null} />
        <InstallModelLink action={{ code: "retry", params: {} }} />
        <InstallModelLink action={{ code: "install_model", params: { kind: "speech", model: "acme/x" } }} />
      </>,
    );
    expect(container.querySelector("a")).toBeNull();
  });
});
