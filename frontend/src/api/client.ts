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

/** Call the Trellis API in the UI's language; resolves to the parsed JSON body. */
export async function apiRequest<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = (options.method ?? "GET").toUpperCase();
  const headers = new Headers(options.headers);
  headers.set("Accept", "application/json");
  headers.set("Accept-Language", currentLanguage());

  if (!SAFE_METHODS.has(method)) {
    const csrfToken = readCookie("csrftoken");
    if (csrfToken) headers.set("X-CSRFToken", csrfToken);
  }

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
