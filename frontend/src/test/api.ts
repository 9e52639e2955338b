import { jsonResponse, mockFetch } from "./fetch";

export type Route = (body: unknown, url: URL) => Response | Promise<Response>;
type Json = object | string | number | boolean | null;

/**
 * Answer `fetch` by "METHOD /path/" (query ignored); a value that is not a function is sent as
 * JSON. Unknown routes answer 404 so a test fails loudly.
 */
export function mockApi(routes: Record<string, Route | Json>) {
  return mockFetch(async (input, init) => {
    const url = new URL(input, "http://localhost");
    const key = `${(init.method ?? "GET").toUpperCase()} ${url.pathname}`;
    if (!(key in routes)) return jsonResponse({ detail: `no mock for ${key}` }, 404);
    const route = routes[key];
    if (typeof route !== "function") return jsonResponse(route);
    const body: unknown = typeof init.body === "string" ? JSON.parse(init.body) : init.body;
    return route(body, url);
  });
}
