import type { PipelineSummary } from "../../api/pipelines";

const STORAGE_KEY = "trellis.chat.pipeline";

/** Remember the pipeline last chosen, so the next conversation starts with it. */
export function rememberPipeline(id: number): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, String(id));
  } catch {
    // Storage can be disabled; the choice then lasts for this conversation only.
  }
}

/** The pipeline a new conversation starts with: the last one chosen, else the first ready one. */
export function preferredPipeline(pipelines: readonly PipelineSummary[]): number | null {
  let stored: number | null = null;
  try {
    stored = Number(window.localStorage.getItem(STORAGE_KEY)) || null;
  } catch {
    stored = null;
  }
  if (stored !== null && pipelines.some((pipeline) => pipeline.id === stored)) return stored;
  return (pipelines.find((pipeline) => pipeline.ready) ?? pipelines[0])?.id ?? null;
}
