import { Fragment, type ReactNode } from "react";

import { safeHref } from "../../lib/links";

/**
 * A small Markdown renderer for answers: paragraphs, headings, lists, quotes, fenced code,
 * `code`, **bold**, *italic*, http(s) links, and citations `[n]` (as the backend parses them).
 *
 * It builds React elements and never HTML strings, so raw HTML in an answer shows as text: an
 * LLM's output cannot inject markup. (A library such as marked renders to HTML that would need a
 * sanitiser; react-markdown brings the unified tool chain — both far more than answers need.)
 */
export interface MarkdownProps {
  text: string;
  /** Renders a citation; absent (or returning null) leaves `[n]` as text. */
  renderCitation?: (n: number, key: string) => ReactNode | null;
  /** Appended at the end of the last block (the typing cursor). */
  trailing?: ReactNode;
}

type Block =
  | { kind: "paragraph"; text: string }
  | { kind: "heading"; level: number; text: string }
  | { kind: "list"; ordered: boolean; items: string[] }
  | { kind: "quote"; text: string }
  | { kind: "code"; text: string };

const FENCE = /^\s*```/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;

export function parseBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index]!;
    if (FENCE.test(line)) {
      const body: string[] = [];
      index++;
      while (index < lines.length && !FENCE.test(lines[index]!)) body.push(lines[index++]!);
      index++;
      blocks.push({ kind: "code", text: body.join("\n") });
      continue;
    }
    if (!line.trim()) {
      index++;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ kind: "heading", level: heading[1]!.length, text: heading[2]! });
      index++;
      continue;
    }
    const list = BULLET.test(line) ? BULLET : NUMBERED.test(line) ? NUMBERED : null;
    if (list) {
      const items: string[] = [];
      while (index < lines.length && list.test(lines[index]!)) items.push(list.exec(lines[index++]!)![1]!);
      blocks.push({ kind: "list", ordered: list === NUMBERED, items });
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (index < lines.length && QUOTE.test(lines[index]!)) body.push(QUOTE.exec(lines[index++]!)![1]!);
      blocks.push({ kind: "quote", text: body.join("\n") });
      continue;
    }
    const body: string[] = [];
    while (
      index < lines.length &&
      lines[index]!.trim() &&
      !FENCE.test(lines[index]!) &&
      !HEADING.test(lines[index]!) &&
      !BULLET.test(lines[index]!) &&
      !NUMBERED.test(lines[index]!) &&
      !QUOTE.test(lines[index]!)
    ) {
      body.push(lines[index++]!);
    }
    blocks.push({ kind: "paragraph", text: body.join("\n") });
  }
  return blocks;
}

// One alternative per inline form; the first that matches at a position wins. Underscores
// inside a word are not emphasis (CommonMark): answers name settings such as top_k and stop_words.
const INLINE =
  /`([^`\n]+)`|\*\*([^*\n]+)\*\*|(?<![\p{L}\p{N}])__([^_\n]+)__(?![\p{L}\p{N}])|\*([^*\s][^*\n]*)\*|(?<![\p{L}\p{N}])_([^_\s][^_\n]*)_(?![\p{L}\p{N}])|\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)|\[(\d+(?:\s*[,，、]\s*\d+)*)\]|\n/gu;

function renderInline(text: string, props: MarkdownProps, prefix: string): ReactNode[] {
  const nodes: ReactNode[] = [];
  let last = 0;
  let count = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = match.index;
    if (at > last) nodes.push(text.slice(last, at));
    const key = `${prefix}-${count++}`;
    const [whole, code, bold, boldAlt, italic, italicAlt, linkText, href, citation] = match;
    if (code !== undefined) nodes.push(<code key={key}>{code}</code>);
    else if (bold !== undefined || boldAlt !== undefined) nodes.push(<strong key={key}>{renderInline(bold ?? boldAlt!, props, key)}</strong>);
    else if (italic !== undefined || italicAlt !== undefined) nodes.push(<em key={key}>{renderInline(italic ?? italicAlt!, props, key)}</em>);
    else if (linkText !== undefined && href !== undefined) {
      nodes.push(
        <a key={key} href={safeHref(href)} target="_blank" rel="noreferrer noopener">
          {renderInline(linkText, props, key)}
        </a>,
      );
    } else if (citation !== undefined) {
      const numbers = citation.split(/\s*[,，、]\s*/).map(Number);
      const rendered = numbers.map((n, index) => props.renderCitation?.(n, `${key}-${index}`) ?? null);
      if (rendered.every((node) => node === null)) nodes.push(whole);
      else {
        nodes.push(
          <Fragment key={key}>
            {rendered.map((node, index) => node ?? `[${numbers[index]}]`)}
          </Fragment>,
        );
      }
    } else nodes.push(<br key={key} />);
    last = at + whole.length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

export function Markdown(props: MarkdownProps) {
  const blocks = parseBlocks(props.text);
  const trailing = (index: number) => (index === blocks.length - 1 ? props.trailing : null);
  return (
    <div className="markdown">
      {blocks.map((block, index) => {
        const key = `b${index}`;
        switch (block.kind) {
          case "heading": {
            // Answers sit under the page's own headings: start at h3.
            const Tag = `h${Math.min(6, block.level + 2)}` as "h3";
            return <Tag key={key}>{renderInline(block.text, props, key)}{trailing(index)}</Tag>;
          }
          case "list": {
            const Tag = block.ordered ? "ol" : "ul";
            return (
              <Tag key={key}>
                {block.items.map((item, itemIndex) => (
                  <li key={itemIndex}>
                    {renderInline(item, props, `${key}-${itemIndex}`)}
                    {itemIndex === block.items.length - 1 && trailing(index)}
                  </li>
                ))}
              </Tag>
            );
          }
          case "quote":
            return <blockquote key={key}>{renderInline(block.text, props, key)}{trailing(index)}</blockquote>;
          case "code":
            return (
              <pre key={key}>
                <code>{block.text}</code>
                {trailing(index)}
              </pre>
            );
          default:
            return <p key={key}>{renderInline(block.text, props, key)}{trailing(index)}</p>;
        }
      })}
      {blocks.length === 0 && props.trailing}
    </div>
  );
}
