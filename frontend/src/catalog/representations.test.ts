import type { RJSFSchema } from "@rjsf/utils";
import { describe, expect, it } from "vitest";

import type { CatalogComponent, ComponentRef } from "../api/components";
import { freshNode, nodeRepresentation, slotsOf, treeKinds, type Slot } from "../components/RetrieverTree/tree";
import { defaultParams } from "../components/SchemaForm/schemaUi";
import fixture from "./fixtures/catalog.json";
import { catalogVocabulary } from "./representation";

/**
 * Every representation the catalog ships, in every language, at three stages of building a
 * node in the builder: fresh (nothing nested yet), partly built (one child in each slot) and
 * complete (every slot filled, required params set). The fixture is the catalog API's own answer
 * (frontend/scripts/catalog_fixture.py; a Python test keeps it current).
 */

const SCHEMAS = fixture.schemas as unknown as Record<string, RJSFSchema>;
const EXAMPLES = fixture.examples as Record<string, Record<string, unknown>>;
const CATALOGS = fixture.catalogs as unknown as Record<string, CatalogComponent[]>;
const LANGUAGES = Object.keys(CATALOGS);
const ENGLISH = CATALOGS.en!;
const KINDS = treeKinds(ENGLISH);
const STAGES = ["fresh", "partly built", "complete"] as const;
type Stage = (typeof STAGES)[number];

/** The node as the builder makes it: defaults, list slots empty (`freshNode`). */
function fresh(name: string, examples = false): ComponentRef {
  const schema = SCHEMAS[name]!;
  const node = freshNode(name, schema, KINDS, defaultParams(schema));
  return examples ? { ...node, params: { ...node.params, ...EXAMPLES[name] } } : node;
}

/** The components a slot's picker offers, in catalog order. */
function pickable(slot: Slot): CatalogComponent[] {
  return ENGLISH.filter((component) => component.kind === slot.kind);
}

/** `name`'s node at `stage`, built the way a user builds it. */
function built(name: string, stage: Stage): ComponentRef {
  const node = fresh(name, stage === "complete");
  const params = { ...node.params };
  for (const slot of slotsOf(SCHEMAS[name]!, KINDS)) {
    const offered = pickable(slot);
    if (stage === "fresh" || offered.length === 0) {
      // Nothing chosen yet: a new pipeline's strategy starts with its tree slots empty too.
      params[slot.name] = slot.multiple ? [] : null;
    } else if (!slot.multiple) {
      params[slot.name] = fresh(offered[0]!.name, stage === "complete");
    } else {
      const count = stage === "partly built" ? 1 : Math.min(Math.max(slot.min ?? 0, 2), slot.max ?? Infinity);
      params[slot.name] = offered.slice(0, count).map((child) => fresh(child.name, stage === "complete"));
    }
  }
  return { ...node, params };
}

// Registry names that differ from every short name: they must never reach the reader.
const CLASS_NAMES = ENGLISH.filter((component) => LANGUAGES.every((language) =>
  CATALOGS[language]!.find((entry) => entry.name === component.name)!.short_name !== component.name,
)).map((component) => component.name);
const EMPTY_SEPARATOR = /[·→]\s*[·→]|^\s*[·→,、]|[·→,、:：]\s*$|,\s*,|、\s*、|\(\s*\)|（\s*）|(^|\s)\/\s*\/(\s|$)/;

const cases = LANGUAGES.flatMap((language) =>
  CATALOGS[language]!.filter((entry) => entry.representation).flatMap((entry) =>
    STAGES.map((stage) => [language, entry.name, stage] as const),
  ),
);

describe("every representation in the catalog", () => {
  it("has cases in every language", () => {
    expect(LANGUAGES).toEqual(["en", "es", "zh-Hant"]);
    expect(cases.length).toBe(3 * 3 * ENGLISH.filter((entry) => entry.representation).length);
  });

  it.each(cases)("reads well in %s: %s, %s", (language, name, stage) => {
    const catalog = CATALOGS[language]!;
    const byName = new Map(catalog.map((entry) => [entry.name, entry]));
    const entry = byName.get(name)!;
    const text = nodeRepresentation(built(name, stage), entry, SCHEMAS[name], catalogVocabulary(byName, language));

    expect(text.trim()).not.toBe("");
    expect(text).not.toMatch(/⟨|\?⟩|\{|\}|undefined|null|NaN|\[object/);
    expect(text).not.toMatch(EMPTY_SEPARATOR);
    for (const className of CLASS_NAMES) expect(text).not.toMatch(new RegExp(`\\b${className}\\b`));
  });

  it("shows what was built, in the reader's language", () => {
    const say = (language: string, node: ComponentRef) => {
      const byName = new Map(CATALOGS[language]!.map((entry) => [entry.name, entry]));
      return nodeRepresentation(node, byName.get(node.component), SCHEMAS[node.component], catalogVocabulary(byName, language));
    };
    const agentic = built("AgenticEnsembleRetriever", "fresh");
    expect(say("en", agentic)).toBe("Agentic · rounds ≤ 3 · pool 10");
    const fusion = { ...fresh("EnsembleRetriever"), params: { ...fresh("EnsembleRetriever").params, children: [fresh("BM25Retriever"), fresh("EnsembleRetriever")] } };
    expect(say("en", fusion)).toBe("Fusion · RRF · BM25, Fusion · top 10");
    expect(say("es", fusion)).toBe("Fusión · RRF · BM25, Fusión · 10 mejores");
    expect(say("zh-Hant", fusion)).toBe("融合 · RRF · BM25、融合 · 前 10 名");
    expect(say("zh-Hant", built("DenseEmbeddingRetriever", "fresh"))).toBe("稠密 · 知識庫模型 · 餘弦 · 前 10 名");
    expect(say("en", built("NaiveRAG", "fresh"))).toBe("Naive RAG · Local model");
    expect(say("es", { ...built("NaiveRAG", "fresh"), params: { ...built("NaiveRAG", "fresh").params, retriever: agentic } }))
      .toBe("RAG simple · Agéntico → Modelo local");
  });
});
