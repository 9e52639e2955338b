import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";

import { App } from "./App";
import { mockApi } from "./test/api";
import { catalogRoutes } from "./test/catalog";
import { headerOf, jsonResponse } from "./test/fetch";

const SIGNED_IN = { authenticated: true, id: 1, username: "ada", is_staff: false };
const ANONYMOUS = { authenticated: false, id: null, username: null, is_staff: false };

afterEach(() => {
  window.history.pushState(null, "", "/");
  document.cookie = "csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/";
});

describe("App", () => {
  it("asks to sign in, sends the CSRF token, shows the server's reason, then opens the app", async () => {
    document.cookie = "csrftoken=tok123; path=/";
    let attempts = 0;
    const api = mockApi({
      ...catalogRoutes(),
      "GET /api/v1/auth/session/": ANONYMOUS,
      "POST /api/v1/auth/session/": (body) => {
        attempts++;
        return (body as { password: string }).password === "right"
          ? jsonResponse(SIGNED_IN)
          : jsonResponse({ detail: "The user name or password is wrong." }, 400);
      },
      "GET /api/v1/knowledge-bases/": [],
    });
    render(<App />);

    fireEvent.change(await screen.findByLabelText("User name"), { target: { value: "ada" } });
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "wrong" } });
    fireEvent.click(screen.getByRole("button", { name: "Sign in" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("The user name or password is wrong.");

    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "right" } });
    fireEvent.click(screen.getByRole("button", { name: "Sign in" }));
    expect(await screen.findByRole("heading", { level: 1, name: "Knowledge bases" })).toBeInTheDocument();
    expect(attempts).toBe(2);
    const post = api.mock.calls.find(([, init]) => init?.method === "POST")!;
    expect(headerOf(post[1], "X-CSRFToken")).toBe("tok123");
    expect(window.location.pathname).toBe("/knowledge-bases");
    expect(screen.getByRole("link", { name: "Knowledge bases" })).toHaveAttribute("aria-current", "page");
    expect(document.title).toBe("Trellis · Knowledge bases");
  });

  it("navigates between sections without reloading, with an empty state for each", async () => {
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/auth/session/": SIGNED_IN,
      "GET /api/v1/knowledge-bases/": [],
      "GET /api/v1/pipelines/": [],
      "GET /api/v1/conversations/": [],
    });
    render(<App />);
    expect(await screen.findByText("No knowledge bases yet")).toBeInTheDocument();

    fireEvent.click(screen.getByRole("link", { name: "Pipelines" }));
    expect(await screen.findByText("A pipeline answers from a knowledge base: create one first.")).toBeInTheDocument();
    expect(window.location.pathname).toBe("/pipelines");

    fireEvent.click(screen.getByRole("link", { name: "Chat" }));
    expect(await screen.findByText("Chat answers through a pipeline")).toBeInTheDocument();

    act(() => {
      window.history.back();
    });
    await waitFor(() => expect(window.location.pathname).toBe("/pipelines"));
  });

  it("switches the whole interface's language and asks the server in it", async () => {
    const api = mockApi({ ...catalogRoutes(), "GET /api/v1/auth/session/": SIGNED_IN, "GET /api/v1/knowledge-bases/": [] });
    render(<App />);
    await screen.findByText("No knowledge bases yet");

    fireEvent.change(screen.getByRole("combobox", { name: "Language" }), { target: { value: "zh-Hant" } });
    const nav = await screen.findByRole("navigation", { name: "主要" });
    expect(within(nav).getByRole("link", { name: "知識庫" })).toBeInTheDocument();
    await waitFor(() => {
      const catalogCalls = api.mock.calls.filter(([url]) => url === "/api/v1/components/");
      expect(headerOf(catalogCalls[catalogCalls.length - 1]![1], "Accept-Language")).toBe("zh-Hant");
    });
    expect(document.cookie).toContain("trellis_language=zh-hant");
  });

  it("signs out", async () => {
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/auth/session/": SIGNED_IN,
      "GET /api/v1/knowledge-bases/": [],
      "DELETE /api/v1/auth/session/": () => new Response(null, { status: 204 }),
    });
    render(<App />);
    fireEvent.click(await screen.findByRole("button", { name: "Sign out" }));
    expect(await screen.findByRole("heading", { name: "Sign in" })).toBeInTheDocument();
  });
});
