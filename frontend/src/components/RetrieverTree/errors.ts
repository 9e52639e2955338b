import type { PathError } from "../../api/components";
import type { ErrorAction } from "../../api/models";
import type { FieldError } from "../SchemaForm/errors";
import { parsePath, startsWith, type Segment } from "./paths";
import type { NodePath } from "./tree";

/** An error placed on a tree node; `field` is a path inside its params, empty for the node itself. */
export interface NodeError {
  node: NodePath;
  field: Segment[];
  message: string;
  code: string;
  /** What the user can do about it in the application (install the model it needs). */
  action?: ErrorAction;
}

export interface PlacedErrors {
  byNode: Map<NodePath, NodeError[]>;
  /** Errors outside the tree (a pipeline's name, an import's version). */
  other: PathError[];
}

/**
 * Put each error on the deepest tree node its path runs through. `prefix` is where the tree sits
 * in the request (`["strategy"]` for a pipeline, `["document", "strategy"]` for an import).
 */
export function placeErrors(errors: readonly PathError[], nodes: readonly NodePath[], prefix: readonly Segment[] = []): PlacedErrors {
  const candidates = nodes.map((node) => ({ node, segments: parsePath(node) })).sort((a, b) => b.segments.length - a.segments.length);
  const byNode = new Map<NodePath, NodeError[]>();
  const other: PathError[] = [];
  for (const error of errors) {
    const segments = parsePath(error.path);
    if (!startsWith(segments, prefix)) {
      other.push(error);
      continue;
    }
    const relative = segments.slice(prefix.length);
    const owner = candidates.find((candidate) => startsWith(relative, candidate.segments)) ?? { node: "", segments: [] };
    const rest = relative.slice(owner.segments.length);
    const field = rest[0] === "params" ? rest.slice(1) : [];
    const placed = { node: owner.node, field, message: error.message, code: error.code, action: error.action };
    byNode.set(owner.node, [...(byNode.get(owner.node) ?? []), placed]);
  }
  return { byNode, other };
}

export interface NodeProblems {
  /** About the node as a whole (e.g. "has no local copy"), or a param the form does not show. */
  node: string[];
  /** About a slot the tree edits (e.g. "takes at least 2 child components"), by slot name. */
  slots: Map<string, string[]>;
  /** On a field of the node's form. */
  form: FieldError[];
  /** What the user can do about the node's problems (a link to install a missing model). */
  actions: ErrorAction[];
}

/** Sort a node's errors by where they are shown. */
export function sortNodeErrors(errors: readonly NodeError[], slotNames: readonly string[], formFields: readonly string[]): NodeProblems {
  const problems: NodeProblems = { node: [], slots: new Map(), form: [], actions: [] };
  for (const { field, message, action } of errors) {
    const head = field[0];
    if (typeof head === "string" && slotNames.includes(head)) {
      problems.slots.set(head, [...(problems.slots.get(head) ?? []), message]);
    } else if (typeof head === "string" && formFields.includes(head)) {
      problems.form.push({ path: field, message });
    } else {
      problems.node.push(message);
      if (action) problems.actions.push(action);
    }
  }
  return problems;
}
