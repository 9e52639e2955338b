import i18n, { currentLanguage } from "../i18n";

/** A failed API call; `message` is readable by the user, `status` is 0 when the server was not reached. */
export class ApiError extends Error {
  readonly status: number;
  readonly payload: unknown;

  constructor(message: string, status: number, payload: unknown = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.payload = payload;
  }
}

export interface RequestOptions {
  method?: string;
  /** Sent as JSON, or as is when it is FormData (uploads). */
  body?: unknown;
  headers?: HeadersInit;
  signal?: AbortSignal;
}

// RFC 9110 safe methods: Django's CSRF middleware only checks the others.
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

export function readCookie(name: string): string | null {
  for (const pair of document.cookie.split(";")) {
    const [key, ...value] = pair.trim().split("=");
    if (key === name) return decodeURIComponent(value.join("="));
  }
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The readable message in an error body: DRF's `{"detail": ...}`, an `{"errors": [...]}` list
 * (strings, or `{path, message}` objects), or DRF field errors `{"field": ["..."]}`.
 */
export function extractErrorMessage(payload: unknown): string | null {
  if (typeof payload === "string") return payload.trim() || null;
  if (Array.isArray(payload)) {
    const lines = payload.map(extractErrorMessage).filter((line): line is string => !!line);
    return lines.length ? lines.join("\n") : null;
  }
  if (!isRecord(payload)) return null;
  if ("detail" in payload) return extractErrorMessage(payload.detail);
  if ("errors" in payload) return extractErrorMessage(payload.errors);
  if (typeof payload.message === "string") {
    const path = typeof payload.path === "string" && payload.path ? payload.path : null;
    return path ? `${path}: ${payload.message}` : payload.message;
  }
  const lines = Object.entries(payload).flatMap(([field, value]) => {
    const message = extractErrorMessage(value);
    if (!message) return [];
    return field === "non_field_errors" ? [message] : [`${field}: ${message}`];
  });
  return lines.length ? lines.join("\n") : null;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Fired on 401/403 so the session can be checked again (it may have expired). */
export const UNAUTHORIZED_EVENT = "trellis:unauthorized";

function notifyUnauthorized(): void {
  window.dispatchEvent(new Event(UNAUTHORIZED_EVENT));
}

function apiHeaders(method: string): Headers {
  const headers = new Headers();
  headers.set("Accept", "application/json");
  headers.set("Accept-Language", currentLanguage());
  if (!SAFE_METHODS.has(method)) {
    const csrfToken = readCookie("csrftoken");
    if (csrfToken) headers.set("X-CSRFToken", csrfToken);
  }
  return headers;
}

/** Call the Trellis API in the UI's language; resolves to the parsed JSON body. */
export async function apiRequest<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = (options.method ?? "GET").toUpperCase();
  const headers = apiHeaders(method);
  new Headers(options.headers).forEach((value, key) => headers.set(key, value));

  let body: BodyInit | undefined;
  if (options.body instanceof FormData) {
    body = options.body;
  } else if (options.body !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(options.body);
  }

  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body,
      credentials: "same-origin",
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new ApiError(i18n.t("errors.network"), 0);
  }

  const text = await response.text();
  const parsed = text ? parseJson(text) : ({ ok: true, value: undefined } as const);

  if (!response.ok) {
    if (response.status === 401 || response.status === 403) notifyUnauthorized();
    const payload = parsed.ok ? parsed.value : text;
    const message =
      (parsed.ok ? extractErrorMessage(parsed.value) : null) ??
      i18n.t("errors.http", { status: response.status });
    throw new ApiError(message, response.status, payload);
  }
  if (!parsed.ok) {
    throw new ApiError(i18n.t("errors.invalidResponse"), response.status, text);
  }
  return parsed.value as T;
}

export const api = {
  get: <T>(path: string, options: Omit<RequestOptions, "method" | "body"> = {}) =>
    apiRequest<T>(path, { ...options, method: "GET" }),
  post: <T>(path: string, body?: unknown, options: Omit<RequestOptions, "method" | "body"> = {}) =>
    apiRequest<T>(path, { ...options, method: "POST", body }),
  put: <T>(path: string, body?: unknown, options: Omit<RequestOptions, "method" | "body"> = {}) =>
    apiRequest<T>(path, { ...options, method: "PUT", body }),
  patch: <T>(path: string, body?: unknown, options: Omit<RequestOptions, "method" | "body"> = {}) =>
    apiRequest<T>(path, { ...options, method: "PATCH", body }),
  delete: <T>(path: string, options: Omit<RequestOptions, "method" | "body"> = {}) =>
    apiRequest<T>(path, { ...options, method: "DELETE" }),
};

/** A finished upload: any HTTP status (409 and 413 carry meaningful bodies), body parsed when JSON. */
export interface UploadResult {
  status: number;
  body: unknown;
}

/**
 * POST a multipart form with upload progress (`fetch` cannot report it), in the UI's language.
 * Resolves whatever the status; rejects with an `ApiError` (status 0) when the server was not
 * reached or the upload was aborted.
 */
export function uploadForm(
  path: string,
  form: FormData,
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<UploadResult> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open("POST", path);
    request.withCredentials = true;
    apiHeaders("POST").forEach((value, key) => request.setRequestHeader(key, value));
    request.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      if (request.status === 401 || request.status === 403) notifyUnauthorized();
      const parsed = request.responseText ? parseJson(request.responseText) : { ok: false as const };
      resolve({ status: request.status, body: parsed.ok ? parsed.value : request.responseText });
    };
    request.onerror = () => reject(new ApiError(i18n.t("errors.network"), 0));
    request.onabort = () => reject(new ApiError(i18n.t("errors.aborted"), 0));
    signal?.addEventListener("abort", () => request.abort(), { once: true });
    request.send(form);
  });
}
