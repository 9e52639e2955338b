import { api, uploadForm, type UploadResult } from "./client";

/** The kinds of model the manager lists; only some can be installed (`ModelInstaller.kinds`). */
export const MODEL_KINDS = ["embedding", "cross-encoder", "llm"] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

export type ModelSource = "package" | "hub" | "zip" | "folder";

/** A model this machine can run, packaged or installed. */
export interface InstalledModel {
  /** What pipelines name it by (a cross-encoder's `model_name`). */
  name: string;
  /** The model's own name ("Qwen2.5-Coder 1.5B Instruct (Q4_K_M)") for a packaged model; an installed one's `name`. */
  display_name: string;
  /** Where its authors publish a packaged model (a Hugging Face id); empty for an installed one. */
  upstream: string;
  kind: ModelKind;
  source: ModelSource;
  /** The package, hub id, uploaded file or folder it came from. */
  source_detail: string;
  /** The hub commit of a hub install. */
  revision: string;
  size: number;
  license: string | null;
  installed_at: string | null;
  /** What the load check learnt: `{labels: 1}` or `{dimension: 384}`. */
  details: Record<string, number>;
  enables: { components: string[]; presets: string[] };
  /** This user may remove it: an administrator any installed model, a user their own private ones. */
  removable: boolean;
  /** Private to the user who installed it (an ordinary user's upload or hub install): others neither see nor use it. */
  private: boolean;
  /** Whose private model it is (shown to its owner and to administrators); null when every user shares it. */
  owner: string | null;
}

/** What installing can do on this server, for this user. */
export interface ModelInstaller {
  offline: boolean;
  hub_endpoint: string;
  max_bytes: number;
  kinds: ModelKind[];
  can_install_folders: boolean;
  can_remove: boolean;
  /** What this user installs is private to them (ordinary users); an administrator's installs are shared. */
  installs_private: boolean;
}

export type InstallSource = "hub" | "zip" | "folder";
export type InstallStatus = "queued" | "downloading" | "extracting" | "checking" | "ready" | "failed" | "removed";
export const ACTIVE_INSTALL: readonly InstallStatus[] = ["queued", "downloading", "extracting", "checking"];

/** One install request and where it stands. */
export interface ModelInstall {
  id: number;
  source: InstallSource;
  reference: string;
  revision: string;
  kind: ModelKind;
  name: string;
  status: InstallStatus;
  /** Bytes downloaded or extracted so far, of `total`. */
  done: number;
  total: number;
  size: number;
  error: string | null;
  error_code: string | null;
  created_at: string | null;
  finished_at: string | null;
}

export interface InstallRequest {
  source: "hub" | "folder";
  reference: string;
  kind: ModelKind;
  name: string;
  revision?: string;
  copy?: boolean;
}

/** What `ws/models/` sends: the recent installs on connect, then each change. */
export type InstallMessage =
  | { type: "model.installs"; installs: ModelInstall[] }
  | { type: "model.install"; install: ModelInstall }
  | { type: "model.install.deleted"; id: number };

const MODELS_URL = "/api/v1/models/";

export const isActiveInstall = (status: InstallStatus) => ACTIVE_INSTALL.includes(status);

export const fetchModels = (signal?: AbortSignal, kind?: ModelKind) =>
  api.get<InstalledModel[]>(kind ? `${MODELS_URL}?kind=${encodeURIComponent(kind)}` : MODELS_URL, { signal });

export const fetchInstaller = (signal?: AbortSignal) => api.get<ModelInstaller>(`${MODELS_URL}installer/`, { signal });

export const fetchInstalls = (signal?: AbortSignal) => api.get<ModelInstall[]>(`${MODELS_URL}installs/`, { signal });

export const requestInstall = (input: InstallRequest) => api.post<ModelInstall>(`${MODELS_URL}installs/`, input);

/** Upload a `.zip` of a model folder, with upload progress; resolves with the status and body. */
export function uploadModel(
  input: { file: File; kind: ModelKind; name: string },
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<UploadResult> {
  const form = new FormData();
  form.append("file", input.file);
  form.append("kind", input.kind);
  form.append("name", input.name);
  return uploadForm(`${MODELS_URL}installs/upload/`, form, onProgress, signal);
}

/** Queue a failed install again, from the same source; resolves with it, queued. */
export const retryInstall = (id: number) => api.post<ModelInstall>(`${MODELS_URL}installs/${id}/retry/`);

/** Remove a failed install from the list, with the upload or partial download it kept. */
export const deleteInstall = (id: number) => api.delete<void>(`${MODELS_URL}installs/${id}/`);

export const removeModel = (name: string) => api.delete<void>(`${MODELS_URL}installed/${encodeURIComponent(name)}/`);

/** Where the user's installs are followed live, in `language`. */
export function modelsSocketUrl(language: string): string {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${window.location.host}/ws/models/?lang=${encodeURIComponent(language)}`;
}

/** What the user can do about an error in the application; the server sends it beside the message. */
export interface ErrorAction {
  code: string;
  params: Record<string, string>;
}

/** A model the Models page's install dialog opens filled in with. */
export interface InstallTarget {
  kind: ModelKind;
  reference: string;
}

const INSTALL_PARAM = "install";

/** The Models page with its install dialog open on `target` (`/models?install=<kind>:<id>`). */
export function installLink(target: InstallTarget): string {
  return `/models?${INSTALL_PARAM}=${encodeURIComponent(`${target.kind}:${target.reference}`)}`;
}

/** The model an `install_model` action names, or null for any other action. */
export function installTargetOf(action: ErrorAction | null | undefined): InstallTarget | null {
  if (action?.code !== "install_model") return null;
  const { kind, model } = action.params;
  return MODEL_KINDS.includes(kind as ModelKind) && model ? { kind: kind as ModelKind, reference: model } : null;
}

/** The install a Models page address asks for (`?install=<kind>:<id>`), or null. */
export function installTargetIn(search: string): InstallTarget | null {
  const value = new URLSearchParams(search).get(INSTALL_PARAM) ?? "";
  const at = value.indexOf(":");
  if (at < 0) return null;
  return installTargetOf({ code: "install_model", params: { kind: value.slice(0, at), model: value.slice(at + 1).trim() } });
}
