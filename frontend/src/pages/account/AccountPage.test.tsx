import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { ApiToken } from "../../api/tokens";
import { AuthProvider } from "../../auth/AuthProvider";
import i18n from "../../i18n";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { AccountPage } from "./AccountPage";

const SIGNED_IN = { authenticated: true, id: 1, username: "ada", is_staff: false };
const OLD: ApiToken = {
  id: 1, name: "laptop", prefix: "trl_Ab12Cd34", active: true, created_at: "2026-11-30T10:00:00Z",
  last_used_at: null, revoked_at: null,
};
const SECRET = "trl_NewSecretNewSecretNewSecretNewSecret0123";

function page() {
  return renderWithProviders(
    <AuthProvider>
      <AccountPage />
    </AuthProvider>,
  );
}

function row(name: string): HTMLElement {
  const found = document.querySelector<HTMLElement>(`li[data-token-name="${name}"]`);
  if (!found) throw new Error(`no token row for ${name}`);
  return found;
}

beforeEach(() => {
  window.history.replaceState(null, "", "/account");
});

afterEach(async () => {
  vi.unstubAllGlobals();
  await i18n.changeLanguage("en");
});

describe("AccountPage", () => {
  it("creates a token, shows its secret once with a copy button, and lists it by its prefix", async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    const created: unknown[] = [];
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/auth/session/": SIGNED_IN,
      "GET /api/v1/api-tokens/": [OLD],
      "POST /api/v1/api-tokens/": (body) => {
        created.push(body);
        return jsonResponse({ ...OLD, id: 2, name: "Open WebUI", prefix: SECRET.slice(0, 12), token: SECRET }, 201);
      },
    });
    page();
    expect(await screen.findByRole("heading", { level: 1, name: "Account" })).toBeInTheDocument();
    expect(await screen.findByText("Signed in as ada")).toBeInTheDocument();
    expect(screen.getByText(`${window.location.origin}/v1`)).toBeInTheDocument();
    expect(screen.getByText(`${window.location.origin}/mcp`)).toBeInTheDocument();
    await waitFor(() => expect(within(row("laptop")).getByText("trl_Ab12Cd34…")).toBeInTheDocument());
    expect(within(row("laptop")).getByText("never used")).toBeInTheDocument();

    const create = screen.getByRole("button", { name: "Create token" });
    expect(create).toBeDisabled();
    fireEvent.change(screen.getByLabelText("Name of a new token"), { target: { value: " Open WebUI " } });
    fireEvent.click(create);

    expect(await screen.findByLabelText("The new token")).toHaveTextContent(SECRET);
    expect(created).toEqual([{ name: "Open WebUI" }]);
    expect(screen.getByText(/Copy it now/)).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Copy" }));
    await screen.findByRole("button", { name: "Copied" });
    expect(writeText).toHaveBeenCalledWith(SECRET);
    expect(within(row("Open WebUI")).getByText(`${SECRET.slice(0, 12)}…`)).toBeInTheDocument();
    expect(within(row("Open WebUI")).queryByText(SECRET)).not.toBeInTheDocument();

    fireEvent.click(screen.getByRole("button", { name: "Done" }));
    expect(screen.queryByLabelText("The new token")).not.toBeInTheDocument();
    expect(screen.queryByText(SECRET)).not.toBeInTheDocument();
  });

  it("revokes a token after confirming, and then shows it revoked without a revoke button", async () => {
    const revoked: string[] = [];
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/auth/session/": SIGNED_IN,
      "GET /api/v1/api-tokens/": [OLD],
      "POST /api/v1/api-tokens/1/revoke/": (_body, url) => {
        revoked.push(url.pathname);
        return jsonResponse({ ...OLD, active: false, revoked_at: "2026-12-01T09:00:00Z" });
      },
    });
    page();
    await waitFor(() => expect(row("laptop")).toBeInTheDocument());
    fireEvent.click(within(row("laptop")).getByRole("button", { name: "Revoke “laptop”" }));
    const dialog = await screen.findByRole("dialog", { name: "Revoke “laptop”?" });
    fireEvent.click(within(dialog).getByRole("button", { name: "Revoke" }));
    await waitFor(() => expect(within(row("laptop")).getByText("Revoked", { selector: ".badge" })).toBeInTheDocument());
    expect(revoked).toEqual(["/api/v1/api-tokens/1/revoke/"]);
    expect(within(row("laptop")).queryByRole("button", { name: /Revoke/ })).not.toBeInTheDocument();
    expect(screen.getByText("Revoked “laptop”.")).toBeInTheDocument();
  });

  it("speaks Spanish and says when there is no token yet", async () => {
    await i18n.changeLanguage("es");
    mockApi({ ...catalogRoutes(), "GET /api/v1/auth/session/": SIGNED_IN, "GET /api/v1/api-tokens/": [] });
    page();
    expect(await screen.findByRole("heading", { level: 1, name: "Cuenta" })).toBeInTheDocument();
    expect(await screen.findByText("Aún no hay ningún token de API")).toBeInTheDocument();
  });
});
