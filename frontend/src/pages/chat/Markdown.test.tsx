import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import { Markdown } from "./Markdown";

describe("Markdown", () => {
  it("renders the usual forms: headings, emphasis, code, lists, quotes and http links", () => {
    const { container } = render(
      <Markdown text={"# Title\n\nSome **bold**, *italic* and `code`.\n\n- one\n- two\n\n1. first\n\n> quoted\n\n```\nx = 1\n```\n\n[docs](https://example.org/a)"} />,
    );
    expect(screen.getByRole("heading", { level: 3, name: "Title" })).toBeInTheDocument();
    expect(container.querySelector("strong")).toHaveTextContent("bold");
    expect(container.querySelector("em")).toHaveTextContent("italic");
    expect(container.querySelector("p code")).toHaveTextContent("code");
    expect(container.querySelectorAll("ul li")).toHaveLength(2);
    expect(container.querySelectorAll("ol li")).toHaveLength(1);
    expect(container.querySelector("blockquote")).toHaveTextContent("quoted");
    expect(container.querySelector("pre code")).toHaveTextContent("x = 1");
    expect(screen.getByRole("link", { name: "docs" })).toHaveAttribute("href", "https://example.org/a");
  });

  it("keeps underscores inside words as written, and still reads _emphasis_ and __strong__ between words", () => {
    const { container } = render(
      <Markdown text={"Add a child: BM25Retriever, top_k 100. For Spanish, set its stop_words to spanish; _only_ __then__ save."} />,
    );
    expect(container).toHaveTextContent("top_k 100. For Spanish, set its stop_words to spanish;");
    expect([...container.querySelectorAll("em")].map((node) => node.textContent)).toEqual(["only"]);
    expect([...container.querySelectorAll("strong")].map((node) => node.textContent)).toEqual(["then"]);
  });

  it("never renders raw HTML or script links: they stay text", () => {
    const { container } = render(
      <Markdown text={'<img src=x onerror="alert(1)"> <script>alert(2)</script> [click](javascript:alert(3))'} />,
    );
    expect(container.querySelector("img, script")).toBeNull();
    expect(screen.queryByRole("link")).not.toBeInTheDocument();
    expect(container).toHaveTextContent('<img src=x onerror="alert(1)"> <script>alert(2)</script> [click](javascript:alert(3))');
  });

  it("turns [n], [1][2] and [1, 2] into citations it knows, and leaves other numbers as text", () => {
    const open = vi.fn();
    render(
      <Markdown
        text="Fusion [1][2]. Both [1, 2]. Unknown [9]."
        renderCitation={(n, key) => (n <= 2 ? <button key={key} type="button" onClick={() => open(n)}>{n}</button> : null)}
      />,
    );
    expect(screen.getAllByRole("button", { name: "1" })).toHaveLength(2);
    expect(screen.getAllByRole("button", { name: "2" })).toHaveLength(2);
    expect(screen.getByText(/Unknown \[9\]\./)).toBeInTheDocument();
    fireEvent.click(screen.getAllByRole("button", { name: "2" })[0]!);
    expect(open).toHaveBeenCalledWith(2);
  });

  it("puts the typing cursor at the end of the last block", () => {
    const { container } = render(<Markdown text={"First.\n\nSecond"} trailing={<span data-testid="cursor" />} />);
    expect(container.querySelectorAll("p")[1]!.lastElementChild).toBe(screen.getByTestId("cursor"));
  });
});
