import { CircleAlert, GitBranch, LoaderCircle, Timer } from "lucide-react";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";

import type { ResultRow, StrategyTrace, TraceNode, TraceStep } from "../../api/chat";
import { useComponentName } from "../../catalog/CatalogProvider";
import { safeHref } from "../../lib/links";
import { ChunkLabel } from "./ChunkLabel";
import { formatDuration } from "./format";
import { isBudget, liveAgenticTimeline, liveRoots, type ChunkFacts, type LiveRetrieval } from "./model";
import { NodeView, Results, RunningAgenticView } from "./NodeView";

const KNOWN_STEPS = new Set(["retrieve", "transform_query", "fuse", "filter", "rerank", "decide", "web_search", "route", "branch", "generate", "search_question"]);

function isNode(value: unknown): value is TraceNode {
  return typeof value === "object" && value !== null && "id" in value && Array.isArray((value as TraceNode).results);
}

function nodes(value: unknown): TraceNode[] {
  return Array.isArray(value) ? value.filter(isNode) : [];
}

function ids(value: unknown): number[] {
  return Array.isArray(value) ? value.filter((item): item is number => typeof item === "number") : [];
}

function text(value: unknown): string | null {
  return typeof value === "string" && value ? value : null;
}

/** How an answer was found, step by step, from its stored trace (identical live and reloaded). */
export function TraceView({ trace, facts }: { trace: StrategyTrace; facts: ChunkFacts }) {
  const { t, i18n } = useTranslation();
  const name = useComponentName();
  return (
    <div className="trace" data-strategy={trace.strategy}>
      <header className="trace__summary">
        <span className="trace__strategy">{name(trace.strategy)}</span>
        <span className="trace-node__time">
          <Timer aria-hidden="true" size={13} />
          {formatDuration(t, i18n.resolvedLanguage ?? "en", trace.elapsed_ms)}
        </span>
        <span className="chip">{t("trace.llmCalls", { count: trace.llm_calls })}</span>
        {trace.cancelled && (
          <span className="chip chip--warning" title={t("trace.stoppedRunHint")}>
            {t("trace.stoppedRun")}
          </span>
        )}
      </header>
      {trace.error && (
        <p className="trace-error" role="note">
          <CircleAlert aria-hidden="true" size={15} />
          {trace.error}
        </p>
      )}
      <ol className="trace__steps">
        {trace.steps.map((step, index) => (
          <li key={index}>
            <StepView step={step} facts={facts} />
          </li>
        ))}
      </ol>
    </div>
  );
}

/** Retrieval as it happens: nodes as they complete, an agentic search's plan, children and verdicts as they come. */
export function LiveTraceView({ live, facts, writing }: { live: LiveRetrieval; facts: ChunkFacts; writing: boolean }) {
  const { t } = useTranslation();
  const { nodes, running } = liveRoots(live);
  return (
    <div className="trace trace--live" aria-busy="true">
      <p className="status-line">
        <LoaderCircle aria-hidden="true" className="spin" size={16} />
        {writing ? t("trace.writing") : t("trace.retrieving")}
      </p>
      {running.map((agentic) => (
        <RunningAgenticView key={agentic.id} timeline={liveAgenticTimeline(live, agentic.id)} facts={facts} />
      ))}
      {nodes.map((node) => (
        <NodeView key={node.id} node={node} facts={facts} />
      ))}
    </div>
  );
}

function StepView({ step, facts }: { step: TraceStep; facts: ChunkFacts }) {
  const { t, i18n } = useTranslation();
  const indexed = /^(\w+)\[(\d+)\]$/.exec(step.step);
  const kind = indexed ? indexed[1]! : step.step;
  const title = KNOWN_STEPS.has(kind)
    ? t(`trace.steps.${kind}`) + (indexed ? ` ${Number(indexed[2]) + 1}` : "")
    : step.step;
  return (
    <section className={`trace-step trace-step--${kind}`} aria-label={title}>
      <header className="trace-step__header">
        <h3 className="trace-step__title">{title}</h3>
        {text(step.component) && <span className="chip">{String(step.component)}</span>}
        <span className="trace-node__time">
          <Timer aria-hidden="true" size={13} />
          {formatDuration(t, i18n.resolvedLanguage ?? "en", step.elapsed_ms)}
        </span>
        {step.interrupted && (
          <span className="chip chip--warning" title={t("trace.interruptedHint")}>
            {t("trace.interrupted")}
          </span>
        )}
      </header>
      <StepBody kind={kind} step={step} facts={facts} />
    </section>
  );
}

function Line({ label, children }: { label: string; children: ReactNode }) {
  return (
    <p className="trace-line">
      <span className="trace-line__label">{label}</span> {children}
    </p>
  );
}

function StepBody({ kind, step, facts }: { kind: string; step: TraceStep; facts: ChunkFacts }) {
  const { t, i18n } = useTranslation();
  const language = i18n.resolvedLanguage ?? "en";
  switch (kind) {
    case "retrieve":
      return (
        <>
          {text(step.query) && <Line label={t("trace.query")}>{String(step.query)}</Line>}
          {isNode(step.node) ? (
            <NodeView node={step.node} facts={facts} />
          ) : nodes(step.nodes).length ? (
            // Stopped mid-retrieval: the retrievers that had finished.
            nodes(step.nodes).map((node) => <NodeView key={node.id} node={node} facts={facts} />)
          ) : (
            <p className="muted">{t("trace.noNode")}</p>
          )}
        </>
      );
    case "transform_query":
      return (
        <ol className="trace-queries" aria-label={t("trace.queries")}>
          {(Array.isArray(step.queries) ? step.queries : []).map((query, index) => (
            <li key={index}>{String(query)}</li>
          ))}
        </ol>
      );
    case "fuse": {
      const rows: ResultRow[] = (Array.isArray(step.results) ? step.results : []).map((row, index) => ({
        ...(row as ResultRow),
        rank: index + 1,
      }));
      return (
        <>
          <Line label={t("trace.method")}>{String(step.method ?? "")}</Line>
          <Results results={rows} facts={facts} childNames={[]} language={language} sourceLabel={(child) => t("trace.queryN", { n: child + 1 })} />
        </>
      );
    }
    case "filter":
      return (
        <>
          <ChunkList label={t("trace.kept", { count: ids(step.kept).length })} ids={ids(step.kept)} facts={facts} />
          <ChunkList label={t("trace.filteredOut", { count: ids(step.dropped).length })} ids={ids(step.dropped)} facts={facts} />
        </>
      );
    case "rerank":
      return <ChunkList label={t("trace.newOrder")} ids={ids(step.order)} facts={facts} ordered />;
    case "decide":
      return <Decision step={step} facts={facts} />;
    case "web_search": {
      const rows = Array.isArray(step.results) ? (step.results as { chunk_id: number; text: string; metadata?: { url?: string; title?: string } }[]) : [];
      return (
        <ul className="trace-web">
          {rows.map((row) => {
            // A search result's address comes from the web: linked only when it is http(s).
            const href = safeHref(row.metadata?.url);
            const label = row.metadata?.title ?? row.metadata?.url;
            return (
              <li key={row.chunk_id}>
                {href ? (
                  <a href={href} target="_blank" rel="noreferrer noopener">
                    {label}
                  </a>
                ) : (
                  label
                )}
                <span className="muted"> {row.text}</span>
              </li>
            );
          })}
        </ul>
      );
    }
    case "route":
      return <Route step={step} />;
    case "branch": {
      const nested = step.trace as StrategyTrace | undefined;
      return (
        <div className="trace-branch">
          <p className="trace-branch__taken">
            <GitBranch aria-hidden="true" size={15} />
            {t("trace.branchTaken", { branch: String(step.branch ?? ""), strategy: String(step.strategy ?? "") })}
          </p>
          {nested && Array.isArray(nested.steps) && <TraceView trace={nested} facts={facts} />}
        </div>
      );
    }
    case "generate":
      return <Generation step={step} facts={facts} />;
    case "search_question":
      return (
        <>
          <Line label={t("trace.asked")}>{String(step.question ?? "")}</Line>
          <Line label={t("trace.searched")}>{String(step.search_question ?? "")}</Line>
          <Line label={t("trace.why")}>
            {t(searchReason(step), { referent: String(step.refers_to ?? "") })}
          </Line>
        </>
      );
    default:
      return (
        <details className="trace-raw">
          <summary>{t("trace.details")}</summary>
          <pre>{JSON.stringify(step, null, 2)}</pre>
        </details>
      );
  }
}

interface Grounding {
  declined_by: string | null;
  supported_citations: number;
  citations_checked: number;
}

/** The question's similarity to its best passage against the relevance floor (`rag.strategies.relevance`). */
interface Relevance {
  best: number;
  floor: number;
  model: string;
  declined: boolean;
}

function isRelevance(value: unknown): value is Relevance {
  return typeof value === "object" && value !== null && "floor" in value && "best" in value;
}

function isGrounding(value: unknown): value is Grounding {
  return typeof value === "object" && value !== null && "citations_checked" in value;
}

function ChunkList({ label, ids: chunkIds, facts, ordered }: { label: string; ids: number[]; facts: ChunkFacts; ordered?: boolean }) {
  const items = chunkIds.map((id) => (
    <li key={id}>
      <ChunkLabel id={id} facts={facts} length={120} />
    </li>
  ));
  return (
    <div className="trace-chunks">
      <p className="trace-line__label">{label}</p>
      {ordered ? <ol>{items}</ol> : <ul>{items}</ul>}
    </div>
  );
}

function Decision({ step, facts }: { step: TraceStep; facts: ChunkFacts }) {
  const { t } = useTranslation();
  const decision = String(step.decision ?? "");
  const verdicts = Array.isArray(step.verdicts) ? (step.verdicts as { chunk_id: number; relevant: boolean; reason: string }[]) : [];
  return (
    <div className="decision">
      <p className={`decision__badge decision__badge--${decision}`}>
        <GitBranch aria-hidden="true" size={15} />
        {t("trace.decision", { decision: ["relevant", "irrelevant", "ambiguous"].includes(decision) ? t(`trace.decisions.${decision}`) : decision })}
      </p>
      {text(step.why) && <Line label={t("trace.why")}>{String(step.why)}</Line>}
      {verdicts.length > 0 && (
        <ul className="decision__verdicts" aria-label={t("trace.verdicts")}>
          {verdicts.map((verdict) => (
            <li key={verdict.chunk_id} className={verdict.relevant ? "is-relevant" : "is-irrelevant"}>
              <span className={`chip ${verdict.relevant ? "chip--accent" : "chip--danger"}`}>{verdict.relevant ? t("trace.relevant") : t("trace.notRelevant")}</span>
              <ChunkLabel id={verdict.chunk_id} facts={facts} length={120} />
              <span className="decision__reason">{verdict.reason}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Route({ step }: { step: TraceStep }) {
  const { t } = useTranslation();
  const details = (step.details ?? {}) as { fallback?: string };
  return (
    <div className="decision">
      <p className="decision__badge">
        <GitBranch aria-hidden="true" size={15} />
        {t("trace.routeTaken", { branch: String(step.branch ?? step.route ?? "") })}
      </p>
      <Line label={t("trace.routeMode")}>{step.mode === "router" ? t("trace.modeRouter") : t("trace.modeClassifier")}</Line>
      {text(step.why) && <Line label={t("trace.why")}>{String(step.why)}</Line>}
      {details.fallback && <Line label={t("trace.fallback")}>{details.fallback}</Line>}
    </div>
  );
}

/** Why a turn searched what it searched (`rag.strategies.followups`): named its referent, searched
 * beside the previous question when none was found, stood alone, or could not be rewritten. */
function searchReason(step: TraceStep): string {
  if (step.rewritten) return step.refers_to ? "trace.searchRewritten" : "trace.searchBesidePrevious";
  return step.reason === "stands alone" || step.reason === "first question" ? "trace.searchAsAsked" : "trace.searchNotRewritten";
}

function Generation({ step, facts }: { step: TraceStep; facts: ChunkFacts }) {
  const { t } = useTranslation();
  const budget = isBudget(step.budget) ? step.budget : null;
  const overlaps = budget?.trimmed?.filter((entry) => entry.reason === "overlap").length ?? 0;
  const citation = step.citation_added as { n?: unknown } | undefined;
  const added = typeof citation?.n === "number" ? citation.n : null;
  const marked = Array.isArray(step.citations_marked) ? step.citations_marked.filter((n): n is number => typeof n === "number") : [];
  const check = isGrounding(step.grounding) ? step.grounding : null;
  const partsAsked = Array.isArray(step.parts_asked_again) ? step.parts_asked_again.filter(isPartAsked) : [];
  const relevance = isRelevance(step.relevance) ? step.relevance : null;
  const withoutExamples = isAskedWithoutExamples(step.asked_without_examples) ? step.asked_without_examples : null;
  return (
    <div className="generation">
      {relevance && (
        <Line label={t("trace.relevance")}>
          {t(relevance.declined ? "trace.relevanceBelow" : "trace.relevanceAbove",
            { best: relevance.best.toFixed(2), floor: relevance.floor.toFixed(2), model: relevance.model })}
        </Line>
      )}
      {budget && (
        <>
          <Line label={t("trace.budget")}>
            {t("trace.budgetUse", { used: budget.used_tokens, max: budget.max_input_tokens })}
          </Line>
          <Line label={t("trace.sentToModel")}>{t("trace.chunkCount", { count: budget.sent.length })}</Line>
          {budget.limited_by === "reading_tokens" && typeof budget.model_limits?.reading_tokens === "number" && (
            <Line label={t("trace.readingBudget")}>
              {t(budget.reading_tokens_set_by !== "model default" ? "trace.readingBudgetSet"
                : (budget.parts ?? 1) > 1 ? "trace.readingBudgetParts" : "trace.readingBudgetDefault",
                { tokens: budget.model_limits.reading_tokens, parts: budget.parts })}
            </Line>
          )}
          {budget.dropped.length > 0 && (
            <ChunkList label={t("trace.budgetDropped", { count: budget.dropped.length })} ids={budget.dropped} facts={facts} />
          )}
          {budget.truncated !== null && <Line label={t("trace.truncated")}>{t("trace.chunkId", { id: budget.truncated })}</Line>}
          {(budget.duplicates?.length ?? 0) > 0 && (
            <ChunkList label={t("trace.duplicatesLeftOut", { count: budget.duplicates!.length })}
              ids={budget.duplicates!.map((entry) => entry.chunk_id)} facts={facts} />
          )}
          {overlaps > 0 && <Line label={t("trace.overlapRemoved")}>{t("trace.chunkCount", { count: overlaps })}</Line>}
          {(budget.history_turns ?? 0) > 0 && (
            <Line label={t("trace.historyGiven")}>{t("trace.turnCount", { count: budget.history_turns })}</Line>
          )}
        </>
      )}
      {text(step.language) && <Line label={t("trace.answerLanguage")}>{String(step.language)}</Line>}
      {added !== null && <Line label={t("trace.citationAdded")}>{t("trace.citationAddedWhy", { n: added })}</Line>}
      {marked.map((n) => <Line key={n} label={t("trace.citationAdded")}>{t("trace.citationMarkedWhy", { n })}</Line>)}
      {check && (
        <Line label={t("trace.answerCheck")}>
          {check.declined_by === "answer" || check.declined_by === "support" || check.declined_by === "number"
            ? t(`trace.declinedBy.${check.declined_by}`)
            : t("trace.supportedCitations", { supported: check.supported_citations, checked: check.citations_checked })}
        </Line>
      )}
      {partsAsked.map((asked) => (
        <Line key={asked.part} label={t("trace.partAskedAgain")}>
          {asked.error ? t("trace.partNotAsked", { part: asked.part, error: asked.error })
            : asked.added ? t("trace.partAdded", { part: asked.part, answer: asked.added })
            : t("trace.partNotAdded", { part: asked.part })}
        </Line>
      ))}
      {withoutExamples && (
        <Line label={t("trace.askedWithoutExamples")}>
          {withoutExamples.error ? t("trace.askedWithoutExamplesFailed", { draft: withoutExamples.draft, error: withoutExamples.error })
            : t("trace.askedWithoutExamplesWhy", { draft: withoutExamples.draft })}
        </Line>
      )}
      {text(step.draft) && <Line label={t("trace.draft")}>{String(step.draft)}</Line>}
    </div>
  );
}

/** A draft that repeated a worked example of the instructions, and the question asked again
 * without them (`Strategy._ask_again_without_examples`). */
interface AskedWithoutExamples {
  draft: string;
  error?: string;
}

function isAskedWithoutExamples(value: unknown): value is AskedWithoutExamples {
  return typeof value === "object" && value !== null && typeof (value as AskedWithoutExamples).draft === "string";
}

/** A part of a several-part question the answer left out, asked again on its own
 * (`rag.strategies.left_out_parts`): what was added, or why nothing was. */
interface PartAsked {
  part: string;
  added?: string | null;
  error?: string;
}

function isPartAsked(value: unknown): value is PartAsked {
  return typeof value === "object" && value !== null && typeof (value as PartAsked).part === "string";
}
