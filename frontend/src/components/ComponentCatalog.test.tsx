import { act, fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { CatalogComponent } from "../api/components";
import i18n from "../i18n";
import { headerOf, jsonResponse, mockFetch } from "../test/fetch";
import { ComponentCatalog } from "./ComponentCatalog";

function component(overrides: Partial<CatalogComponent>): CatalogComponent {
  return {
    name: "X",
    kind: "retriever",
    category: "sparse",
    icon: "database",
    display_name: "X",
    description: "",
    representation: null,
    composite: false,
    min_children: null,
    max_children: null,
    ...overrides,
  };
}

const NAMES: Record<string, [string, string, string]> = {
  en: ["BM25 retriever", "Reciprocal rank fusion", "Multilingual MiniLM"],
  es: ["Recuperador BM25", "Fusión por rango recíproco", "MiniLM multilingüe"],
  "zh-Hant": ["BM25 檢索器", "倒數排名融合", "多語言 MiniLM"],
};

/** A catalog server that answers in the language the request asks for. */
function catalogIn(language: string): CatalogComponent[] {
  const [bm25, fusion, minilm] = NAMES[language] ?? NAMES.en!;
  return [
    component({ name: "BM25Retriever", display_name: bm25, icon: "file-text" }),
    component({
      name: "EmbeddingModel",
      kind: "embedding",
      category: "dense",
      display_name: minilm,
      icon: "brain",
    }),
    component({
      name: "EnsembleRetriever",
      category: "composite",
      display_name: fusion,
      icon: "shuffle",
      composite: true,
      min_children: 2,
      max_children: null,
    }),
  ];
}

function section(name: string) {
  return screen.getByRole("region", { name });
}

describe("ComponentCatalog", () => {
  it("groups components by kind with translated headings and names", async () => {
    await i18n.changeLanguage("es");
    const fetchSpy = mockFetch((_url, init) =>
      jsonResponse(catalogIn(headerOf(init, "Accept-Language") ?? "en")),
    );

    render(<ComponentCatalog />);

    const retrievers = await screen.findByRole("region", { name: "Recuperadores" });
    expect(
      within(retrievers)
        .getAllByRole("listitem")
        .map((item) => within(item).getByRole("heading").textContent),
    ).toEqual(["Recuperador BM25", "Fusión por rango recíproco"]);
    expect(within(retrievers).getByText("2 componentes")).toBeInTheDocument();
    expect(within(retrievers).getByText("Al menos 2 componentes hijos")).toBeInTheDocument();

    const embeddings = section("Modelos de embeddings");
    expect(within(embeddings).getAllByRole("listitem")).toHaveLength(1);
    expect(within(embeddings).getByText("MiniLM multilingüe")).toBeInTheDocument();
    expect(within(embeddings).queryByText("Recuperador BM25")).not.toBeInTheDocument();

    expect(fetchSpy).toHaveBeenCalledTimes(1);
    const [url, init] = fetchSpy.mock.calls[0]!;
    expect(url).toBe("/api/v1/components/");
    expect(headerOf(init, "Accept-Language")).toBe("es");
  });

  it("fetches the catalog again in the new language", async () => {
    const fetchSpy = mockFetch((_url, init) =>
      jsonResponse(catalogIn(headerOf(init, "Accept-Language") ?? "en")),
    );
    render(<ComponentCatalog />);
    expect(await screen.findByText("BM25 retriever")).toBeInTheDocument();

    await act(() => i18n.changeLanguage("zh-Hant"));

    expect(await screen.findByText("BM25 檢索器")).toBeInTheDocument();
    expect(screen.queryByText("BM25 retriever")).not.toBeInTheDocument();
    expect(section("檢索器")).toBeInTheDocument();
    expect(fetchSpy).toHaveBeenCalledTimes(2);
    expect(headerOf(fetchSpy.mock.calls[1]![1], "Accept-Language")).toBe("zh-Hant");
  });

  it("shows the server's message when loading fails, and recovers on retry", async () => {
    let fail = true;
    mockFetch(() =>
      fail
        ? jsonResponse({ detail: "The catalog is being rebuilt." }, 503)
        : jsonResponse(catalogIn("en")),
    );
    render(<ComponentCatalog />);

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("The component catalog could not be loaded.");
    expect(alert).toHaveTextContent("The catalog is being rebuilt.");

    fail = false;
    fireEvent.click(within(alert).getByRole("button", { name: "Try again" }));

    expect(await screen.findByText("BM25 retriever")).toBeInTheDocument();
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });

  it("explains in the user's language when the server cannot be reached", async () => {
    await i18n.changeLanguage("es");
    mockFetch(() => Promise.reject(new TypeError("Failed to fetch")));
    render(<ComponentCatalog />);

    expect(await screen.findByRole("alert")).toHaveTextContent(
      "No se pudo conectar con el servidor.",
    );
  });

  it("shows a loading state, then an empty state", async () => {
    let respond: (response: Response) => void = () => {};
    mockFetch(() => new Promise<Response>((resolve) => (respond = resolve)));
    render(<ComponentCatalog />);

    expect(screen.getByRole("status")).toHaveTextContent("Loading components…");
    respond(jsonResponse([]));

    expect(await screen.findByText("No components are registered yet.")).toBeInTheDocument();
    expect(screen.queryByRole("status")).not.toBeInTheDocument();
  });
});
