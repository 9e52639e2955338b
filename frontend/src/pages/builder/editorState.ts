import type { ComponentRef, PathError } from "../../api/components";
import type { Pipeline } from "../../api/pipelines";
import { placeErrors } from "../../components/RetrieverTree/errors";
import { formatPath, parsePath } from "../../components/RetrieverTree/paths";
import { fillMissingComponents, getNode, setParams, type NodePath } from "../../components/RetrieverTree/tree";
import type { Params } from "../../components/SchemaForm/schemaUi";
import { deepEqual } from "../../lib/json";

/** What the user edits: the pipeline's fields and its strategy tree. */
export interface Draft {
  name: string;
  description: string;
  knowledgeBase: number | null;
  strategy: ComponentRef;
}

export type Validation = "idle" | "checking" | "valid" | "invalid" | "unavailable";

export interface EditorState {
  /** The saved pipeline; null for a new one. */
  pipeline: Pipeline | null;
  /** The draft as last saved (or as the template gave it), to tell unsaved changes. */
  saved: Draft | null;
  draft: Draft;
  selected: NodePath;
  /** Bumped by every edit of the strategy, so that late answers about older trees are ignored. */
  version: number;
  validation: Validation;
  /** The version the last verdict (`valid`/`invalid`/`unavailable`) is about. */
  checkedVersion: number | null;
  /** Problems in the tree, with paths relative to the strategy. */
  treeErrors: PathError[];
  /** Problems with the pipeline's own fields (name, knowledge base…). */
  fieldErrors: PathError[];
  saving: boolean;
  /** A save was refused (here or by the server): list the tree's problems until they are fixed. */
  showProblems: boolean;
}

export type EditorAction =
  | { type: "edit"; changes: Partial<Omit<Draft, "strategy">> }
  | { type: "select"; path: NodePath }
  /** The form of the node at `path` sent `params`; its `slots` (child components) are the tree's, not the form's. */
  | { type: "params"; path: NodePath; params: Params; slots: string[]; nodes: NodePath[]; edited: boolean }
  | { type: "restructure"; strategy: ComponentRef; select: NodePath }
  | { type: "validating" }
  | { type: "validated"; version: number; valid: boolean; errors: PathError[]; config?: ComponentRef | null }
  | { type: "validationUnavailable"; version: number }
  | { type: "blocked" }
  | { type: "saving" }
  | { type: "saved"; pipeline: Pipeline; version: number }
  | { type: "rejected"; errors: PathError[] };

export function draftOf(pipeline: Pipeline): Draft {
  return {
    name: pipeline.name,
    description: pipeline.description,
    knowledgeBase: pipeline.knowledge_base,
    strategy: pipeline.strategy,
  };
}

export function initialState(draft: Draft, pipeline: Pipeline | null): EditorState {
  return {
    pipeline,
    saved: pipeline ? draft : null,
    draft,
    selected: "",
    version: 0,
    validation: "idle",
    checkedVersion: null,
    treeErrors: [],
    fieldErrors: [],
    saving: false,
    showProblems: false,
  };
}

/** The live check has already found problems in the tree as it is now: saving it would be refused. */
export function knownInvalid(state: EditorState): boolean {
  return state.validation === "invalid" && state.checkedVersion === state.version && state.treeErrors.length > 0;
}

export function isDirty(state: EditorState): boolean {
  return state.saved === null || !deepEqual(state.saved, state.draft);
}

/** The part of a save's errors about the strategy, made relative to it. */
function strategyErrors(errors: readonly PathError[]): { tree: PathError[]; fields: PathError[] } {
  const tree: PathError[] = [];
  const fields: PathError[] = [];
  for (const error of errors) {
    const segments = parsePath(error.path);
    if (segments[0] === "strategy") tree.push({ ...error, path: formatPath(segments.slice(1)) });
    else fields.push(error);
  }
  return { tree, fields };
}

export function editorReducer(state: EditorState, action: EditorAction): EditorState {
  switch (action.type) {
    case "edit":
      return {
        ...state,
        draft: { ...state.draft, ...action.changes },
        fieldErrors: state.fieldErrors.filter((error) => !Object.keys(action.changes).some((key) => error.path.startsWith(fieldName(key)))),
      };
    case "select":
      return { ...state, selected: action.path };
    case "params": {
      // Applied to the tree as it is now: a form may speak after the tree changed under it (a
      // child added while its defaults were filled in), and its copy of the children is older.
      const node = getNode(state.draft.strategy, action.path);
      if (!node) return state;
      const current = (node.params ?? {}) as Params;
      const params = { ...action.params };
      for (const slot of action.slots) {
        if (slot in current) params[slot] = current[slot];
        else delete params[slot];
      }
      const strategy = setParams(state.draft.strategy, action.path, params);
      if (!action.edited) {
        // A form filled in its defaults: the same pipeline, so a saved one stays saved.
        const clean = state.saved !== null && deepEqual(state.saved, state.draft);
        const draft = { ...state.draft, strategy };
        return { ...state, draft, saved: clean ? draft : state.saved };
      }
      // The server's field errors on this node are stale now; its form validates what is typed.
      const treeErrors = state.treeErrors.filter((error) => {
        const placed = placeErrors([error], action.nodes).byNode.get(action.path)?.[0];
        return !placed || placed.field.length === 0;
      });
      return { ...state, draft: { ...state.draft, strategy }, version: state.version + 1, treeErrors };
    }
    case "restructure":
      return {
        ...state,
        draft: { ...state.draft, strategy: action.strategy },
        selected: action.select,
        version: state.version + 1,
        treeErrors: [],
      };
    case "validating":
      return { ...state, validation: "checking" };
    case "validated": {
      if (action.version !== state.version) return state;
      const strategy = action.config ? (fillMissingComponents(state.draft.strategy, action.config) as ComponentRef) : state.draft.strategy;
      return {
        ...state,
        draft: strategy === state.draft.strategy ? state.draft : { ...state.draft, strategy },
        // Before any edit, what the server fills in is what was saved: not a change.
        saved: state.version === 0 && state.saved ? { ...state.saved, strategy } : state.saved,
        validation: action.valid ? "valid" : "invalid",
        checkedVersion: action.version,
        treeErrors: action.errors,
      };
    }
    case "validationUnavailable":
      return action.version === state.version ? { ...state, validation: "unavailable", checkedVersion: action.version } : state;
    case "blocked":
      return { ...state, showProblems: true };
    case "saving":
      return { ...state, saving: true };
    case "saved": {
      const draft = draftOf(action.pipeline);
      const untouched = action.version === state.version;
      return {
        ...state,
        pipeline: action.pipeline,
        saved: draft,
        draft: untouched ? draft : state.draft,
        saving: false,
        treeErrors: [],
        fieldErrors: [],
        showProblems: false,
      };
    }
    case "rejected": {
      const { tree, fields } = strategyErrors(action.errors);
      return {
        ...state,
        saving: false,
        treeErrors: tree,
        fieldErrors: fields,
        validation: tree.length ? "invalid" : state.validation,
        // The server's refusal, not the live check's: the next save may still be tried (a
        // different knowledge base, say, can make the same tree acceptable).
        checkedVersion: tree.length ? null : state.checkedVersion,
        showProblems: tree.length > 0,
      };
    }
  }
}

/** The API's name for a draft field. */
export function fieldName(key: string): string {
  return key === "knowledgeBase" ? "knowledge_base" : key;
}
