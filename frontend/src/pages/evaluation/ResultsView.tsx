import { ArrowDown, ArrowUp, ArrowUpDown, ChevronRight, Download } from "lucide-react";
import { useId, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";

import {
  ANSWER_METRICS,
  RETRIEVAL_METRICS,
  fetchComparison,
  pipelineLabels,
  type EvaluationDetail,
  type EvaluationResults,
  type PipelineResult,
  type ReportLinks,
  type RetrievalMetric,
} from "../../api/evaluation";
import { ErrorNotice, Loading } from "../../components/StatusViews";
import { safeHref } from "../../lib/links";
import { useLoad } from "../../lib/useLoad";
import {
  METRIC_LABELS,
  SIGNIFICANCE,
  formatDifference,
  formatInterval,
  formatMs,
  formatOne,
  formatP,
  formatScore,
  halfWidth,
} from "./format";

function useLanguage(): string {
  const { i18n } = useTranslation();
  return i18n.resolvedLanguage ?? "en";
}

/** The highest value of each metric over the pipelines (only worth marking with two or more). */
function bestOf(pipelines: readonly PipelineResult[], metric: RetrievalMetric): number | null {
  if (pipelines.length < 2) return null;
  const values = pipelines.map((pipeline) => pipeline.metrics[metric]).filter((value): value is number => typeof value === "number");
  return values.length ? Math.max(...values) : null;
}

/** How a pipeline the results name reads on the page (a preset by its display name). */
type Label = (name: string) => string;

/** A finished evaluation: every table, the comparison, the plots and the downloads. */
export function ResultsView({ evaluation, results }: { evaluation: EvaluationDetail; results: EvaluationResults }) {
  const { pipelines } = results;
  const answered = pipelines.some((pipeline) => pipeline.answers);
  const label = pipelineLabels(evaluation.pipelines);
  return (
    <>
      <MetricsTable pipelines={pipelines} label={label} />
      <CostTable pipelines={pipelines} label={label} />
      {answered && <AnswersTable pipelines={pipelines} label={label} />}
      {pipelines.length > 1 && <ComparisonSection evaluationId={evaluation.id} label={label} />}
      {evaluation.report && <ReportSection report={evaluation.report} />}
      <PerQueryTable pipelines={pipelines} label={label} />
    </>
  );
}

function Section({ title, hint, children, actions }: { title: string; hint?: string; children: React.ReactNode; actions?: React.ReactNode }) {
  const id = useId();
  return (
    <section className="section" aria-labelledby={id}>
      <div className="section__header section__header--split">
        <h2 id={id} className="section__title">
          {title}
        </h2>
        {actions}
      </div>
      {hint && <p className="muted evaluation-hint">{hint}</p>}
      {children}
    </section>
  );
}

function MetricsTable({ pipelines, label }: { pipelines: readonly PipelineResult[]; label: Label }) {
  const { t } = useTranslation();
  const language = useLanguage();
  const best = Object.fromEntries(RETRIEVAL_METRICS.map((metric) => [metric, bestOf(pipelines, metric)]));
  return (
    <Section title={t("evaluation.results.metrics")} hint={t("evaluation.results.metricsHint")}>
      <div className="table-scroll">
        <table className="data-table" aria-label={t("evaluation.results.metrics")}>
          <thead>
            <tr>
              <th scope="col">{t("evaluation.results.pipeline")}</th>
              <th scope="col" className="data-table__number">
                {t("evaluation.results.queries")}
              </th>
              {RETRIEVAL_METRICS.map((metric) => (
                <th key={metric} scope="col" className="data-table__number">
                  {METRIC_LABELS[metric]}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {pipelines.map((pipeline) => (
              <tr key={pipeline.name}>
                <th scope="row">{label(pipeline.name)}</th>
                <td className="data-table__number">
                  {pipeline.truncated ? t("evaluation.results.queriesOf", { done: pipeline.queries, planned: pipeline.planned_queries }) : pipeline.queries}
                  {pipeline.failures > 0 && (
                    <span className="metric-cell__range metric-cell__range--failed">{t("evaluation.results.failures", { count: pipeline.failures })}</span>
                  )}
                </td>
                {RETRIEVAL_METRICS.map((metric) => {
                  const value = pipeline.metrics[metric];
                  const interval = pipeline.ci[metric];
                  const half = halfWidth(interval);
                  const isBest = value !== null && value !== undefined && value === best[metric];
                  return (
                    <td key={metric} className={`data-table__number metric-cell${isBest ? " is-best" : ""}`} data-metric={metric}>
                      <span className="metric-cell__value">
                        {isBest ? <strong>{formatScore(value, language)}</strong> : formatScore(value, language)}
                        {half !== null && <span className="metric-cell__pm"> ± {formatScore(half, language)}</span>}
                      </span>
                      <span className="metric-cell__range" title={t("evaluation.results.ciTitle")}>
                        {formatInterval(interval, language)}
                      </span>
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Section>
  );
}

function CostTable({ pipelines, label }: { pipelines: readonly PipelineResult[]; label: Label }) {
  const { t } = useTranslation();
  const language = useLanguage();
  return (
    <Section title={t("evaluation.results.cost")} hint={t("evaluation.results.costHint")}>
      <div className="table-scroll">
        <table className="data-table" aria-label={t("evaluation.results.cost")}>
          <thead>
            <tr>
              <th scope="col">{t("evaluation.results.pipeline")}</th>
              <th scope="col" className="data-table__number">{t("evaluation.results.p50")}</th>
              <th scope="col" className="data-table__number">{t("evaluation.results.p95")}</th>
              <th scope="col" className="data-table__number">{t("evaluation.results.llmCalls")}</th>
              <th scope="col" className="data-table__number">{t("evaluation.results.failed")}</th>
            </tr>
          </thead>
          <tbody>
            {pipelines.map((pipeline) => (
              <tr key={pipeline.name}>
                <th scope="row">{label(pipeline.name)}</th>
                <td className="data-table__number">{formatMs(pipeline.latency_ms.p50, language)}</td>
                <td className="data-table__number">{formatMs(pipeline.latency_ms.p95, language)}</td>
                <td className="data-table__number">{formatOne(pipeline.llm_calls_per_query, language)}</td>
                <td className="data-table__number">{pipeline.failures}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {pipelines.some((pipeline) => pipeline.errors?.length) && (
        <details className="evaluation-errors">
          <summary>{t("evaluation.results.failedQueries")}</summary>
          <ul>
            {pipelines.flatMap((pipeline) =>
              (pipeline.errors ?? []).map((error) => (
                <li key={`${pipeline.name}:${error}`}>
                  <strong>{label(pipeline.name)}</strong> · {error}
                </li>
              )),
            )}
          </ul>
        </details>
      )}
    </Section>
  );
}

function AnswersTable({ pipelines, label }: { pipelines: readonly PipelineResult[]; label: Label }) {
  const { t } = useTranslation();
  const language = useLanguage();
  const rows = pipelines.filter((pipeline) => pipeline.answers);
  return (
    <Section title={t("evaluation.results.answers")} hint={t("evaluation.results.answersHint")}>
      <div className="table-scroll">
        <table className="data-table" aria-label={t("evaluation.results.answers")}>
          <thead>
            <tr>
              <th scope="col">{t("evaluation.results.pipeline")}</th>
              <th scope="col" className="data-table__number">{t("evaluation.results.answered")}</th>
              {ANSWER_METRICS.map((metric) => (
                <th key={metric} scope="col" className="data-table__number">
                  {t(`evaluation.answerMetrics.${metric}`)}
                </th>
              ))}
              <th scope="col" className="data-table__number">{t("evaluation.results.p50")}</th>
              <th scope="col" className="data-table__number">{t("evaluation.results.p95")}</th>
              <th scope="col" className="data-table__number">{t("evaluation.results.llmCalls")}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((pipeline) => {
              const answers = pipeline.answers!;
              return (
                <tr key={pipeline.name}>
                  <th scope="row">{label(pipeline.name)}</th>
                  <td className="data-table__number">{answers.queries}</td>
                  {ANSWER_METRICS.map((metric) => (
                    <td key={metric} className="data-table__number" data-metric={metric}>
                      {formatScore(answers[metric], language)}
                    </td>
                  ))}
                  <td className="data-table__number">{formatMs(answers.latency_ms.p50, language)}</td>
                  <td className="data-table__number">{formatMs(answers.latency_ms.p95, language)}</td>
                  <td className="data-table__number">{formatOne(answers.llm_calls_per_query, language)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </Section>
  );
}

function ComparisonSection({ evaluationId, label }: { evaluationId: number; label: Label }) {
  const { t } = useTranslation();
  const language = useLanguage();
  const { state, reload } = useLoad((signal) => fetchComparison(evaluationId, signal), [evaluationId]);
  const [metric, setMetric] = useState<RetrievalMetric>("ndcg@10");
  const selectId = useId();

  const picker = (
    <div className="evaluation-metric-picker">
      <label htmlFor={selectId} className="field__label">
        {t("evaluation.comparison.metric")}
      </label>
      <select id={selectId} className="input" value={metric} onChange={(event) => setMetric(event.target.value as RetrievalMetric)}>
        {RETRIEVAL_METRICS.map((name) => (
          <option key={name} value={name}>
            {METRIC_LABELS[name]}
          </option>
        ))}
      </select>
    </div>
  );

  return (
    <Section title={t("evaluation.comparison.title")} hint={t("evaluation.comparison.hint", { alpha: SIGNIFICANCE })} actions={picker}>
      {state.status === "loading" && <Loading label={t("evaluation.comparison.loading")} />}
      {state.status === "error" && <ErrorNotice title={t("evaluation.comparison.loadFailed")} message={state.message} onRetry={reload} />}
      {state.status === "ready" && (
        <div className="table-scroll">
          <table className="data-table" aria-label={t("evaluation.comparison.title")}>
            <thead>
              <tr>
                <th scope="col">{t("evaluation.comparison.pair")}</th>
                <th scope="col" className="data-table__number">{t("evaluation.comparison.meanA")}</th>
                <th scope="col" className="data-table__number">{t("evaluation.comparison.meanB")}</th>
                <th scope="col" className="data-table__number">{t("evaluation.comparison.difference")}</th>
                <th scope="col" className="data-table__number">{t("evaluation.comparison.ci")}</th>
                <th scope="col" className="data-table__number">{t("evaluation.comparison.pRandomization")}</th>
                <th scope="col" className="data-table__number">{t("evaluation.comparison.pBootstrap")}</th>
                <th scope="col">{t("evaluation.comparison.verdict")}</th>
              </tr>
            </thead>
            <tbody>
              {state.data.comparisons.map((comparison) => {
                const entry = comparison.metrics[metric];
                const p = entry?.p_randomization;
                const significant = typeof p === "number" && p < SIGNIFICANCE;
                const winner = entry?.difference ? (entry.difference > 0 ? comparison.a : comparison.b) : null;
                return (
                  <tr key={`${comparison.a}|${comparison.b}`} className={significant ? "is-significant" : undefined} data-significant={significant}>
                    <th scope="row">{t("evaluation.comparison.versus", { a: label(comparison.a), b: label(comparison.b) })}</th>
                    <td className="data-table__number">{formatScore(entry?.mean_a, language)}</td>
                    <td className="data-table__number">{formatScore(entry?.mean_b, language)}</td>
                    <td className="data-table__number">{formatDifference(entry?.difference, language)}</td>
                    <td className="data-table__number">{formatInterval(entry?.ci, language, true)}</td>
                    <PCell value={entry?.p_randomization} language={language} />
                    <PCell value={entry?.p_bootstrap} language={language} />
                    <td>
                      {significant && winner ? (
                        <span className="chip chip--accent">{t("evaluation.comparison.better", { name: label(winner) })}</span>
                      ) : (
                        <span className="muted">{t("evaluation.comparison.notSignificant")}</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}

function PCell({ value, language }: { value: number | null | undefined; language: string }) {
  const low = typeof value === "number" && value < SIGNIFICANCE;
  return <td className="data-table__number">{low ? <strong>{formatP(value, language)}</strong> : formatP(value, language)}</td>;
}

function ReportSection({ report }: { report: ReportLinks }) {
  const { t } = useTranslation();
  const downloads = (
    <div className="page__actions">
      <a className="button button--small" href={safeHref(report.markdown)} download="report.md">
        <Download aria-hidden="true" size={14} />
        {t("evaluation.report.markdown")}
      </a>
      <a className="button button--small" href={safeHref(report.json)} download="results.json">
        <Download aria-hidden="true" size={14} />
        {t("evaluation.report.json")}
      </a>
    </div>
  );
  return (
    <Section title={t("evaluation.report.title")} actions={downloads}>
      <div className="report-figures">
        <figure className="report-figure">
          <img src={safeHref(report.metrics)} alt={t("evaluation.report.metricsAlt")} data-testid="report-metrics" />
          <figcaption>{t("evaluation.report.metricsCaption")}</figcaption>
        </figure>
        <figure className="report-figure">
          <img src={safeHref(report.recall)} alt={t("evaluation.report.recallAlt")} data-testid="report-recall" />
          <figcaption>{t("evaluation.report.recallCaption")}</figcaption>
        </figure>
      </div>
    </Section>
  );
}

type Sort = "none" | "descending" | "ascending";
const NEXT_SORT: Record<Sort, Sort> = { none: "descending", descending: "ascending", ascending: "none" };

/** Every query's nDCG@10 per pipeline, in dataset order or sorted by the first pipeline's. */
function PerQueryTable({ pipelines, label }: { pipelines: readonly PipelineResult[]; label: Label }) {
  const { t } = useTranslation();
  const language = useLanguage();
  const [open, setOpen] = useState(false);
  const [sort, setSort] = useState<Sort>("none");
  const tableId = useId();
  const first = pipelines[0];
  const byQuery = useMemo(
    () => pipelines.map((pipeline) => new Map(pipeline.per_query.map((row) => [row.query_id, row]))),
    [pipelines],
  );
  const rows = useMemo(() => {
    const list = [...(first?.per_query ?? [])];
    if (sort === "none") return list;
    const sign = sort === "descending" ? -1 : 1;
    return list.sort((a, b) => sign * ((a["ndcg@10"] ?? 0) - (b["ndcg@10"] ?? 0)));
  }, [first, sort]);
  if (!first) return null;
  const SortIcon = sort === "none" ? ArrowUpDown : sort === "descending" ? ArrowDown : ArrowUp;

  return (
    <section className="section per-query">
      <button type="button" className="disclosure per-query__toggle" aria-expanded={open} aria-controls={tableId} onClick={() => setOpen((value) => !value)}>
        <ChevronRight aria-hidden="true" size={16} className="disclosure__chevron" />
        {t("evaluation.perQuery.title", { count: first.per_query.length })}
      </button>
      {open && (
        <div id={tableId} className="table-scroll per-query__scroll">
          <table className="data-table data-table--compact" aria-label={t("evaluation.perQuery.label")}>
            <thead>
              <tr>
                <th scope="col">{t("evaluation.perQuery.query")}</th>
                {pipelines.map((pipeline, index) => (
                  <th key={pipeline.name} scope="col" className="data-table__number" aria-sort={index === 0 && sort !== "none" ? sort : undefined}>
                    {index === 0 ? (
                      <button type="button" className="sort-button" onClick={() => setSort(NEXT_SORT[sort])} title={t(`evaluation.perQuery.sort.${sort}`)}>
                        {t("evaluation.perQuery.ndcgOf", { name: label(pipeline.name) })}
                        <SortIcon aria-hidden="true" size={14} />
                      </button>
                    ) : (
                      t("evaluation.perQuery.ndcgOf", { name: label(pipeline.name) })
                    )}
                  </th>
                ))}
                <th scope="col">{t("evaluation.perQuery.retrieved", { name: label(first.name) })}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.query_id}>
                  <th scope="row">
                    <code>{row.query_id}</code>
                    {row.query ? (
                      <span className="per-query__text" title={row.query}>
                        {row.query}
                      </span>
                    ) : null}
                  </th>
                  {byQuery.map((rowsOf, index) => {
                    const cell = rowsOf.get(row.query_id);
                    return (
                      <td key={pipelines[index]!.name} className="data-table__number">
                        {cell?.error ? (
                          <span className="badge badge--failed" title={cell.error}>
                            {t("evaluation.perQuery.failed")}
                          </span>
                        ) : (
                          formatScore(cell?.["ndcg@10"], language)
                        )}
                      </td>
                    );
                  })}
                  <td className="per-query__retrieved">{row.retrieved.slice(0, 5).join(", ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
