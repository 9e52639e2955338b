import type { CatalogComponent, ComponentRef } from "../../api/components";
import { render, type Vocabulary } from "../../catalog/representation";
import { COMPONENT_KIND, COMPONENT_MULTIPLE, defaultParams, type Params } from "../SchemaForm/schemaUi";
import type { RJSFSchema } from "@rjsf/utils";
import { formatPath, parsePath, type Segment } from "./paths";

/**
 * A node's place in the tree, in the server's notation: `""` is the root,
 * `params.retriever.params.children[1]` a child. Error paths start with it.
 */
export type NodePath = string;

/** A param of a node whose components are edited in the tree rather than in the node's form. */
export interface Slot {
  name: string;
  kind: string;
  title: string;
  /** A list of children (`x-component-multiple`) rather than one component. */
  multiple: boolean;
  /** One component may be left unset. */
  nullable: boolean;
  min: number | null;
  max: number | null;
}

/** The strategy is the root of every pipeline. */
export const ROOT_KIND = "strategy";

/**
 * The kinds drawn as tree nodes: those that form trees (a composite's own kind and its
 * children's) and strategies. Other nested components (models, prompts) stay in the forms.
 */
export function treeKinds(catalog: readonly CatalogComponent[]): Set<string> {
  const kinds = new Set([ROOT_KIND]);
  for (const component of catalog) {
    if (!component.composite) continue;
    kinds.add(component.kind);
    if (component.child_kind) kinds.add(component.child_kind);
  }
  return kinds;
}

/** The slots of a component that the tree edits, in the order of its schema. */
export function slotsOf(schema: RJSFSchema, kinds: ReadonlySet<string>): Slot[] {
  const slots: Slot[] = [];
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    if (typeof raw !== "object") continue;
    const property = raw as RJSFSchema;
    const kind = property[COMPONENT_KIND];
    if (typeof kind !== "string") continue;
    const multiple = property[COMPONENT_MULTIPLE] === true;
    if (!multiple && !kinds.has(kind)) continue;
    const nullable = Array.isArray(property.anyOf) && property.anyOf.some((option) => (option as RJSFSchema).type === "null");
    slots.push({
      name,
      kind,
      title: property.title ?? name,
      multiple,
      nullable,
      min: multiple ? (property.minItems ?? null) : null,
      max: multiple ? (property.maxItems ?? null) : null,
    });
  }
  return slots;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isRef(value: unknown): value is ComponentRef {
  return isRecord(value) && typeof value.component === "string";
}

function getIn(value: unknown, segments: readonly Segment[]): unknown {
  let current = value;
  for (const segment of segments) {
    if (typeof segment === "number" ? !Array.isArray(current) : !isRecord(current)) return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/** A copy of `value` with what is at `segments` replaced by `update(old)`; missing objects are created. */
function updateIn(value: unknown, segments: readonly Segment[], update: (old: unknown) => unknown): unknown {
  if (segments.length === 0) return update(value);
  const [head, ...rest] = segments as [Segment, ...Segment[]];
  if (typeof head === "number") {
    const list = Array.isArray(value) ? [...value] : [];
    list[head] = updateIn(list[head], rest, update);
    return list;
  }
  const record = isRecord(value) ? { ...value } : {};
  record[head] = updateIn(record[head], rest, update);
  return record;
}

export function getNode(root: ComponentRef, path: NodePath): ComponentRef | null {
  const node = getIn(root, parsePath(path));
  return isRef(node) ? node : null;
}

export function childPath(parent: NodePath, slot: string, index?: number): NodePath {
  const segments: Segment[] = [...parsePath(parent), "params", slot];
  if (index !== undefined) segments.push(index);
  return formatPath(segments);
}

/** Where a node hangs: its parent, the slot and (in a list) its index; null for the root. */
export function locate(path: NodePath): { parent: NodePath; slot: string; index: number | null } | null {
  const segments = parsePath(path);
  const last = segments[segments.length - 1];
  const index = typeof last === "number" ? last : null;
  const slotAt = index === null ? segments.length - 1 : segments.length - 2;
  if (slotAt < 1 || segments[slotAt - 1] !== "params") return null;
  return { parent: formatPath(segments.slice(0, slotAt - 1)), slot: String(segments[slotAt]), index };
}

export function childrenOf(node: ComponentRef, slot: string): ComponentRef[] {
  const value = node.params?.[slot];
  return Array.isArray(value) ? value.filter(isRef) : [];
}

export function setParams(root: ComponentRef, path: NodePath, params: Params): ComponentRef {
  return updateIn(root, [...parsePath(path), "params"], () => params) as ComponentRef;
}

/** Put `node` at `path` (null empties a one-component slot). */
export function replaceNode(root: ComponentRef, path: NodePath, node: ComponentRef | null): ComponentRef {
  if (path === "") return node ?? root;
  return updateIn(root, parsePath(path), () => node) as ComponentRef;
}

function updateList(root: ComponentRef, parent: NodePath, slot: string, change: (list: ComponentRef[]) => ComponentRef[]) {
  return updateIn(root, [...parsePath(parent), "params", slot], (old) =>
    change(Array.isArray(old) ? [...(old as ComponentRef[])] : []),
  ) as ComponentRef;
}

/** Add `child` to a list slot (at `index`, or last); returns the tree and the child's path. */
export function insertChild(
  root: ComponentRef,
  parent: NodePath,
  slot: string,
  child: ComponentRef,
  index?: number,
): { tree: ComponentRef; path: NodePath } {
  const length = childrenOf(getNode(root, parent) ?? { component: "" }, slot).length;
  const at = index === undefined ? length : Math.max(0, Math.min(index, length));
  const tree = updateList(root, parent, slot, (list) => {
    list.splice(at, 0, child);
    return list;
  });
  return { tree, path: childPath(parent, slot, at) };
}

/** Remove the node at `path`: spliced out of a list, or a one-component slot emptied. */
export function removeNode(root: ComponentRef, path: NodePath): ComponentRef {
  const place = locate(path);
  if (!place) return root;
  if (place.index === null) return replaceNode(root, path, null);
  const at = place.index;
  return updateList(root, place.parent, place.slot, (list) => list.filter((_, index) => index !== at));
}

/** Move a child within its list to `to`; returns the tree and the node's new path. */
export function moveNode(root: ComponentRef, path: NodePath, to: number): { tree: ComponentRef; path: NodePath } {
  const place = locate(path);
  if (!place || place.index === null) return { tree: root, path };
  const from = place.index;
  const length = childrenOf(getNode(root, place.parent)!, place.slot).length;
  const target = Math.max(0, Math.min(to, length - 1));
  if (target === from) return { tree: root, path };
  const tree = updateList(root, place.parent, place.slot, (list) => {
    const [moved] = list.splice(from, 1);
    list.splice(target, 0, moved!);
    return list;
  });
  return { tree, path: childPath(place.parent, place.slot, target) };
}

/** Put the node at `path` inside `wrapper` (a composite), as its only child. */
export function wrapNode(root: ComponentRef, path: NodePath, wrapper: ComponentRef, slot: string): ComponentRef {
  const node = getNode(root, path);
  if (!node) return root;
  return replaceNode(root, path, { ...wrapper, params: { ...wrapper.params, [slot]: [node] } });
}

/**
 * Replace the composite at `path` by its children: spliced into the parent's list, or, in a
 * one-component slot (or at the root), only when there is exactly one child.
 */
export function unwrapNode(root: ComponentRef, path: NodePath, slot: string): ComponentRef | null {
  const node = getNode(root, path);
  if (!node) return null;
  const children = childrenOf(node, slot);
  const place = locate(path);
  if (place && place.index !== null && children.length > 0) {
    const at = place.index;
    return updateList(root, place.parent, place.slot, (list) => {
      list.splice(at, 1, ...children);
      return list;
    });
  }
  return children.length === 1 ? replaceNode(root, path, children[0]!) : null;
}

/** Every component reference in the tree, nested form components included. */
export function componentNames(value: unknown, names = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((item) => componentNames(item, names));
  else if (isRecord(value)) {
    if (typeof value.component === "string") names.add(value.component);
    Object.values(value).forEach((item) => componentNames(item, names));
  }
  return names;
}

/**
 * `tree` with the component params the server filled in (defaults that the schemas cannot show,
 * such as a strategy's response synthesizer) where the tree has none; nothing the user set changes.
 */
export function fillMissingComponents(tree: unknown, normalised: unknown): unknown {
  if (Array.isArray(tree) && Array.isArray(normalised) && tree.length === normalised.length) {
    const items = tree.map((item, index) => fillMissingComponents(item, normalised[index]));
    return items.every((item, index) => item === tree[index]) ? tree : items;
  }
  if (!isRef(tree) || !isRef(normalised) || tree.component !== normalised.component) return tree;
  const params: Params = { ...tree.params };
  let changed = false;
  for (const [name, value] of Object.entries(normalised.params ?? {})) {
    const next = name in params ? fillMissingComponents(params[name], value) : isRef(value) ? value : params[name];
    if (next !== params[name]) {
      params[name] = next;
      changed = true;
    }
  }
  return changed ? { ...tree, params } : tree;
}

/** Whether a list slot holding `count` children takes another. */
export function canAddChild(slot: Slot, count: number): boolean {
  return slot.max === null || count < slot.max;
}

/** Whether a list slot holding `count` children needs more to be valid. */
export function needsMoreChildren(slot: Slot, count: number): boolean {
  return slot.min !== null && count < slot.min;
}

/** The path of every node the tree draws, root first; `slotsFor` gives a component's slots once known. */
export function treeNodePaths(root: ComponentRef, slotsFor: (component: string) => readonly Slot[] | undefined): NodePath[] {
  const paths: NodePath[] = [];
  const visit = (node: ComponentRef, path: NodePath) => {
    paths.push(path);
    for (const slot of slotsFor(node.component) ?? []) {
      const value = node.params?.[slot.name];
      if (slot.multiple) childrenOf(node, slot.name).forEach((child, index) => visit(child, childPath(path, slot.name, index)));
      else if (isRef(value)) visit(value, childPath(path, slot.name));
    }
  };
  visit(root, "");
  return paths;
}

/** A new node of a component: its schema's defaults, and empty children lists. */
export function freshNode(name: string, schema: RJSFSchema, kinds: ReadonlySet<string>, defaults: Params): ComponentRef {
  const lists = Object.fromEntries(slotsOf(schema, kinds).filter((slot) => slot.multiple).map((slot) => [slot.name, []]));
  return { component: name, params: { ...defaults, ...lists } };
}

/** The node's config with its schema's defaults under it, as the server would see it. */
export function withDefaults(node: ComponentRef, schema: RJSFSchema | undefined): ComponentRef {
  return schema ? { ...node, params: { ...defaultParams(schema), ...node.params } } : node;
}

/**
 * What a node's card says: its representation over its params and their defaults, in the
 * vocabulary's words; its description when the template shows nothing yet (or there is none).
 */
export function nodeRepresentation(
  node: ComponentRef,
  entry: CatalogComponent | undefined,
  schema: RJSFSchema | undefined,
  vocabulary: Vocabulary,
): string {
  const template = entry?.representation;
  return (template && render(template, withDefaults(node, schema), vocabulary)) || entry?.description || "";
}
