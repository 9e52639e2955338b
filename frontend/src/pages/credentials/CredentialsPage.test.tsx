import type { RJSFSchema } from "@rjsf/utils";
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { CatalogComponent } from "../../api/components";
import type { Credential } from "../../api/credentials";
import fixture from "../../catalog/fixtures/catalog.json";
import i18n from "../../i18n";
import { mockApi } from "../../test/api";
import { CATALOG } from "../../test/catalog";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { CredentialsPage } from "./CredentialsPage";

const SCHEMAS = fixture.schemas as unknown as Record<string, RJSFSchema>;
const CATALOGS = fixture.catalogs as unknown as Record<string, CatalogComponent[]>;
const SECRET = "sk-live-Q7vX2pL9mZ4rT8wK3nB6yH1a1b2";
const NEW_SECRET = "sk-live-J5cD8fG2hK6mN9pR3tV7xZ1c3d4";

const MINE: Credential = {
  id: 2, name: "openai-main", kind: "OpenAIAPIKey", mask: "sk-…a1b2", shared: false, owned: true,
  public_params: { base_url: "https://gateway.example/v1", organization: null },
  created_at: "2026-11-30T10:00:00Z", updated_at: "2026-11-30T10:00:00Z", rotated_at: null, last_used_at: null,
  used_by: [
    { type: "pipeline", id: 7, name: "Hosted answers" },
    { type: "knowledge_base", id: 3, name: "Hosted embeddings" },
  ],
};
const TEAM: Credential = {
  ...MINE, id: 5, name: "team-search", kind: "WebSearchAPIKey", mask: "tv-…9f0e", shared: true, owned: false,
  public_params: { provider: "tavily", base_url: null }, used_by: [],
};

/** The test catalog plus the credential kinds exactly as the server describes them. */
function catalogWithCredentials(language = "en") {
  const kinds = CATALOGS[language]!.filter((component) => component.kind === "credential");
  return {
    "GET /api/v1/components/": [...CATALOG, ...kinds],
    ...Object.fromEntries(kinds.map((kind) => [`GET /api/v1/components/${kind.name}/`, { ...kind, schema: SCHEMAS[kind.name] }])),
  };
}

function row(name: string): HTMLElement {
  const found = document.querySelector<HTMLElement>(`li[data-credential-name="${name}"]`);
  if (!found) throw new Error(`no credential row for ${name}`);
  return found;
}

beforeEach(() => {
  window.history.replaceState(null, "", "/credentials");
});

afterEach(async () => {
  vi.unstubAllGlobals();
  await i18n.changeLanguage("en");
});

describe("CredentialsPage", () => {
  it("lists the user's credentials with where each is used, and shared ones read-only", async () => {
    mockApi({ ...catalogWithCredentials(), "GET /api/v1/credentials/": [TEAM, MINE] });
    renderWithProviders(<CredentialsPage />);
    expect(await screen.findByRole("heading", { level: 1, name: "Credentials" })).toBeInTheDocument();
    await waitFor(() => expect(row("openai-main")).toBeInTheDocument());
    const names = [...document.querySelectorAll("li[data-credential-name]")].map((item) => item.getAttribute("data-credential-name"));
    expect(names).toEqual(["openai-main", "team-search"]);

    const mine = row("openai-main");
    expect(within(mine).getByText("sk-…a1b2")).toBeInTheDocument();
    expect(within(mine).getByText("https://gateway.example/v1")).toBeInTheDocument();
    await waitFor(() => expect(within(mine).getByText("OpenAI API key")).toBeInTheDocument());
    expect(within(mine).getByRole("link", { name: "Hosted answers" })).toHaveAttribute("href", "/pipelines/7");
    expect(within(mine).getByRole("link", { name: "Hosted embeddings" })).toHaveAttribute("href", "/knowledge-bases/3");
    expect(within(mine).getByRole("button", { name: "Rotate “openai-main”" })).toBeInTheDocument();

    const team = row("team-search");
    expect(within(team).getByText("Shared by the administrator")).toBeInTheDocument();
    expect(within(team).getByText("Not used by any of your pipelines or knowledge bases.")).toBeInTheDocument();
    expect(within(team).queryByRole("button")).not.toBeInTheDocument();
  });

  it("adds a credential from a password field, and never shows the value again", async () => {
    const sent: unknown[] = [];
    mockApi({
      ...catalogWithCredentials(),
      "GET /api/v1/credentials/": [],
      "POST /api/v1/credentials/": (body) => {
        sent.push(body);
        return jsonResponse({ ...MINE, used_by: [] }, 201);
      },
    });
    renderWithProviders(<CredentialsPage />);
    expect(await screen.findByText("No credentials yet")).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Add credential" }));
    const dialog = await screen.findByRole("dialog", { name: "Add a credential" });
    const key = await within(dialog).findByLabelText(/API key/);
    expect(key).toHaveAttribute("type", "password");
    fireEvent.change(within(dialog).getByLabelText("Name"), { target: { value: "openai-main" } });
    fireEvent.change(key, { target: { value: SECRET } });
    fireEvent.change(within(dialog).getByLabelText(/Base URL/), { target: { value: "https://gateway.example/v1" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save credential" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(sent).toEqual([{ name: "openai-main", kind: "OpenAIAPIKey", values: { api_key: SECRET, base_url: "https://gateway.example/v1", organization: null } }]);
    expect(within(row("openai-main")).getByText("sk-…a1b2")).toBeInTheDocument();
    expect(screen.getByText("Added credential “openai-main”.")).toBeInTheDocument();
    expect(document.body.innerHTML).not.toContain(SECRET);
  });

  it("shows the server's refusal of a base URL at that field", async () => {
    const refusal = "is not a public address; only an administrator can let pipelines reach it (TRELLIS_OUTBOUND_ALLOW)";
    mockApi({
      ...catalogWithCredentials(),
      "GET /api/v1/credentials/": [],
      "POST /api/v1/credentials/": () => jsonResponse({ errors: [{ path: "values.base_url", message: refusal, code: "outbound_address" }] }, 400),
    });
    renderWithProviders(<CredentialsPage />);
    fireEvent.click(await screen.findByRole("button", { name: "Add credential" }));
    const dialog = await screen.findByRole("dialog", { name: "Add a credential" });
    fireEvent.change(within(dialog).getByLabelText("Name"), { target: { value: "local" } });
    fireEvent.change(await within(dialog).findByLabelText(/API key/), { target: { value: SECRET } });
    const baseUrl = within(dialog).getByLabelText(/Base URL/);
    fireEvent.change(baseUrl, { target: { value: "http://127.0.0.1:11434/v1" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save credential" }));
    const message = await within(dialog).findByText(refusal);
    // The message sits in the base URL's own field, not in a list at the bottom of the form.
    expect(baseUrl.closest(".form-field, .field")).toContainElement(message);
  });

  it("rotates a credential's secret in a password field and shows the new mask only", async () => {
    const sent: { path: string; body: unknown }[] = [];
    mockApi({
      ...catalogWithCredentials(),
      "GET /api/v1/credentials/": [MINE],
      "POST /api/v1/credentials/2/rotate/": (body, url) => {
        sent.push({ path: url.pathname, body });
        return jsonResponse({ ...MINE, mask: "sk-…c3d4", rotated_at: "2026-12-01T09:00:00Z" });
      },
    });
    renderWithProviders(<CredentialsPage />);
    await waitFor(() => expect(row("openai-main")).toBeInTheDocument());
    fireEvent.click(within(row("openai-main")).getByRole("button", { name: "Rotate “openai-main”" }));
    const dialog = await screen.findByRole("dialog", { name: "Rotate “openai-main”" });
    const field = await within(dialog).findByLabelText("API key (new value)");
    expect(field).toHaveAttribute("type", "password");
    const rotate = within(dialog).getByRole("button", { name: "Rotate" });
    expect(rotate).toBeDisabled();
    fireEvent.change(field, { target: { value: NEW_SECRET } });
    fireEvent.click(rotate);

    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(sent).toEqual([{ path: "/api/v1/credentials/2/rotate/", body: { values: { api_key: NEW_SECRET } } }]);
    expect(within(row("openai-main")).getByText("sk-…c3d4")).toBeInTheDocument();
    expect(within(row("openai-main")).getByText(/^rotated /)).toBeInTheDocument();
    expect(document.body.innerHTML).not.toContain(NEW_SECRET);
  });

  it("warns which pipelines use a credential before removing it anyway", async () => {
    const deleted: string[] = [];
    mockApi({
      ...catalogWithCredentials(),
      "GET /api/v1/credentials/": [MINE, { ...MINE, id: 3, name: "spare", used_by: [] }],
      "DELETE /api/v1/credentials/2/": (_body, url) => {
        deleted.push(url.pathname + url.search);
        return new Response(null, { status: 204 });
      },
      "DELETE /api/v1/credentials/3/": (_body, url) => {
        deleted.push(url.pathname + url.search);
        return new Response(null, { status: 204 });
      },
    });
    renderWithProviders(<CredentialsPage />);
    await waitFor(() => expect(row("openai-main")).toBeInTheDocument());
    fireEvent.click(within(row("openai-main")).getByRole("button", { name: "Remove “openai-main”" }));
    const dialog = await screen.findByRole("dialog", { name: "Remove “openai-main”?" });
    expect(within(dialog).getByText(/used by 2 of your pipelines and knowledge bases/)).toBeInTheDocument();
    expect(within(dialog).getByRole("link", { name: "Hosted answers" })).toHaveAttribute("href", "/pipelines/7");
    fireEvent.click(within(dialog).getByRole("button", { name: "Remove anyway" }));
    await waitFor(() => expect(document.querySelector('li[data-credential-name="openai-main"]')).toBeNull());

    fireEvent.click(within(row("spare")).getByRole("button", { name: "Remove “spare”" }));
    const plain = await screen.findByRole("dialog", { name: "Remove “spare”?" });
    fireEvent.click(within(plain).getByRole("button", { name: "Remove" }));
    await waitFor(() => expect(document.querySelector('li[data-credential-name="spare"]')).toBeNull());
    expect(deleted).toEqual(["/api/v1/credentials/2/?force=true", "/api/v1/credentials/3/"]);
  });

  it.each([
    ["es", "Credenciales", "Compartida por el administrador", "Usada por"],
    ["zh-Hant", "憑證", "由管理員共用", "使用於"],
  ])("speaks %s", async (language, title, shared, usedBy) => {
    await i18n.changeLanguage(language);
    mockApi({ ...catalogWithCredentials(language), "GET /api/v1/credentials/": [MINE, TEAM] });
    renderWithProviders(<CredentialsPage />);
    expect(await screen.findByRole("heading", { level: 1, name: title })).toBeInTheDocument();
    await waitFor(() => expect(within(row("team-search")).getByText(shared)).toBeInTheDocument());
    expect(within(row("openai-main")).getByText(usedBy)).toBeInTheDocument();
  });
});
