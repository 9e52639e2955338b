import { CircleCheck, CircleX, LoaderCircle, RotateCcw, Search, TriangleAlert } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { Operation, TraceNode } from "../../api/chat";
import { useComponentName } from "../../catalog/CatalogProvider";
import { FallbackNote } from "./Fallback";
import type { AgenticTimeline, TimelineRound } from "./model";

/**
 * An agentic search as a compact timeline: the plan and the children it chose, then each round's
 * children as they answer, "judging" while the verdict is pending, and the verdict with the next
 * round's choice. The same view live and from a stored trace.
 *
 * It announces nothing itself (`aria-live="off"` inside the chat's live thread): a summary line
 * says what is happening now, so a screen reader does not hear every line again on each event.
 */
export function AgenticTimelineView({ timeline, childNames = [] }: {
  timeline: AgenticTimeline;
  /** Each child's component name by catalog index, when the node's params are known. */
  childNames?: string[];
}) {
  const { t } = useTranslation();
  const { plan } = timeline;
  return (
    <ol className="agentic-timeline" aria-label={t("trace.agentic.title")} aria-live="off" data-testid="agentic-timeline">
      <li className="agentic-timeline__step agentic-timeline__plan" data-testid="agentic-plan">
        {plan ? (
          <>
            <p className="agentic-timeline__line">
              <strong>{t("trace.agentic.plan")}</strong>
              {plan.reason && <> <span className="agentic-timeline__reason">{plan.reason}</span></>}
              {plan.attempts > 1 && <RotateCcw aria-label={t("trace.retriedAttempts", { attempts: t("trace.attempts", { count: plan.attempts }) })} size={13} />}
            </p>
            {(plan.operations?.length ?? 0) > 0 && <OperationChips operations={plan.operations!} childNames={childNames} />}
            {plan.fallback && <FallbackNote kind="plan" attempts={plan.attempts} />}
          </>
        ) : timeline.rounds.length === 0 ? (
          <Pending text={t("trace.agentic.planning")} />
        ) : (
          // An older trace, or one that never sent its plan: the rounds say what was consulted.
          <p className="agentic-timeline__line muted">{t("trace.agentic.noPlan")}</p>
        )}
      </li>
      {timeline.rounds.map((round) => (
        <RoundStep key={round.round} round={round} childNames={childNames} />
      ))}
    </ol>
  );
}

function RoundStep({ round, childNames }: { round: TimelineRound; childNames: string[] }) {
  const { t } = useTranslation();
  const { summary } = round;
  const waiting = Math.max(0, round.planned.length - round.consulted.length);
  const searching = !summary && !round.judging && (waiting > 0 || round.consulted.length === 0);
  const focused = new Set(round.planned.map((operation) => operation.query).filter((query): query is string => !!query));
  return (
    <li className="agentic-timeline__step" data-testid="agentic-round" data-round={round.round}>
      <p className="agentic-timeline__round">{t("trace.round", { n: round.round })}</p>
      {round.consulted.length > 0 && (
        <ul className="agentic-timeline__consulted">
          {round.consulted.map((node) => (
            <ConsultedChild key={node.id} node={node} focused={!!node.query && focused.has(node.query)} />
          ))}
        </ul>
      )}
      {searching && <Pending text={t("trace.agentic.searching", { count: waiting || round.planned.length })} />}
      {round.judging && !summary && <Pending text={t("trace.agentic.judging")} testId="agentic-judging" />}
      {summary && (summary.verdict ? (
        <div className={`agentic-timeline__verdict agentic-timeline__verdict--${summary.verdict.sufficient ? "sufficient" : "insufficient"}`} data-testid="agentic-verdict">
          <p className="agentic-timeline__line">
            {summary.verdict.sufficient ? <CircleCheck aria-hidden="true" size={14} /> : <CircleX aria-hidden="true" size={14} />}
            <strong>{summary.verdict.sufficient ? t("trace.sufficient") : t("trace.insufficient")}</strong>{" "}
            <span className="agentic-timeline__reason">{summary.verdict.reason}</span>
            {summary.attempts > 1 && <RotateCcw aria-label={t("trace.retriedAttempts", { attempts: t("trace.attempts", { count: summary.attempts }) })} size={13} />}
          </p>
          {(summary.next_operations?.length ?? 0) > 0 && (
            <p className="agentic-timeline__next">
              <span className="agentic-timeline__label">{t("trace.agentic.next")}</span>{" "}
              <OperationChips operations={summary.next_operations!} childNames={childNames} />
            </p>
          )}
        </div>
      ) : summary.fallback ? (
        <FallbackNote kind="judge" attempts={summary.attempts} />
      ) : (
        // The engine judges every round but the last: a round without verdict or fallback was the last.
        <p className="agentic-timeline__line muted">{t("trace.notJudged")}</p>
      ))}
      {summary && (summary.dropped?.length ?? 0) > 0 && (
        <p className="agentic-timeline__dropped">
          <TriangleAlert aria-hidden="true" size={13} />
          {t("trace.agentic.dropped", {
            count: summary.dropped!.length,
            reasons: [...new Set(summary.dropped!.map((item) => dropReason(t, item.code, item.why)))].join("; "),
          })}
        </p>
      )}
    </li>
  );
}

/** A drop's reason in the reader's language when its code is known, else as the engine wrote it. */
export function dropReason(t: ReturnType<typeof useTranslation>["t"], code: string | undefined, why: string): string {
  return code && DROP_CODES.has(code) ? t(`trace.dropReasons.${code}`) : why;
}

const DROP_CODES = new Set(["unknown_child", "top_k_below_1", "repeated", "off_question"]);

function ConsultedChild({ node, focused }: { node: TraceNode; focused: boolean }) {
  const { t } = useTranslation();
  const name = useComponentName();
  return (
    <li className={`agentic-timeline__child${node.error ? " agentic-timeline__child--failed" : ""}`} data-testid="agentic-child">
      {node.error ? <CircleX aria-hidden="true" size={13} /> : <Search aria-hidden="true" size={13} />}
      <span className="agentic-timeline__name">{name(node.class)}</span>
      {node.top_k !== null && <span>{t("trace.topK", { k: node.top_k })}</span>}
      <span>{node.error ? t("trace.agentic.failed") : t("trace.agentic.results", { count: node.results.length })}</span>
      {focused && <q className="agentic-timeline__query">{node.query}</q>}
    </li>
  );
}

/** The operations a plan or a verdict chose: "BM25 · top 5 · “query”". */
function OperationChips({ operations, childNames }: { operations: Operation[]; childNames: string[] }) {
  const { t } = useTranslation();
  const name = useComponentName();
  const label = (operation: Operation) => {
    const component = childNames[operation.child];
    return operation.child_name ?? (component ? name(component) : t("trace.childN", { n: operation.child }));
  };
  return (
    <span className="agentic-timeline__ops">
      {operations.map((operation, index) => (
        <span key={index} className="chip agentic-timeline__op" data-testid="agentic-operation">
          {label(operation)}
          <span aria-hidden="true"> · </span>
          <span title={operation.top_k_from === "child" ? t("trace.agentic.ownTopK") : undefined}>{t("trace.topK", { k: operation.top_k })}</span>
          {operation.query && (
            <>
              <span aria-hidden="true"> · </span>
              <q className="agentic-timeline__query">{operation.query}</q>
            </>
          )}
        </span>
      ))}
    </span>
  );
}

function Pending({ text, testId }: { text: string; testId?: string }) {
  return (
    <p className="agentic-timeline__line agentic-timeline__pending" data-testid={testId}>
      <LoaderCircle aria-hidden="true" className="spin" size={14} />
      {text}
    </p>
  );
}
