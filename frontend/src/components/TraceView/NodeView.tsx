import { CircleAlert, Expand, Timer } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { ResultRow, TraceNode } from "../../api/chat";
import { useComponentName } from "../../catalog/CatalogProvider";
import { ChunkLabel } from "./ChunkLabel";
import { formatDuration, formatScore, scoreShares } from "./format";
import { isAgentic, type AgenticTimeline, type ChunkFacts } from "./model";
import { RoundsView } from "./RoundsView";

/** One retriever invocation: its timing, its results, its rounds (agentic) and its children. */
export function NodeView({ node, facts, depth = 0 }: { node: TraceNode; facts: ChunkFacts; depth?: number }) {
  const { t, i18n } = useTranslation();
  const name = useComponentName();
  const language = i18n.resolvedLanguage ?? "en";
  const childNames = node.children.map((child) => name(child.class));
  const agentic = isAgentic(node);

  return (
    <section className={`trace-node${node.error ? " trace-node--failed" : ""}`} data-node-id={node.id} aria-label={t("trace.nodeLabel", { name: name(node.class), id: node.id })}>
      <header className="trace-node__header">
        <span className="trace-node__name">{name(node.class)}</span>
        <span className="chip" title={t("trace.nodeIdHint")}>{node.id}</span>
        {node.top_k !== null && <span className="chip">{t("trace.topK", { k: node.top_k })}</span>}
        {node.score_scale && <span className="chip" data-testid="score-scale">{t(`trace.scale.${node.score_scale}`)}</span>}
        <span className="trace-node__time">
          <Timer aria-hidden="true" size={13} />
          {formatDuration(t, language, node.elapsed_ms)}
        </span>
      </header>
      {node.error && (
        <p className="trace-error" role="note">
          <CircleAlert aria-hidden="true" size={15} />
          {node.error}
        </p>
      )}
      {agentic && <RoundsView node={node} rounds={node.rounds} facts={facts} />}
      <Results results={node.results} facts={facts} childNames={childNames} language={language} scale={node.score_scale} />
      {node.children.length > 0 && (
        <details className="trace-node__children" open={depth < 2}>
          <summary>{agentic ? t("trace.consulted", { count: node.children.length }) : t("trace.children", { count: node.children.length })}</summary>
          <div className="trace-node__child-list">
            {node.children.map((child) => (
              <NodeView key={child.id} node={child} facts={facts} depth={depth + 1} />
            ))}
          </div>
        </details>
      )}
    </section>
  );
}

/** An agentic node whose plan and rounds are arriving (the node itself completes after the last one). */
export function RunningAgenticView({ timeline, facts }: { timeline: AgenticTimeline; facts: ChunkFacts }) {
  const { t } = useTranslation();
  const name = useComponentName();
  const { id } = timeline;
  const rounds = timeline.rounds.flatMap((round) => (round.summary ? [round.summary] : []));
  const node: TraceNode = {
    id, class: "AgenticEnsembleRetriever", params: {}, query: "", top_k: null, elapsed_ms: 0,
    results: [], children: [], rounds, error: null,
  };
  return (
    <section className="trace-node trace-node--running" data-node-id={id} aria-label={t("trace.nodeLabel", { name: name(node.class), id })}>
      <header className="trace-node__header">
        <span className="trace-node__name">{name(node.class)}</span>
        <span className="chip">{id}</span>
        <span className="chip chip--accent">{t("trace.running")}</span>
      </header>
      <RoundsView node={node} rounds={rounds} facts={facts} timeline={timeline} />
    </section>
  );
}

export function Results({ results, facts, childNames, language, sourceLabel, scale }: {
  results: ResultRow[];
  facts: ChunkFacts;
  childNames: string[];
  language: string;
  /** What the scores measure (a trace node's `score_scale`). */
  scale?: string;
  /** How a fused result's source is named (default: the child retriever). */
  sourceLabel?: (child: number) => string;
}) {
  const { t } = useTranslation();
  if (results.length === 0) return <p className="muted trace-empty">{t("trace.noResults")}</p>;
  const shares = scoreShares(results.map((row) => row.score));
  const label = sourceLabel ?? ((child: number) => childNames[child] ?? t("trace.childN", { n: child }));
  return (
    <ol className="trace-results" aria-label={t("trace.results")}>
      {results.map((row, index) => (
        <li key={`${row.chunk_id}-${index}`} className={`trace-result${facts.dropped.has(row.chunk_id) ? " trace-result--dropped" : ""}`}>
          <span className="trace-result__rank">#{row.rank}</span>
          <span className="trace-result__score" title={scale ? `${t(`trace.scale.${scale}`)} ${formatScore(language, row.score)}` : t("trace.scoreHint")}>
            <span className="score-bar" aria-hidden="true">
              <span className="score-bar__fill" style={{ width: `${Math.round((shares[index] ?? 0) * 100)}%` }} />
            </span>
            <span className="trace-result__value">{formatScore(language, row.score)}</span>
          </span>
          <span className="trace-result__body">
            <ChunkLabel id={row.chunk_id} documentId={row.document_id} position={row.position} facts={facts} />
            {(row.window || (row.sources && row.sources.length > 0)) && (
              <span className="trace-result__tags">
                {row.window && (
                  <span className="chip chip--info" title={t("trace.windowHint")}>
                    <Expand aria-hidden="true" size={12} />
                    {t("trace.window", { first: row.window[0], last: row.window[1] })}
                  </span>
                )}
                {row.sources?.map((source, index) => (
                  // One child may rank a chunk for two search texts of an agentic round: same child, same rank.
                  <span key={`${source.child}-${source.rank}-${index}`} className="chip" title={source.contribution === undefined
                    ? t("trace.sourceHint", { score: formatScore(language, source.score) })
                    : t("trace.sourceContributionHint", { score: formatScore(language, source.score), contribution: formatScore(language, source.contribution) })}>
                    {t("trace.source", { name: label(source.child), rank: source.rank })}
                  </span>
                ))}
              </span>
            )}
          </span>
        </li>
      ))}
    </ol>
  );
}
