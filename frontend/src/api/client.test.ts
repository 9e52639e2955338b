import { afterEach, describe, expect, it } from "vitest";

import i18n from "../i18n";
import { headerOf, jsonResponse, mockFetch } from "../test/fetch";
import { ApiError, api, extractErrorMessage } from "./client";

function setCookie(value: string) {
  document.cookie = value;
}

afterEach(() => {
  setCookie("csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/");
});

describe("api client", () => {
  it("sends the UI language and same-origin credentials, without a CSRF token on GET", async () => {
    await i18n.changeLanguage("zh-Hant");
    setCookie("csrftoken=tok123; path=/");
    const fetchSpy = mockFetch(() => jsonResponse([{ name: "BM25Retriever" }]));

    await expect(api.get("/api/v1/components/")).resolves.toEqual([{ name: "BM25Retriever" }]);

    const [, init] = fetchSpy.mock.calls[0]!;
    expect(headerOf(init, "Accept-Language")).toBe("zh-Hant");
    expect(init?.credentials).toBe("same-origin");
    expect(headerOf(init, "X-CSRFToken")).toBeNull();
  });

  it("sends the csrftoken cookie and a JSON body on unsafe methods", async () => {
    setCookie("csrftoken=tok%3D123; path=/");
    const fetchSpy = mockFetch(() => jsonResponse({ id: 3 }, 201));

    await expect(api.post("/api/v1/pipelines/", { name: "Hybrid" })).resolves.toEqual({ id: 3 });

    const [, init] = fetchSpy.mock.calls[0]!;
    expect(init?.method).toBe("POST");
    expect(headerOf(init, "X-CSRFToken")).toBe("tok=123");
    expect(headerOf(init, "Content-Type")).toBe("application/json");
    expect(init?.body).toBe('{"name":"Hybrid"}');
  });

  it("resolves to undefined on an empty 204 response", async () => {
    mockFetch(() => new Response(null, { status: 204 }));
    await expect(api.delete("/api/v1/pipelines/3/")).resolves.toBeUndefined();
  });

  it("throws the server's errors list as a readable message", async () => {
    mockFetch(() =>
      jsonResponse(
        {
          errors: [
            { path: "children[1].params.top_k", message: "must be ≥ 1" },
            "Unknown component 'Nope'",
          ],
        },
        400,
      ),
    );

    const error = await api.post("/api/v1/components/validate/", {}).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).message).toBe(
      "children[1].params.top_k: must be ≥ 1\nUnknown component 'Nope'",
    );
  });

  it("falls back to a translated status message when the body is not JSON", async () => {
    await i18n.changeLanguage("es");
    mockFetch(() => new Response("<h1>Server Error</h1>", { status: 500 }));

    await expect(api.get("/api/v1/components/")).rejects.toThrow(
      "El servidor respondió con un error (HTTP 500).",
    );
  });
});

describe("extractErrorMessage", () => {
  it("reads DRF detail, field errors and non-field errors", () => {
    expect(extractErrorMessage({ detail: "Not found." })).toBe("Not found.");
    expect(extractErrorMessage({ name: ["This field is required."] })).toBe(
      "name: This field is required.",
    );
    expect(extractErrorMessage({ non_field_errors: ["Names must be unique."] })).toBe(
      "Names must be unique.",
    );
    expect(extractErrorMessage({})).toBeNull();
  });
});
