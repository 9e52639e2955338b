import { vi } from "vitest";

export type FetchHandler = (url: string, init: RequestInit) => Response | Promise<Response>;

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

/** Replace `fetch` for one test; the returned spy records every call. */
export function mockFetch(handler: FetchHandler) {
  return vi
    .spyOn(globalThis, "fetch")
    .mockImplementation(async (input, init = {}) => handler(String(input), init));
}

export function headerOf(init: RequestInit | undefined, name: string): string | null {
  return new Headers(init?.headers).get(name);
}
