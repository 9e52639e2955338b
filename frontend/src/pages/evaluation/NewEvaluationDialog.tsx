import { ChevronRight } from "lucide-react";
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { pathErrorsOf, type ComponentRef, type PathError } from "../../api/components";
import {
  createEvaluation,
  fetchPresets,
  type Evaluation,
  type EvaluationDataset,
  type EvaluationInput,
} from "../../api/evaluation";
import { fetchPipelines } from "../../api/pipelines";
import { InstallModelLink } from "../../components/InstallModelLink";
import { Modal } from "../../components/Modal";
import { formatPath, parsePath } from "../../components/RetrieverTree/paths";
import { ComponentRefEditor } from "../../components/SchemaForm/ComponentRefEditor";
import { toErrorSchema } from "../../components/SchemaForm/errors";
import { Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { Field, FieldErrors, NumberField, UnplacedErrors } from "../../components/fields";
import { parseOptionalInt } from "./format";

const SCALAR_FIELDS = ["dataset", "pipelines", "query_limit", "depth", "answer_queries", "seed"] as const;
/** Empty: each retriever at its own top_k, as the pipeline runs in the chat (the hint says so). */
const DEFAULT_DEPTH = "";

/** The server's errors, placed where the form shows them. */
export interface PlacedErrors {
  /** By field name: `dataset`, `pipelines` (the choice as a whole), `query_limit`… */
  fields: Record<string, string[]>;
  /** By preset name: `presets[i]` names the i-th preset sent. */
  presets: Record<string, string[]>;
  /** By pipeline id: `pipelines[i]` names the i-th pipeline sent. */
  pipelines: Record<number, string[]>;
  /** Under `judge`, relative to it (for the component editor). */
  judge: { path: (string | number)[]; message: string }[];
  unplaced: PathError[];
}

function push<K extends string | number>(target: Record<K, string[]>, key: K, message: string) {
  (target[key] ??= []).push(message);
}

/** Place `errors` (paths such as `presets[1].params.top_k`) against what was `sent`. */
export function placeErrors(errors: readonly PathError[], sent: Pick<EvaluationInput, "presets" | "pipelines">): PlacedErrors {
  const placed: PlacedErrors = { fields: {}, presets: {}, pipelines: {}, judge: [], unplaced: [] };
  for (const error of errors) {
    const segments = parsePath(error.path);
    const [head, index] = segments;
    // A nested path (inside a preset's tree) keeps its tail, so the message says where.
    const tail = segments.length > 2 ? `${formatPath(segments.slice(2))}: ` : "";
    if (head === "presets" && typeof index === "number" && sent.presets[index] !== undefined) {
      push(placed.presets, sent.presets[index]!, tail + error.message);
    } else if (head === "pipelines" && typeof index === "number" && sent.pipelines[index] !== undefined) {
      push(placed.pipelines, sent.pipelines[index]!, tail + error.message);
    } else if (head === "judge") {
      placed.judge.push({ path: segments.slice(1), message: error.message });
    } else if (segments.length === 1 && (SCALAR_FIELDS as readonly string[]).includes(String(head))) {
      push(placed.fields, String(head), error.message);
    } else {
      placed.unplaced.push(error);
    }
  }
  return placed;
}

const NO_ERRORS = placeErrors([], { presets: [], pipelines: [] });

interface NewEvaluationDialogProps {
  datasets: readonly EvaluationDataset[];
  /** The dataset to start with. */
  initialDataset?: number;
  onCreated: (evaluation: Evaluation) => void;
  onClose: () => void;
}

/** Choose a ready dataset, the presets and saved pipelines to run on it, and how; then start it. */
export function NewEvaluationDialog({ datasets, initialDataset, onCreated, onClose }: NewEvaluationDialogProps) {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const choices = useLoad(
    async (signal) => {
      const [presets, pipelines] = await Promise.all([fetchPresets(signal), fetchPipelines(signal)]);
      return { presets, pipelines };
    },
    [i18n.resolvedLanguage],
  );
  const readyDatasets = datasets.filter((dataset) => dataset.status === "ready");
  const [dataset, setDataset] = useState<number | "">(initialDataset ?? (readyDatasets.length === 1 ? readyDatasets[0]!.id : ""));
  const [presets, setPresets] = useState<string[]>([]);
  const [pipelines, setPipelines] = useState<number[]>([]);
  const [queryLimit, setQueryLimit] = useState("");
  const [depth, setDepth] = useState(DEFAULT_DEPTH);
  const [answerQueries, setAnswerQueries] = useState("0");
  const [judge, setJudge] = useState<ComponentRef | null>(null);
  const [seed, setSeed] = useState("0");
  const [advanced, setAdvanced] = useState(false);
  const [errors, setErrors] = useState<PlacedErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const ids = {
    dataset: useId(), queryLimit: useId(), depth: useId(), answerQueries: useId(), judge: useId(), seed: useId(),
    advanced: useId(), presets: useId(), pipelines: useId(),
  };

  const chosen = datasets.find((item) => item.id === dataset);
  const toggle = <T,>(list: T[], value: T, on: boolean) => (on ? [...list, value] : list.filter((item) => item !== value));
  const fieldErrors = (field: string) => errors.fields[field] ?? [];

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    if (dataset === "" || busy) return;
    const input: EvaluationInput = {
      dataset,
      pipelines,
      presets,
      query_limit: parseOptionalInt(queryLimit),
      depth: parseOptionalInt(depth),
      answer_queries: parseOptionalInt(answerQueries) ?? 0,
      judge,
      seed: parseOptionalInt(seed) ?? 0,
    };
    setBusy(true);
    setErrors(NO_ERRORS);
    try {
      onCreated(await createEvaluation(input));
    } catch (error) {
      const list = pathErrorsOf(error);
      if (list) {
        const placed = placeErrors(list, input);
        setErrors(placed);
        if (placed.judge.length || placed.fields.seed) setAdvanced(true);
      } else {
        toast.error(t("evaluation.new.failed"), error);
      }
      setBusy(false);
    }
  };

  return (
    <Modal
      title={t("evaluation.new.title")}
      onClose={onClose}
      size="large"
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t("common.cancel")}
          </button>
          <button type="submit" form="evaluation-form" className="button button--primary" disabled={busy || dataset === ""}>
            {t("evaluation.new.start")}
          </button>
        </>
      }
    >
      <form id="evaluation-form" className="stack" onSubmit={submit} noValidate>
        <Field id={ids.dataset} label={t("evaluation.new.dataset")} errors={fieldErrors("dataset")} hint={readyDatasets.length === 0 ? t("evaluation.new.noReadyDataset") : undefined}>
          {(describedBy, invalid) => (
            <select
              id={ids.dataset}
              className="input"
              value={dataset}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              onChange={(event) => setDataset(event.target.value === "" ? "" : Number(event.target.value))}
            >
              <option value="">{t("evaluation.new.chooseDataset")}</option>
              {datasets.map((item) => (
                <option key={item.id} value={item.id} disabled={item.status !== "ready"}>
                  {item.status === "ready"
                    ? t("evaluation.new.datasetOption", { name: item.name, count: item.query_count })
                    : t("evaluation.new.datasetNotReady", { name: item.name, status: t(`evaluation.datasetStatus.${item.status}`) })}
                </option>
              ))}
            </select>
          )}
        </Field>

        {choices.state.status === "loading" && <Loading label={t("evaluation.new.loadingChoices")} />}
        {choices.state.status === "error" && <p className="form-error">{choices.state.message}</p>}
        {choices.state.status === "ready" && (
          <div className="evaluation-choices">
            <fieldset className="choice-group" aria-describedby={`${ids.presets}-hint`}>
              <legend className="field__label">{t("evaluation.new.presets")}</legend>
              <p id={`${ids.presets}-hint`} className="form-field__hint">
                {t("evaluation.new.presetsHint")}
              </p>
              {choices.state.data.presets.map((preset) => (
                <div key={preset.name} className="choice-option">
                  <label className="choice">
                    <input
                      type="checkbox"
                      checked={presets.includes(preset.name)}
                      disabled={!preset.available}
                      aria-invalid={errors.presets[preset.name] ? true : undefined}
                      onChange={(event) => setPresets((list) => toggle(list, preset.name, event.target.checked))}
                    />
                    <span className="choice__text">
                      <span className="choice__name">{preset.display_name}</span>
                      <span className="choice__description">{preset.available ? preset.description : preset.unavailable_reason}</span>
                      {!preset.available && <InstallModelLink action={preset.unavailable_action} />}
                    </span>
                  </label>
                  <FieldErrors messages={errors.presets[preset.name] ?? []} />
                </div>
              ))}
            </fieldset>
            <fieldset className="choice-group" aria-describedby={`${ids.pipelines}-hint`}>
              <legend className="field__label">{t("evaluation.new.pipelines")}</legend>
              <p id={`${ids.pipelines}-hint`} className="form-field__hint">
                {choices.state.data.pipelines.length ? t("evaluation.new.pipelinesHint") : t("evaluation.new.noPipelines")}
              </p>
              {choices.state.data.pipelines.map((pipeline) => (
                <div key={pipeline.id} className="choice-option">
                  <label className="choice">
                    <input
                      type="checkbox"
                      checked={pipelines.includes(pipeline.id)}
                      aria-invalid={errors.pipelines[pipeline.id] ? true : undefined}
                      onChange={(event) => setPipelines((list) => toggle(list, pipeline.id, event.target.checked))}
                    />
                    <span className="choice__text">
                      <span className="choice__name">{pipeline.name}</span>
                      <span className="choice__description">{t("evaluation.new.pipelineBase", { name: pipeline.knowledge_base_name })}</span>
                    </span>
                  </label>
                  <FieldErrors messages={errors.pipelines[pipeline.id] ?? []} />
                </div>
              ))}
            </fieldset>
          </div>
        )}
        <FieldErrors messages={fieldErrors("pipelines")} />

        <div className="form-row">
          <NumberField id={ids.queryLimit} label={t("evaluation.new.queryLimit")} min={1} value={queryLimit} onChange={setQueryLimit}
            hint={chosen ? t("evaluation.new.queryLimitHintCount", { count: chosen.query_count }) : t("evaluation.new.queryLimitHint")}
            errors={fieldErrors("query_limit")} />
          <NumberField id={ids.depth} label={t("evaluation.new.depth")} hint={t("evaluation.new.depthHint")} min={1} max={1000}
            value={depth} onChange={setDepth} errors={fieldErrors("depth")} />
          <NumberField id={ids.answerQueries} label={t("evaluation.new.answerQueries")} hint={t("evaluation.new.answerQueriesHint")}
            min={0} value={answerQueries} onChange={setAnswerQueries} errors={fieldErrors("answer_queries")} />
        </div>

        <button type="button" className="disclosure" aria-expanded={advanced} aria-controls={ids.advanced} onClick={() => setAdvanced((open) => !open)}>
          <ChevronRight aria-hidden="true" size={16} className="disclosure__chevron" />
          {t("evaluation.new.advanced")}
        </button>
        <div id={ids.advanced} hidden={!advanced} className="stack">
          <div className="field">
            <label htmlFor={ids.judge} className="field__label">
              {t("evaluation.new.judge")}
            </label>
            <ComponentRefEditor
              id={ids.judge}
              kind="llm"
              value={judge}
              onChange={setJudge}
              nullable
              errorSchema={toErrorSchema(errors.judge)}
              describedBy={`${ids.judge}-hint`}
            />
            <p id={`${ids.judge}-hint`} className="form-field__hint">
              {t("evaluation.new.judgeHint")}
            </p>
            <FieldErrors messages={errors.judge.filter((error) => error.path.length === 0).map((error) => error.message)} />
          </div>
          <Field id={ids.seed} label={t("evaluation.new.seed")} hint={t("evaluation.new.seedHint")} errors={fieldErrors("seed")}>
            {(describedBy, invalid) => (
              <input id={ids.seed} className="input" type="number" step={1} inputMode="numeric" value={seed}
                aria-describedby={describedBy} aria-invalid={invalid || undefined} onChange={(event) => setSeed(event.target.value)} />
            )}
          </Field>
        </div>
        <UnplacedErrors errors={errors.unplaced} />
      </form>
    </Modal>
  );
}
