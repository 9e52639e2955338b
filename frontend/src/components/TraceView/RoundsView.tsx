import { CircleCheck, CircleX, RotateCcw } from "lucide-react";
import { useId, useRef, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";

import type { Attempt, DroppedOperation, PlanRecord, RoundSummary, TraceNode } from "../../api/chat";
import { useComponentName } from "../../catalog/CatalogProvider";
import { AgenticTimelineView, dropReason } from "./AgenticTimelineView";
import { ChunkLabel } from "./ChunkLabel";
import { FallbackNote } from "./Fallback";
import { agenticTimeline, childComponents, roundChildren, type AgenticTimeline, type ChunkFacts } from "./model";
import { RoundsChart } from "./RoundsChart";

/**
 * An agentic node's rounds: the timeline (plan, children, verdicts) as the chat showed it live,
 * a chart of the pool, then one tab per round with its details. `timeline` is the live one while
 * the node runs; a completed node's is rebuilt from its trace.
 */
export function RoundsView({ node, rounds, facts, timeline }: { node: TraceNode; rounds: RoundSummary[]; facts: ChunkFacts; timeline?: AgenticTimeline }) {
  const catalog = childComponents(node);
  return (
    <>
      <AgenticTimelineView timeline={timeline ?? agenticTimeline(node)} childNames={catalog} />
      {rounds.length > 0 && <RoundTabs node={node} rounds={rounds} facts={facts} />}
    </>
  );
}

function RoundTabs({ node, rounds, facts }: { node: TraceNode; rounds: RoundSummary[]; facts: ChunkFacts }) {
  const { t } = useTranslation();
  const [chosen, setChosen] = useState(0);
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  const baseId = useId();
  const selected = Math.min(chosen, rounds.length - 1);
  const round = rounds[selected]!;
  const consulted = roundChildren(node, rounds);

  const onKeyDown = (event: KeyboardEvent) => {
    const moves: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1 };
    let next: number | null = null;
    if (event.key in moves) next = (selected + moves[event.key]! + rounds.length) % rounds.length;
    if (event.key === "Home") next = 0;
    if (event.key === "End") next = rounds.length - 1;
    if (next === null) return;
    event.preventDefault();
    setChosen(next);
    tabs.current[next]?.focus();
  };

  return (
    <div className="rounds">
      <RoundsChart rounds={rounds} />
      <div className="rounds__tabs" role="tablist" aria-label={t("trace.roundsLabel")} onKeyDown={onKeyDown}>
        {rounds.map((item, index) => (
          <button
            key={item.round}
            ref={(element) => {
              tabs.current[index] = element;
            }}
            type="button"
            role="tab"
            id={`${baseId}-tab-${index}`}
            aria-selected={index === selected}
            aria-controls={`${baseId}-panel`}
            tabIndex={index === selected ? 0 : -1}
            className="rounds__tab"
            onClick={() => setChosen(index)}
          >
            {t("trace.round", { n: item.round })}
            {(item.attempts > 1 || (item.plan?.attempts ?? 0) > 1 || item.fallback || item.plan?.fallback) && (
              <RotateCcw aria-label={t("trace.retried")} size={12} />
            )}
          </button>
        ))}
      </div>
      <div className="rounds__panel" role="tabpanel" id={`${baseId}-panel`} aria-labelledby={`${baseId}-tab-${selected}`}>
        <RoundPanel node={node} round={round} consulted={consulted[selected] ?? []} facts={facts} />
      </div>
    </div>
  );
}

function RoundPanel({ node, round, consulted, facts }: { node: TraceNode; round: RoundSummary; consulted: TraceNode[]; facts: ChunkFacts }) {
  const { t } = useTranslation();
  const name = useComponentName();
  const catalog = childComponents(node);
  const plan = round.plan ?? (round.round === 1 ? node.details?.plan : undefined);

  return (
    <div className="round">
      {plan && <PlanView plan={plan} childNames={catalog} />}
      <dl className="round__facts">
        <div>
          <dt>{t("trace.poolSize")}</dt>
          <dd>{round.pool_size}</dd>
        </div>
        <div>
          <dt>{t("trace.newChunks")}</dt>
          <dd>{round.added.length}</dd>
        </div>
      </dl>

      <h4 className="round__heading">{t("trace.operations")}</h4>
      <ul className="round__operations">
        {round.operations.map((operation, index) => {
          const component = catalog[operation.child];
          const node = consulted[index];
          return (
            <li key={index}>
              <span className="chip">{t("trace.childN", { n: operation.child })}</span>
              <span>{operation.child_name ?? (component ? name(component) : node ? name(node.class) : t("trace.unknownChild"))}</span>
              <span className="chip chip--accent">{t("trace.topK", { k: operation.top_k })}</span>
              {operation.query && <q className="agentic-timeline__query">{operation.query}</q>}
              {node && <span className="muted">{t("trace.returned", { count: node.results.length, id: node.id })}</span>}
            </li>
          );
        })}
      </ul>
      {round.dropped && round.dropped.length > 0 && <DroppedList dropped={round.dropped} childNames={catalog} />}

      <h4 className="round__heading">{t("trace.added", { count: round.added.length })}</h4>
      {round.added.length === 0 ? (
        <p className="muted">{t("trace.nothingAdded")}</p>
      ) : (
        <ul className="round__added">
          {round.added.map((id) => (
            <li key={id}>
              <ChunkLabel id={id} facts={facts} length={140} />
            </li>
          ))}
        </ul>
      )}

      <h4 className="round__heading">{t("trace.verdict")}</h4>
      <Verdict round={round} />
      {round.attempt_log && round.attempt_log.length > 1 && <AttemptLog attempts={round.attempt_log} />}
    </div>
  );
}

function Verdict({ round }: { round: RoundSummary }) {
  const { t } = useTranslation();
  const attempts = t("trace.attempts", { count: round.attempts });
  return (
    <div className="verdict">
      {round.verdict ? (
        <p className={`verdict__line verdict__line--${round.verdict.sufficient ? "sufficient" : "insufficient"}`}>
          {round.verdict.sufficient ? <CircleCheck aria-hidden="true" size={15} /> : <CircleX aria-hidden="true" size={15} />}
          <strong>{round.verdict.sufficient ? t("trace.sufficient") : t("trace.insufficient")}</strong>
          <span>{round.verdict.reason}</span>
        </p>
      ) : (
        <p className="verdict__line muted">{round.fallback ? t("trace.judgingFailed") : t("trace.notJudged")}</p>
      )}
      {round.attempts > 0 && (
        <p className={`verdict__attempts${round.attempts > 1 ? " verdict__attempts--retried" : ""}`}>
          {round.attempts > 1 && <RotateCcw aria-hidden="true" size={13} />}
          {round.attempts > 1 ? t("trace.retriedAttempts", { attempts }) : attempts}
        </p>
      )}
      {round.fallback && <FallbackNote kind="judge" attempts={round.attempts} />}
    </div>
  );
}

function PlanView({ plan, childNames }: { plan: PlanRecord; childNames: string[] }) {
  const { t } = useTranslation();
  const attempts = t("trace.attempts", { count: plan.attempts });
  return (
    <div className="plan">
      <h4 className="round__heading">{t("trace.plan")}</h4>
      {plan.reason && <p className="plan__reason">{plan.reason}</p>}
      <p className={`verdict__attempts${plan.attempts > 1 ? " verdict__attempts--retried" : ""}`}>
        {plan.attempts > 1 && <RotateCcw aria-hidden="true" size={13} />}
        {plan.decided_by === "rule" ? t("trace.planByRule") : plan.attempts > 1 ? t("trace.retriedAttempts", { attempts }) : attempts}
      </p>
      {plan.dropped.length > 0 && <DroppedList dropped={plan.dropped} childNames={childNames} />}
      {plan.fallback && <FallbackNote kind="plan" attempts={plan.attempts} />}
      {plan.attempt_log && plan.attempt_log.length > 1 && <AttemptLog attempts={plan.attempt_log} />}
    </div>
  );
}

/** Operations the model asked for that were not run: which (by child and its name) and why, in the UI's language. */
function DroppedList({ dropped, childNames }: { dropped: DroppedOperation[]; childNames: string[] }) {
  const { t } = useTranslation();
  const name = useComponentName();
  const describe = (operation: DroppedOperation) => {
    const component = typeof operation.child === "number" ? childNames[operation.child] : undefined;
    // A model may leave top_k out (the child's own applies): then only the child is named.
    const values = { child: String(operation.child), k: String(operation.top_k), name: component ? name(component) : "" };
    const key = `trace.operation${component ? "Named" : ""}${operation.top_k === undefined ? "Child" : ""}`;
    const query = typeof operation.query === "string" && operation.query ? ` ${t("trace.quoted", { text: operation.query })}` : "";
    return t(key, values) + query;
  };
  return (
    <div className="dropped-ops">
      <p className="dropped-ops__title">{t("trace.droppedOperations", { count: dropped.length })}</p>
      <ul>
        {dropped.map((operation, index) => (
          <li key={index}>
            {t("trace.droppedOperation", {
              operation: describe(operation),
              reason: dropReason(t, operation.code, operation.why),
            })}
          </li>
        ))}
      </ul>
    </div>
  );
}

function AttemptLog({ attempts }: { attempts: Attempt[] }) {
  const { t } = useTranslation();
  return (
    <details className="attempt-log">
      <summary>{t("trace.attemptLog")}</summary>
      <ol>
        {attempts.map((attempt, index) => (
          <li key={index}>
            <p className={attempt.problems.length ? "attempt-log__problem" : "attempt-log__ok"}>
              {attempt.problems.length ? attempt.problems.join("; ") : t("trace.accepted")}
            </p>
            <pre className="attempt-log__raw">{attempt.raw}</pre>
          </li>
        ))}
      </ol>
    </details>
  );
}
