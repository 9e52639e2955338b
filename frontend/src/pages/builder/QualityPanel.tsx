import { Gauge, LoaderCircle, Pencil, Trash2 } from "lucide-react";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";

import { ApiError } from "../../api/client";
import type { ComponentRef } from "../../api/components";
import { consentNeeded, type LanguageModelNode } from "../../api/playground";
import {
  fetchTestSet,
  removeTestSet,
  scoreTree,
  type MetricChange,
  type MetricValue,
  type QualityMetric,
  type QualityScore,
  type TestSet,
} from "../../api/quality";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { TestSetDialog } from "./TestSetDialog";

/** How long the tree must stay unchanged before it is scored: typing a number is one edit. */
export const SCORE_AFTER_MS = 600;
const LIMIT = 50;
const METRICS: QualityMetric[] = ["ndcg_at_10", "recall_at_10"];

type Scoring =
  | { state: "idle" }
  | { state: "consent"; models: LanguageModelNode[] }
  | { state: "invalid" }
  | { state: "failed"; message: string };

interface QualityPanelProps {
  pipelineId: number | null;
  knowledgeBaseId: number | null;
  /** The retriever tree as edited. */
  retriever: ComponentRef | undefined;
  /** The saved pipeline's retriever tree, the baseline of each change. */
  saved: ComponentRef | undefined;
  /** The live check found nothing wrong with the tree as it is now. */
  valid: boolean;
}

/**
 * Live quality: after each edit, the tree is scored in the background on the pipeline's test
 * set (nDCG@10 and Recall@10 with intervals) and compared with the saved version. Editing never
 * waits for it; a newer edit cancels a score still running. A tree with a language model is
 * scored only when asked, its cost said first.
 */
export function QualityPanel({ pipelineId, knowledgeBaseId, retriever, saved, valid }: QualityPanelProps) {
  const { t } = useTranslation();
  const toast = useToast();
  const stored = useLoad((signal) => (pipelineId === null ? Promise.resolve({ test_set: null }) : fetchTestSet(pipelineId, signal)), [pipelineId]);
  const testSet = stored.state.status === "ready" ? stored.state.data.test_set : null;
  const [editing, setEditing] = useState(false);
  const [score, setScore] = useState<QualityScore | null>(null);
  const [running, setRunning] = useState(false);
  const [scoring, setScoring] = useState<Scoring>({ state: "idle" });
  const [consented, setConsented] = useState<string | null>(null);
  const key = JSON.stringify([knowledgeBaseId, retriever, saved, testSet]);

  useEffect(() => {
    if (!testSet || !retriever || knowledgeBaseId === null || !valid) return;
    const controller = new AbortController();
    const timer = window.setTimeout(async () => {
      setRunning(true);
      try {
        const result = await scoreTree(
          { knowledge_base: knowledgeBaseId, retriever, baseline: saved ?? null, test_set: testSet, limit: LIMIT, allow_llm: consented === key },
          controller.signal,
        );
        setScore(result);
        setScoring({ state: "idle" });
      } catch (error) {
        if (controller.signal.aborted) return;
        const models = consentNeeded(error);
        if (models) setScoring({ state: "consent", models });
        else if (error instanceof ApiError && error.status === 400) setScoring({ state: "invalid" });
        else setScoring({ state: "failed", message: (error as Error).message });
      } finally {
        if (!controller.signal.aborted) setRunning(false);
      }
    }, SCORE_AFTER_MS);
    return () => {
      window.clearTimeout(timer);
      controller.abort();
      setRunning(false);
    };
    // `key` stands for the tree, the baseline and the test set.
  }, [key, valid, consented]);

  const detach = async () => {
    if (pipelineId === null) return;
    try {
      await removeTestSet(pipelineId);
      stored.update(() => ({ test_set: null }));
      setScore(null);
    } catch (error) {
      toast.error(t("quality.removeFailed"), error);
    }
  };

  const questions = testSet && "questions" in testSet ? testSet.questions.length : null;
  return (
    <section className="quality" aria-label={t("quality.title")}>
      <header className="quality__header">
        <Gauge aria-hidden="true" size={18} />
        <h2 className="quality__title">{t("quality.title")}</h2>
        {running && (
          <span className="chip" data-testid="quality-running">
            <LoaderCircle aria-hidden="true" size={13} className="spin" />
            {t("quality.scoring")}
          </span>
        )}
        <div className="quality__actions">
          {pipelineId === null ? (
            <span className="muted">{t("quality.saveFirst")}</span>
          ) : testSet ? (
            <>
              <span className="muted" data-testid="test-set-summary">
                {questions !== null ? t("quality.golden", { count: questions }) : t("quality.fromDataset")}
              </span>
              <button type="button" className="button button--small" onClick={() => setEditing(true)}>
                <Pencil aria-hidden="true" size={14} />
                {t("quality.edit")}
              </button>
              <button type="button" className="button button--small" onClick={() => void detach()} aria-label={t("quality.remove")}>
                <Trash2 aria-hidden="true" size={14} />
              </button>
            </>
          ) : (
            <button type="button" className="button button--small" onClick={() => setEditing(true)} disabled={knowledgeBaseId === null}>
              {t("quality.attach")}
            </button>
          )}
        </div>
      </header>

      {testSet && scoring.state === "consent" && (
        <p className="notice notice--warning quality__notice">
          {t("quality.consent", {
            models: [...new Set(scoring.models.map((model) => model.component))].join(", "),
            count: questions ?? LIMIT,
          })}{" "}
          <button type="button" className="button button--small" onClick={() => setConsented(key)}>
            {t("quality.scoreAnyway")}
          </button>
        </p>
      )}
      {testSet && scoring.state === "invalid" && <p className="muted quality__notice">{t("quality.invalid")}</p>}
      {testSet && scoring.state === "failed" && <p className="form-error quality__notice">{scoring.message}</p>}
      {testSet && !valid && <p className="muted quality__notice">{t("quality.invalid")}</p>}

      {testSet && score && (
        <dl className={`quality__figures${running ? " quality__figures--stale" : ""}`}>
          {METRICS.map((metric) => (
            <Figure key={metric} metric={metric} value={score.metrics[metric]} change={score.change?.[metric] ?? null} />
          ))}
          <div className="quality__meta muted">
            {t("quality.meta", { count: score.questions, ms: Math.round(score.elapsed_ms) })}
          </div>
        </dl>
      )}

      {editing && pipelineId !== null && knowledgeBaseId !== null && (
        <TestSetDialog
          pipelineId={pipelineId}
          knowledgeBaseId={knowledgeBaseId}
          initial={testSet}
          onClose={() => setEditing(false)}
          onSaved={(next: TestSet) => {
            setEditing(false);
            stored.update(() => ({ test_set: next }));
          }}
        />
      )}
    </section>
  );
}

function Figure({ metric, value, change }: { metric: QualityMetric; value: MetricValue; change: MetricChange | null }) {
  const { t, i18n } = useTranslation();
  const format = (number: number, signed = false) =>
    new Intl.NumberFormat(i18n.resolvedLanguage ?? "en", { minimumFractionDigits: 3, maximumFractionDigits: 3, signDisplay: signed ? "exceptZero" : "auto" }).format(number);
  return (
    <div className="quality__figure" data-testid={`quality-${metric}`}>
      <dt>{t(`quality.metric.${metric}`)}</dt>
      <dd>
        <span className="quality__value">{value.value === null ? "—" : format(value.value)}</span>
        {value.ci && <span className="muted"> [{format(value.ci[0])}–{format(value.ci[1])}]</span>}
        {change && (
          <span
            className={`chip quality__change${change.within_noise ? "" : change.difference > 0 ? " chip--accent" : " chip--danger"}`}
            data-testid={`change-${metric}`}
            title={t("quality.changeHint", { low: format(change.ci[0], true), high: format(change.ci[1], true) })}
          >
            {t(change.within_noise ? "quality.changeNoise" : "quality.change", { difference: format(change.difference, true) })}
          </span>
        )}
      </dd>
    </div>
  );
}
