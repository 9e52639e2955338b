import { ArrowLeft, CircleCheck, CircleAlert, Copy, Download, LoaderCircle, Save } from "lucide-react";
import { useCallback, useEffect, useId, useMemo, useReducer, useRef, type Dispatch } from "react";
import { useTranslation } from "react-i18next";

import { pathErrorsOf, validateTree, type ComponentRef, type PathError } from "../../api/components";
import { fetchKnowledgeBase, fetchKnowledgeBases, type KnowledgeBase } from "../../api/knowledge";
import {
  createPipeline,
  duplicatePipeline,
  exportPipeline,
  fetchPipeline,
  fetchPipelineTemplates,
  updatePipeline,
} from "../../api/pipelines";
import { useCatalog, useComponentDetails } from "../../catalog/CatalogProvider";
import { placeErrors } from "../../components/RetrieverTree/errors";
import { formatPath, parsePath } from "../../components/RetrieverTree/paths";
import { RetrieverTree } from "../../components/RetrieverTree/RetrieverTree";
import {
  ROOT_KIND,
  componentNames,
  getNode,
  slotsOf,
  treeKinds,
  treeNodePaths,
  type NodePath,
} from "../../components/RetrieverTree/tree";
import { ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { downloadJson, fileSafe } from "../../lib/download";
import { useLoad } from "../../lib/useLoad";
import { Link, useLocation, useNavigate, useUnsavedChangesGuard } from "../../router/Router";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { draftOf, editorReducer, fieldName, initialState, isDirty, knownInvalid, type Draft, type EditorAction, type EditorState } from "./editorState";
import { DEFAULT_STRATEGY, emptyStrategy, readNewPipelineChoice, templateStrategy } from "./newPipeline";
import { NodeInspector } from "./NodeInspector";
import { QualityPanel } from "./QualityPanel";
import { ReadinessChip } from "./ReadinessChip";

const VALIDATE_AFTER_MS = 400;

interface Loaded {
  draft: Draft;
  pipeline: EditorState["pipeline"];
  knowledgeBases: KnowledgeBase[];
}

/** The builder: a saved pipeline (`id`) or a new one from the choices in the address. */
export function PipelineEditorPage({ id }: { id: number | null }) {
  const { t } = useTranslation();
  const catalog = useCatalog();
  const kinds = useMemo(() => treeKinds(catalog.list.status === "ready" ? catalog.list.components : []), [catalog.list]);
  useDocumentTitle(t("builder.title"));

  if (catalog.list.status === "loading") return <Loading label={t("builder.loading")} />;
  if (catalog.list.status === "error") {
    return <ErrorNotice title={t("builder.catalogFailed")} message={catalog.list.message} onRetry={catalog.reload} />;
  }
  return <EditorLoader id={id} kinds={kinds} />;
}

function EditorLoader({ id, kinds }: { id: number | null; kinds: ReadonlySet<string> }) {
  const { t } = useTranslation();
  const { search } = useLocation();
  const { loadDetail } = useCatalog();

  /** The strategy with the server's defaults (its synthesizer…) and nothing in its tree. */
  const emptyPipeline = async (name: string, signal: AbortSignal) => {
    const [detail, normalised] = await Promise.all([
      loadDetail(name),
      validateTree({ component: name, params: {} }, ROOT_KIND, signal).then((result) => result.config ?? undefined),
    ]);
    return emptyStrategy(detail, kinds, normalised);
  };

  const { state: loaded, reload } = useLoad<Loaded>(
    async (signal) => {
      const knowledgeBases = await fetchKnowledgeBases(signal);
      if (id !== null) {
        const pipeline = await fetchPipeline(id, signal);
        // An evaluation corpus is not offered to new pipelines, but one already built on it keeps it.
        const own = knowledgeBases.some((base) => base.id === pipeline.knowledge_base)
          ? knowledgeBases
          : [...knowledgeBases, await fetchKnowledgeBase(pipeline.knowledge_base, signal)];
        return { draft: draftOf(pipeline), pipeline, knowledgeBases: own };
      }
      const choice = readNewPipelineChoice(search);
      const strategy = choice.template
        ? templateStrategy(await fetchPipelineTemplates(signal), choice.template)
        : await emptyPipeline(choice.strategy ?? DEFAULT_STRATEGY, signal);
      if (!strategy) throw new Error(t("builder.noTemplate"));
      const knowledgeBase = choice.knowledgeBase ?? knowledgeBases[0]?.id ?? null;
      return { draft: { name: choice.name, description: "", knowledgeBase, strategy }, pipeline: null, knowledgeBases };
    },
    [id],
  );

  if (loaded.status === "loading") return <Loading label={t("builder.loading")} />;
  if (loaded.status === "error") return <ErrorNotice title={t("builder.loadFailed")} message={loaded.message} onRetry={reload} />;
  return <Editor key={loaded.data.pipeline?.id ?? "new"} loaded={loaded.data} kinds={kinds} />;
}

function Editor({ loaded, kinds }: { loaded: Loaded; kinds: ReadonlySet<string> }) {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const { byName } = useCatalog();
  const [state, dispatch] = useReducer(editorReducer, undefined, () => initialState(loaded.draft, loaded.pipeline));
  const { draft } = state;
  const dirty = isDirty(state);
  useUnsavedChangesGuard(dirty);

  const names = useMemo(() => [...componentNames(draft.strategy)], [draft.strategy]);
  const { details } = useComponentDetails(names);
  const slotsFor = useCallback(
    (name: string) => {
      const detail = details.get(name);
      return detail ? slotsOf(detail.schema, kinds) : undefined;
    },
    [details, kinds],
  );
  const nodes = useMemo(() => treeNodePaths(draft.strategy, slotsFor), [draft.strategy, slotsFor]);
  const placed = useMemo(() => placeErrors(state.treeErrors, nodes), [state.treeErrors, nodes]);

  useServerValidation(draft.strategy, state.version, i18n.resolvedLanguage ?? i18n.language, dispatch);

  // A new pipeline's address becomes the saved one's, once the page no longer guards a draft.
  const pipelineId = state.pipeline?.id;
  useEffect(() => {
    if (pipelineId !== undefined && window.location.pathname !== `/pipelines/${pipelineId}`) {
      navigate(`/pipelines/${pipelineId}`, { replace: true });
    }
  }, [pipelineId, navigate]);

  // The last "Not saved" toast: a later save (refused or not) makes it untrue.
  const refusal = useRef<number | null>(null);
  const canvas = useRef<HTMLDivElement>(null);
  const focusNode = useRef<NodePath | null>(null);
  useEffect(() => {
    if (focusNode.current === null) return;
    canvas.current?.querySelector<HTMLElement>(`[data-node-path="${CSS.escape(focusNode.current)}"]`)?.focus();
    focusNode.current = null;
  });

  const refuse = (title: string, error?: unknown) => {
    if (refusal.current !== null) toast.dismiss(refusal.current);
    refusal.current = toast.error(title, error);
  };

  /** Select and focus the component the first error is about. */
  const showFirst = (errors: readonly PathError[], prefix: readonly string[]) => {
    const [first] = placeErrors(errors, nodes, prefix).byNode.keys();
    if (first === undefined) return;
    dispatch({ type: "select", path: first });
    focusNode.current = first;
  };

  const save = async () => {
    if (draft.knowledgeBase === null) {
      dispatch({ type: "rejected", errors: [{ path: "knowledge_base", message: t("builder.knowledgeBaseRequired"), code: "required" }] });
      return;
    }
    // The server would refuse what the live check already refused: say so without asking it.
    if (knownInvalid(state)) {
      dispatch({ type: "blocked" });
      showFirst(state.treeErrors, []);
      refuse(t("builder.saveInvalid", { count: state.treeErrors.length }));
      return;
    }
    dispatch({ type: "saving" });
    const version = state.version;
    const input = { name: draft.name, description: draft.description, knowledge_base: draft.knowledgeBase, strategy: draft.strategy };
    try {
      const pipeline = state.pipeline ? await updatePipeline(state.pipeline.id, input) : await createPipeline(input);
      dispatch({ type: "saved", pipeline, version });
      if (refusal.current !== null) toast.dismiss(refusal.current);
      refusal.current = null;
      toast.success(t("builder.saved", { name: pipeline.name }));
    } catch (error) {
      const errors = pathErrorsOf(error) ?? [];
      dispatch({ type: "rejected", errors });
      showFirst(errors, ["strategy"]);
      refuse(errors.length ? t("builder.saveInvalid", { count: errors.length }) : t("builder.saveFailed"), errors.length ? undefined : error);
    }
  };

  const saveRef = useRef(save);
  saveRef.current = save;
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
        event.preventDefault();
        void saveRef.current();
      }
    };
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, []);

  const duplicate = async () => {
    if (!state.pipeline) return;
    try {
      const copy = await duplicatePipeline(state.pipeline.id);
      toast.success(t("builder.duplicated", { name: copy.name }));
      navigate(`/pipelines/${copy.id}`);
    } catch (error) {
      toast.error(t("builder.duplicateFailed"), error);
    }
  };

  const exportJson = async () => {
    if (!state.pipeline) return;
    try {
      const document = await exportPipeline(state.pipeline.id);
      downloadJson(document, `${fileSafe(state.pipeline.name, "pipeline")}.json`);
    } catch (error) {
      toast.error(t("builder.exportFailed"), error);
    }
  };

  const selected = getNode(draft.strategy, state.selected) ?? draft.strategy;
  const selectedPath = getNode(draft.strategy, state.selected) ? state.selected : "";
  const fieldError = (key: keyof Draft) => state.fieldErrors.filter((error) => error.path.startsWith(fieldName(key))).map((error) => error.message);
  const otherErrors = state.fieldErrors.filter((error) => !["name", "description", "knowledge_base"].some((key) => error.path.startsWith(key)));

  return (
    <div className="editor">
      <header className="editor__bar">
        <Link to="/pipelines" className="back-link">
          <ArrowLeft aria-hidden="true" size={16} />
          {t("builder.back")}
        </Link>
        <TitleInput value={draft.name} errors={fieldError("name")} onChange={(name) => dispatch({ type: "edit", changes: { name } })} />
        <div className="editor__status">
          <ValidationChip state={state} count={state.treeErrors.length} />
          {dirty ? (
            <span className="chip chip--warning">{t("builder.unsaved")}</span>
          ) : (
            state.pipeline && <ReadinessChip ready={state.pipeline.ready} waitingFor={state.pipeline.waiting_for} />
          )}
        </div>
        <div className="editor__actions">
          <button type="button" className="button" onClick={duplicate} disabled={!state.pipeline || dirty}>
            <Copy aria-hidden="true" size={16} />
            {t("builder.duplicate")}
          </button>
          <button
            type="button"
            className="button"
            onClick={exportJson}
            disabled={!state.pipeline || dirty}
            title={dirty ? t("builder.saveFirst") : undefined}
          >
            <Download aria-hidden="true" size={16} />
            {t("builder.export")}
          </button>
          <button type="button" className="button button--primary" onClick={save} disabled={state.saving} aria-keyshortcuts="Control+S">
            {state.saving ? <LoaderCircle aria-hidden="true" className="spin" size={16} /> : <Save aria-hidden="true" size={16} />}
            {t("builder.save")}
          </button>
        </div>
      </header>

      <PipelineSettings
        draft={draft}
        knowledgeBases={loaded.knowledgeBases}
        knowledgeBaseErrors={fieldError("knowledgeBase")}
        descriptionErrors={fieldError("description")}
        dispatch={dispatch}
      />
      {otherErrors.length > 0 && (
        <div role="alert" className="notice notice--error notice--compact">
          <CircleAlert aria-hidden="true" className="notice__icon" size={18} />
          <ul className="plain-list">
            {otherErrors.map((error) => (
              <li key={error.path + error.message}>{error.path ? `${error.path}: ${error.message}` : error.message}</li>
            ))}
          </ul>
        </div>
      )}

      {state.showProblems && state.treeErrors.length > 0 && <TreeProblems errors={state.treeErrors} />}

      <QualityPanel
        pipelineId={state.pipeline?.id ?? null}
        knowledgeBaseId={draft.knowledgeBase}
        retriever={retrieverOf(draft.strategy)}
        saved={state.pipeline && state.pipeline.knowledge_base === draft.knowledgeBase ? retrieverOf(state.pipeline.strategy) : undefined}
        valid={state.treeErrors.length === 0}
      />

      <div className="editor__body">
        <div className="editor__canvas" ref={canvas}>
          <RetrieverTree
            root={draft.strategy}
            selected={selectedPath}
            onSelect={(path) => dispatch({ type: "select", path })}
            onChange={(strategy, select) => dispatch({ type: "restructure", strategy, select })}
            errors={placed.byNode}
            kinds={kinds}
            details={details}
            label={t("builder.treeLabel")}
          />
        </div>
        <aside className="editor__inspector" aria-label={t("builder.inspectorLabel")}>
          <NodeInspector
            key={selectedPath}
            node={selected}
            entry={byName.get(selected.component)}
            detail={details.get(selected.component)}
            slots={slotsFor(selected.component) ?? []}
            errors={placed.byNode.get(selectedPath) ?? []}
            knowledgeBaseId={draft.knowledgeBase}
            onParams={(params, edited) =>
              dispatch({ type: "params", path: selectedPath, params, slots: (slotsFor(selected.component) ?? []).map((slot) => slot.name), nodes, edited })
            }
          />
        </aside>
      </div>
    </div>
  );
}

/** The tree's problems after a refused save, each where it is in the pipeline's JSON (as an export or import shows it). */
function TreeProblems({ errors }: { errors: readonly PathError[] }) {
  const { t } = useTranslation();
  return (
    <div role="alert" className="notice notice--error notice--compact">
      <CircleAlert aria-hidden="true" className="notice__icon" size={18} />
      <div>
        <p className="notice__title">{t("builder.problemsTitle", { count: errors.length })}</p>
        <ul className="error-paths">
          {errors.map((error) => (
            <li key={error.path + error.message}>
              <code>{formatPath(["strategy", ...parsePath(error.path)])}</code> {error.message}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}

/** Ask the server about the tree shortly after each change (availability, limits, cross-field rules). */
function useServerValidation(strategy: ComponentRef, version: number, language: string, dispatch: Dispatch<EditorAction>) {
  useEffect(() => {
    const controller = new AbortController();
    const timer = window.setTimeout(() => {
      dispatch({ type: "validating" });
      validateTree(strategy, ROOT_KIND, controller.signal).then(
        (result) => dispatch({ type: "validated", version, valid: result.valid, errors: result.errors, config: result.config }),
        () => {
          if (!controller.signal.aborted) dispatch({ type: "validationUnavailable", version });
        },
      );
    }, VALIDATE_AFTER_MS);
    return () => {
      window.clearTimeout(timer);
      controller.abort();
    };
  }, [strategy, version, language, dispatch]);
}

function TitleInput({ value, errors, onChange }: { value: string; errors: string[]; onChange: (value: string) => void }) {
  const { t } = useTranslation();
  const id = useId();
  return (
    <div className="editor__title">
      <label htmlFor={id} className="visually-hidden">
        {t("builder.name")}
      </label>
      <input
        id={id}
        className={`title-input${errors.length ? " is-invalid" : ""}`}
        value={value}
        placeholder={t("builder.namePlaceholder")}
        aria-invalid={errors.length > 0 || undefined}
        aria-describedby={errors.length ? `${id}-errors` : undefined}
        onChange={(event) => onChange(event.target.value)}
      />
      {errors.length > 0 && (
        <p id={`${id}-errors`} className="form-error">
          {errors.join(" ")}
        </p>
      )}
    </div>
  );
}

function PipelineSettings({
  draft,
  knowledgeBases,
  knowledgeBaseErrors,
  descriptionErrors,
  dispatch,
}: {
  draft: Draft;
  knowledgeBases: KnowledgeBase[];
  knowledgeBaseErrors: string[];
  descriptionErrors: string[];
  dispatch: Dispatch<EditorAction>;
}) {
  const { t } = useTranslation();
  const baseId = useId();
  const descriptionId = useId();
  return (
    <div className="editor__settings">
      <div className="field field--inline">
        <label htmlFor={baseId} className="field__label">
          {t("builder.knowledgeBase")}
        </label>
        <select
          id={baseId}
          className="input"
          value={draft.knowledgeBase ?? ""}
          aria-invalid={knowledgeBaseErrors.length > 0 || undefined}
          onChange={(event) => dispatch({ type: "edit", changes: { knowledgeBase: Number(event.target.value) || null } })}
        >
          {draft.knowledgeBase === null && <option value="">{t("builder.chooseKnowledgeBase")}</option>}
          {knowledgeBases.map((base) => (
            <option key={base.id} value={base.id}>
              {base.name}
            </option>
          ))}
        </select>
        {knowledgeBaseErrors.length > 0 && <p className="form-error">{knowledgeBaseErrors.join(" ")}</p>}
        {knowledgeBases.length === 0 && (
          <p className="form-field__hint">
            <Link to="/knowledge-bases">{t("builder.createKnowledgeBaseFirst")}</Link>
          </p>
        )}
      </div>
      <div className="field field--grow">
        <label htmlFor={descriptionId} className="field__label">
          {t("builder.description")}
        </label>
        <input
          id={descriptionId}
          className="input"
          value={draft.description}
          placeholder={t("builder.descriptionPlaceholder")}
          onChange={(event) => dispatch({ type: "edit", changes: { description: event.target.value } })}
        />
        {descriptionErrors.length > 0 && <p className="form-error">{descriptionErrors.join(" ")}</p>}
      </div>
    </div>
  );
}

function ValidationChip({ state, count }: { state: EditorState; count: number }) {
  const { t } = useTranslation();
  switch (state.validation) {
    case "checking":
      return (
        <span className="chip" role="status">
          <LoaderCircle aria-hidden="true" className="spin" size={13} />
          {t("builder.checking")}
        </span>
      );
    case "valid":
      return (
        <span className="chip chip--accent" role="status">
          <CircleCheck aria-hidden="true" size={13} />
          {t("builder.valid")}
        </span>
      );
    case "invalid":
      return (
        <span className="chip chip--danger" role="status">
          <CircleAlert aria-hidden="true" size={13} />
          {t("builder.problems", { count })}
        </span>
      );
    case "unavailable":
      return <span className="chip">{t("builder.validationUnavailable")}</span>;
    default:
      return null;
  }
}

/** The retriever tree in a strategy's retriever slot, if it has one. */
function retrieverOf(strategy: ComponentRef): ComponentRef | undefined {
  const retriever = (strategy.params as { retriever?: unknown } | undefined)?.retriever;
  return retriever && typeof retriever === "object" ? (retriever as ComponentRef) : undefined;
}
