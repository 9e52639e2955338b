import type { ComponentRef } from "../../api/components";
import type { PipelineTemplate } from "../../api/pipelines";
import type { ComponentDetail } from "../../api/components";
import { freshNode, slotsOf } from "../../components/RetrieverTree/tree";
import { defaultParams } from "../../components/SchemaForm/schemaUi";

/** The strategy an empty pipeline starts with, when the catalog has it (DESIGN: NaiveRAG). */
export const DEFAULT_STRATEGY = "NaiveRAG";

/** What the "new pipeline" dialog chose, carried in the editor's address so a reload keeps it. */
export interface NewPipelineChoice {
  name: string;
  knowledgeBase: number | null;
  /** A template's name, or null to start empty. */
  template: string | null;
  /** The strategy of an empty pipeline. */
  strategy: string | null;
}

export function newPipelineUrl(choice: NewPipelineChoice): string {
  const query = new URLSearchParams({ name: choice.name });
  if (choice.knowledgeBase !== null) query.set("knowledge_base", String(choice.knowledgeBase));
  if (choice.template) query.set("template", choice.template);
  if (choice.strategy) query.set("strategy", choice.strategy);
  return `/pipelines/new?${query}`;
}

export function readNewPipelineChoice(search: string): NewPipelineChoice {
  const query = new URLSearchParams(search);
  const knowledgeBase = Number(query.get("knowledge_base"));
  return {
    name: query.get("name") ?? "",
    knowledgeBase: Number.isInteger(knowledgeBase) && knowledgeBase > 0 ? knowledgeBase : null,
    template: query.get("template"),
    strategy: query.get("strategy"),
  };
}

export function templateStrategy(templates: readonly PipelineTemplate[], name: string | null): ComponentRef | null {
  const template = templates.find((candidate) => candidate.name === name) ?? templates.find((candidate) => candidate.default);
  return template ? structuredClone(template.document.strategy) : null;
}

/**
 * An empty pipeline: the strategy's own settings (`normalised`: as the server fills them in, when
 * it could), every component the tree holds still to be chosen.
 */
export function emptyStrategy(detail: ComponentDetail, kinds: ReadonlySet<string>, normalised?: ComponentRef): ComponentRef {
  const node =
    normalised?.component === detail.name
      ? structuredClone(normalised)
      : freshNode(detail.name, detail.schema, kinds, defaultParams(detail.schema));
  node.params ??= {};
  for (const slot of slotsOf(detail.schema, kinds)) node.params[slot.name] = slot.multiple ? [] : null;
  return node;
}
