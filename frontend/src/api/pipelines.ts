import { api } from "./client";
import type { ComponentRef } from "./components";
import type { ErrorAction } from "./models";

/** A saved pipeline, exported or imported: one JSON document. */
export interface PipelineDocument {
  name: string;
  version: 1;
  description?: string;
  /** The knowledge base it was exported from; an import by its owner keeps it. */
  knowledge_base?: { id: number; name: string };
  strategy: ComponentRef;
}

export interface PipelineSummary {
  id: number;
  name: string;
  description: string;
  knowledge_base: number;
  knowledge_base_name: string;
  representation: string;
  ready: boolean;
  waiting_for: string[];
  /** Documents of the knowledge base still being read: a ready pipeline cannot answer from them yet. */
  documents_reading: number;
  created_at: string;
  updated_at: string;
}

export interface Pipeline extends PipelineSummary {
  strategy: ComponentRef;
}

export interface PipelineInput {
  name: string;
  description: string;
  knowledge_base: number;
  strategy: ComponentRef;
}

export interface PipelineTemplate {
  name: string;
  display_name: string;
  description: string;
  icon: string;
  default: boolean;
  available: boolean;
  unavailable_reason: string | null;
  /** What the user can do about it in the application (install the model it needs), or null. */
  unavailable_action: ErrorAction | null;
  document: PipelineDocument;
}

const PIPELINES_URL = "/api/v1/pipelines/";
const pipelineUrl = (id: number) => `${PIPELINES_URL}${id}/`;

export const fetchPipelines = (signal?: AbortSignal) => api.get<PipelineSummary[]>(PIPELINES_URL, { signal });

export const fetchPipeline = (id: number, signal?: AbortSignal) => api.get<Pipeline>(pipelineUrl(id), { signal });

export const fetchPipelineTemplates = (signal?: AbortSignal) =>
  api.get<PipelineTemplate[]>(`${PIPELINES_URL}templates/`, { signal });

export const createPipeline = (input: PipelineInput) => api.post<Pipeline>(PIPELINES_URL, input);

export const updatePipeline = (id: number, input: Partial<PipelineInput>) =>
  api.patch<Pipeline>(pipelineUrl(id), input);

export const deletePipeline = (id: number) => api.delete<void>(pipelineUrl(id));

export const duplicatePipeline = (id: number) => api.post<Pipeline>(`${pipelineUrl(id)}duplicate/`);

export const exportPipeline = (id: number) => api.get<PipelineDocument>(`${pipelineUrl(id)}export/`);

export const importPipeline = (knowledgeBase: number, document: unknown) =>
  api.post<Pipeline>(`${PIPELINES_URL}import/`, { knowledge_base: knowledgeBase, document });
