import {
  ArrowDown,
  ArrowUp,
  CircleAlert,
  LoaderCircle,
  PackageOpen,
  Plus,
  Replace,
  SquareDashedBottomCode,
  Trash2,
} from "lucide-react";
import { useEffect, useMemo, useRef, useState, type DragEvent, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";

import type { CatalogComponent, ComponentDetail, ComponentRef } from "../../api/components";
import { useCatalog } from "../../catalog/CatalogProvider";
import { catalogVocabulary } from "../../catalog/representation";
import { childLimitLabel } from "../childLimits";
import { ComponentIcon } from "../ComponentIcon";
import { ComponentPicker } from "../ComponentPicker";
import { InstallModelLink } from "../InstallModelLink";
import { defaultParams } from "../SchemaForm/schemaUi";
import { useToast } from "../Toasts";
import { sortNodeErrors, type NodeError } from "./errors";
import {
  canAddChild,
  childPath,
  childrenOf,
  freshNode,
  getNode,
  insertChild,
  isRef,
  locate,
  moveNode,
  needsMoreChildren,
  nodeRepresentation,
  removeNode,
  replaceNode,
  slotsOf,
  unwrapNode,
  wrapNode,
  type NodePath,
  type Slot,
} from "./tree";

export interface RetrieverTreeProps {
  root: ComponentRef;
  selected: NodePath;
  onSelect: (path: NodePath) => void;
  /** A structural change; `select` is the node to select afterwards. */
  onChange: (tree: ComponentRef, select: NodePath) => void;
  errors: ReadonlyMap<NodePath, NodeError[]>;
  kinds: ReadonlySet<string>;
  details: ReadonlyMap<string, ComponentDetail>;
  label: string;
}

type Picking =
  | { mode: "add"; parent: NodePath; slot: Slot }
  | { mode: "wrap"; path: NodePath; kind: string }
  | { mode: "replace"; path: NodePath; kind: string; current: string };

/** The pipeline's components as nested cards: select, add, remove, reorder, wrap and unwrap. */
export function RetrieverTree(props: RetrieverTreeProps) {
  const { root, onChange, kinds, details, label } = props;
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const { list, byName, loadDetail } = useCatalog();
  const language = i18n.resolvedLanguage ?? i18n.language;
  const vocabulary = useMemo(() => catalogVocabulary(byName, language), [byName, language]);
  const [picking, setPicking] = useState<Picking | null>(null);
  const [dragging, setDragging] = useState<NodePath | null>(null);
  const container = useRef<HTMLDivElement>(null);
  const focusNext = useRef<NodePath | null>(null);

  useEffect(() => {
    if (focusNext.current === null) return;
    container.current?.querySelector<HTMLElement>(`[data-node-path="${CSS.escape(focusNext.current)}"]`)?.focus();
    focusNext.current = null;
  });

  const change = (tree: ComponentRef, select: NodePath, focus = false) => {
    if (focus) focusNext.current = select;
    onChange(tree, select);
  };

  const slotsFor = (name: string): Slot[] | undefined => {
    const detail = details.get(name);
    return detail ? slotsOf(detail.schema, kinds) : undefined;
  };

  const all = list.status === "ready" ? list.components : [];
  const candidates = (state: Picking): CatalogComponent[] => {
    if (state.mode === "add") return all.filter((component) => component.kind === state.slot.kind);
    if (state.mode === "wrap") {
      return all.filter((component) => component.composite && component.kind === state.kind && component.child_kind === state.kind);
    }
    return all.filter((component) => component.kind === state.kind && component.name !== state.current);
  };

  const pick = async (state: Picking, component: CatalogComponent) => {
    setPicking(null);
    let detail: ComponentDetail;
    try {
      detail = await loadDetail(component.name);
    } catch (error) {
      toast.error(t("componentRef.loadFailed"), error);
      return;
    }
    const fresh = freshNode(component.name, detail.schema, kinds, defaultParams(detail.schema));
    if (state.mode === "add") {
      if (state.slot.multiple) {
        const added = insertChild(root, state.parent, state.slot.name, fresh);
        change(added.tree, added.path, true);
      } else {
        const path = childPath(state.parent, state.slot.name);
        change(replaceNode(root, path, fresh), path, true);
      }
    } else if (state.mode === "wrap") {
      const slot = slotsOf(detail.schema, kinds).find((candidate) => candidate.multiple && candidate.kind === state.kind);
      if (slot) change(wrapNode(root, state.path, fresh, slot.name), state.path, true);
    } else {
      const old = getNode(root, state.path)?.params ?? {};
      const kept = Object.fromEntries(Object.entries(old).filter(([name]) => name in (detail.schema.properties ?? {})));
      change(replaceNode(root, state.path, { component: component.name, params: { ...fresh.params, ...kept } }), state.path, true);
    }
  };

  const move = (path: NodePath, step: number) => {
    const place = locate(path);
    if (!place || place.index === null) return;
    const moved = moveNode(root, path, place.index + step);
    change(moved.tree, moved.path, true);
  };

  const remove = (path: NodePath) => {
    const place = locate(path);
    if (!place) return;
    change(removeNode(root, path), place.parent, true);
  };

  const onCardKeyDown = (event: KeyboardEvent<HTMLElement>, path: NodePath) => {
    if (event.altKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
      event.preventDefault();
      move(path, event.key === "ArrowUp" ? -1 : 1);
    } else if (!event.altKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
      event.preventDefault();
      const cards = [...(container.current?.querySelectorAll<HTMLElement>(".tree-card__main") ?? [])];
      const at = cards.indexOf(event.currentTarget);
      cards[at + (event.key === "ArrowUp" ? -1 : 1)]?.focus();
    } else if (event.key === "Delete" && path !== "") {
      event.preventDefault();
      remove(path);
    }
  };

  const onDrop = (event: DragEvent, target: NodePath) => {
    event.preventDefault();
    const from = dragging;
    setDragging(null);
    const source = from === null ? null : locate(from);
    const destination = locate(target);
    if (!from || !source || !destination || destination.index === null || source.parent !== destination.parent || source.slot !== destination.slot) return;
    const moved = moveNode(root, from, destination.index);
    change(moved.tree, moved.path);
  };

  const sameList = (target: NodePath) => {
    if (dragging === null || dragging === target) return false;
    const source = locate(dragging);
    const destination = locate(target);
    return !!source && !!destination && source.parent === destination.parent && source.slot === destination.slot;
  };

  // Plain render functions, not components: a component declared here would be a new type on
  // every render, and React would remount the whole tree (losing focus) at each change.
  function renderNode(node: ComponentRef, path: NodePath) {
    const entry = byName.get(node.component);
    const detail = details.get(node.component);
    const slots = slotsFor(node.component);
    const place = locate(path);
    const siblings = place && place.index !== null ? childrenOf(getNode(root, place.parent)!, place.slot).length : 0;
    const nodeErrors = props.errors.get(path) ?? [];
    const formFields = detail ? Object.keys(detail.schema.properties ?? {}) : [];
    const problems = sortNodeErrors(nodeErrors, (slots ?? []).map((slot) => slot.name), formFields);
    const fieldProblems = problems.form.length;
    const selected = props.selected === path;
    const name = entry?.display_name ?? node.component;
    const representation = nodeRepresentation(node, entry, detail?.schema, vocabulary);
    const kind = entry?.kind ?? "";
    const wrappable = kinds.has(kind) && all.some((c) => c.composite && c.kind === kind && c.child_kind === kind);
    const childSlot = slots?.find((slot) => slot.multiple && slot.kind === kind);
    const unwrappable = !!childSlot && unwrapNode(root, path, childSlot.name) !== null;
    const inList = place !== null && place.index !== null;

    return (
      <li
        key={path}
        className={`tree-node${sameList(path) ? " is-drop-target" : ""}`}
        onDragOver={(event) => {
          if (sameList(path)) event.preventDefault();
        }}
        onDrop={(event) => onDrop(event, path)}
      >
        <div
          className={`tree-card${selected ? " is-selected" : ""}${nodeErrors.length ? " is-invalid" : ""}`}
          draggable={inList}
          onDragStart={(event) => {
            event.stopPropagation();
            event.dataTransfer.effectAllowed = "move";
            event.dataTransfer.setData("text/plain", path);
            setDragging(path);
          }}
          onDragEnd={() => setDragging(null)}
          data-testid="tree-card"
          data-component={node.component}
        >
          <button
            type="button"
            className="tree-card__main"
            data-node-path={path}
            aria-current={selected ? "true" : undefined}
            aria-keyshortcuts={inList ? "Alt+ArrowUp Alt+ArrowDown Delete" : path ? "Delete" : undefined}
            onClick={() => props.onSelect(path)}
            onKeyDown={(event) => onCardKeyDown(event, path)}
          >
            <span className="tree-card__icon">
              <ComponentIcon name={entry?.icon} size={18} />
            </span>
            <span className="tree-card__text">
              <span className="tree-card__name">{name}</span>
              <span className="tree-card__representation">{representation}</span>
            </span>
            {fieldProblems > 0 && (
              <span className="badge badge--danger">{t("tree.problems", { count: fieldProblems })}</span>
            )}
            {!detail && <LoaderCircle aria-label={t("tree.loading")} className="spin" size={16} />}
          </button>
          {problems.node.length > 0 && (
            <ul className="tree-card__errors">
              {problems.node.map((message) => (
                <li key={message}>
                  <CircleAlert aria-hidden="true" size={14} />
                  {message}
                </li>
              ))}
            </ul>
          )}
          {problems.actions.map((action) => (
            <InstallModelLink key={JSON.stringify(action)} action={action} />
          ))}
          <div className="tree-card__actions" role="group" aria-label={t("tree.actionsFor", { name })}>
            {inList && place.index !== null && (
              <>
                <IconAction label={t("tree.moveUp")} disabled={place.index === 0} onClick={() => move(path, -1)}>
                  <ArrowUp size={15} />
                </IconAction>
                <IconAction label={t("tree.moveDown")} disabled={place.index >= siblings - 1} onClick={() => move(path, 1)}>
                  <ArrowDown size={15} />
                </IconAction>
              </>
            )}
            {wrappable && (
              <IconAction label={t("tree.wrap")} onClick={() => setPicking({ mode: "wrap", path, kind })}>
                <SquareDashedBottomCode size={15} />
              </IconAction>
            )}
            {unwrappable && childSlot && (
              <IconAction label={t("tree.unwrap")} onClick={() => change(unwrapNode(root, path, childSlot.name)!, path, true)}>
                <PackageOpen size={15} />
              </IconAction>
            )}
            <IconAction label={t("tree.replace")} onClick={() => setPicking({ mode: "replace", path, kind, current: node.component })}>
              <Replace size={15} />
            </IconAction>
            {path !== "" && (
              <IconAction label={t("tree.remove")} onClick={() => remove(path)} danger>
                <Trash2 size={15} />
              </IconAction>
            )}
          </div>
        </div>
        {slots?.map((slot) => renderSlot(node, path, slot, problems.slots.get(slot.name) ?? []))}
      </li>
    );
  }

  function renderSlot(node: ComponentRef, path: NodePath, slot: Slot, messages: string[]) {
    const children = childrenOf(node, slot.name);
    const value = node.params?.[slot.name];
    const limits = slot.multiple ? childLimitLabel(t, slot.min, slot.max) : null;
    const short = slot.multiple && needsMoreChildren(slot, children.length);
    const full = slot.multiple && !canAddChild(slot, children.length);
    return (
      <div key={slot.name} className="tree-slot" role="group" aria-label={slot.title}>
        <div className="tree-slot__header">
          <span className="tree-slot__title">{slot.title}</span>
          {limits && <span className={`chip${short ? " chip--warning" : ""}`}>{limits}</span>}
          {slot.multiple && (
            <button
              type="button"
              className="button button--small"
              disabled={full}
              title={full ? t("tree.full", { count: slot.max ?? 0 }) : undefined}
              aria-label={t("tree.addTo", { slot: slot.title })}
              onClick={() => setPicking({ mode: "add", parent: path, slot })}
            >
              <Plus aria-hidden="true" size={14} />
              {t("tree.add")}
            </button>
          )}
        </div>
        {messages.length > 0 && (
          <ul className="tree-slot__errors">
            {messages.map((message) => (
              <li key={message}>{message}</li>
            ))}
          </ul>
        )}
        {slot.multiple ? (
          children.length > 0 && (
            <ul className="tree-list">
              {children.map((child, index) => renderNode(child, childPath(path, slot.name, index)))}
            </ul>
          )
        ) : isRef(value) ? (
          <ul className="tree-list">
            {renderNode(value, childPath(path, slot.name))}
          </ul>
        ) : (
          <button type="button" className="tree-slot__empty" onClick={() => setPicking({ mode: "add", parent: path, slot })}>
            <Plus aria-hidden="true" size={16} />
            {t("tree.choose", { slot: slot.title })}
          </button>
        )}
      </div>
    );
  }

  const pickerTitle = (state: Picking) =>
    state.mode === "add"
      ? t("tree.pickAdd", { slot: state.slot.title })
      : state.mode === "wrap"
        ? t("tree.pickWrap")
        : t("tree.pickReplace");

  return (
    <div className="tree" ref={container}>
      <ul className="tree-list tree-list--root" aria-label={label}>
        {renderNode(root, "")}
      </ul>
      <p className="tree__hint">{t("tree.keyboardHint")}</p>
      {picking && (
        <ComponentPicker
          title={pickerTitle(picking)}
          components={candidates(picking)}
          onPick={(component) => void pick(picking, component)}
          onClose={() => setPicking(null)}
        />
      )}
    </div>
  );
}

function IconAction({ label, onClick, disabled, danger, children }: { label: string; onClick: () => void; disabled?: boolean; danger?: boolean; children: React.ReactNode }) {
  return (
    <button
      type="button"
      className={`icon-button icon-button--small${danger ? " icon-button--danger" : ""}`}
      aria-label={label}
      title={label}
      disabled={disabled}
      onClick={onClick}
    >
      <span aria-hidden="true">{children}</span>
    </button>
  );
}
