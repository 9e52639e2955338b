import { useCallback, useEffect, useState } from "react";

import {
  evaluationSocketUrl,
  fetchEvaluation,
  isActive,
  type EvaluationDetail,
  type ProgressMessage,
  type ProgressSnapshot,
} from "../../api/evaluation";
import { useLiveFeed } from "../../lib/liveFeed";

/** The evaluation after a progress snapshot; results and report come only from the REST API. */
export function applySnapshot(evaluation: EvaluationDetail, snapshot: ProgressSnapshot): EvaluationDetail {
  if (snapshot.id !== evaluation.id) return evaluation;
  return {
    ...evaluation,
    status: snapshot.status,
    progress: { ...evaluation.progress, done: snapshot.done, total: snapshot.total },
    error: snapshot.error ?? "",
  };
}

/**
 * One evaluation, read from the REST API and, while it is queued or running, kept current by its
 * websocket (polled while the websocket is down). Once it is done or failed it is read once more,
 * for its results.
 */
export function useEvaluationFeed(id: number) {
  const load = useCallback((signal?: AbortSignal) => fetchEvaluation(id, signal), [id]);
  const [active, setActive] = useState(false);
  const feed = useLiveFeed<EvaluationDetail, ProgressMessage>({
    load,
    socketUrl: active ? evaluationSocketUrl(id) : null,
    apply: (evaluation, message) =>
      evaluation && message.type === "evaluation.progress" ? applySnapshot(evaluation, message.evaluation) : evaluation,
    onChange: (_, evaluation) => setActive(isActive(evaluation.status)),
  });
  const { data: evaluation, refresh } = feed;
  // Finished with only the websocket's word for it: its results (or its end time) are still to be read.
  const unread = evaluation !== null && !isActive(evaluation.status) && evaluation.finished_at === null;

  useEffect(() => {
    if (!unread) return;
    const controller = new AbortController();
    void refresh(controller.signal);
    return () => controller.abort();
  }, [unread, refresh]);

  return { evaluation, error: feed.error, connection: feed.connection, refresh };
}
