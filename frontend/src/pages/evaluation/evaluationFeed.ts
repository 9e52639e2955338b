import { useCallback, useEffect, useRef, useState } from "react";

import {
  evaluationSocketUrl,
  fetchEvaluation,
  isActive,
  type EvaluationDetail,
  type ProgressMessage,
  type ProgressSnapshot,
} from "../../api/evaluation";

/** How the evaluation stays current: pushed by the server, asked for every few seconds, or no longer changing. */
export type Connection = "connecting" | "live" | "polling" | "idle";

/** Closed by the server: the evaluation is not the user's. */
const FORBIDDEN = 4403;
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30000;
export const POLL_MS = 2000;

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
 * Call `refresh` every `ms` while `busy`, aborting it when the component goes or stops being
 * busy. The first call comes after one pause: the caller has just loaded.
 */
export function usePolling(busy: boolean, refresh: (signal: AbortSignal) => Promise<unknown>, ms = POLL_MS): void {
  const latest = useRef(refresh);
  latest.current = refresh;
  useEffect(() => {
    if (!busy) return;
    const controller = new AbortController();
    let timer: number | undefined;
    const tick = () => {
      timer = window.setTimeout(async () => {
        try {
          await latest.current(controller.signal);
        } catch {
          // A failed refresh is tried again at the next tick.
        }
        if (!controller.signal.aborted) tick();
      }, ms);
    };
    tick();
    return () => {
      controller.abort();
      window.clearTimeout(timer);
    };
  }, [busy, ms]);
}

/**
 * One evaluation, read from the REST API and, while it is queued or running, kept current by its
 * websocket. When the websocket cannot connect (a server without websockets) or drops, the
 * evaluation is read again at once and then every few seconds until it reconnects, with growing
 * pauses between attempts. Once it is done or failed it is read once more, for its results.
 */
export function useEvaluationFeed(id: number) {
  const [evaluation, setEvaluation] = useState<EvaluationDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [connection, setConnection] = useState<Connection>("connecting");

  const refresh = useCallback(
    async (signal?: AbortSignal) => {
      try {
        const fresh = await fetchEvaluation(id, signal);
        setEvaluation(fresh);
        setError(null);
      } catch (failure) {
        if (!signal?.aborted) setError((failure as Error).message);
      }
    },
    [id],
  );

  useEffect(() => {
    const controller = new AbortController();
    void refresh(controller.signal);
    return () => controller.abort();
  }, [refresh]);

  const active = evaluation ? isActive(evaluation.status) : false;
  // Finished with only the websocket's word for it: its results (or its end time) are still to be read.
  const unread = evaluation !== null && !active && evaluation.finished_at === null;

  useEffect(() => {
    if (!unread) return;
    const controller = new AbortController();
    void refresh(controller.signal);
    return () => controller.abort();
  }, [unread, refresh]);

  useEffect(() => {
    if (!active) {
      setConnection("idle");
      return;
    }
    const controller = new AbortController();
    let socket: WebSocket | null = null;
    let reconnectTimer: number | undefined;
    let pollTimer: number | undefined;
    let attempts = 0;

    const poll = () => {
      pollTimer = window.setTimeout(async () => {
        await refresh(controller.signal);
        if (!controller.signal.aborted) poll();
      }, POLL_MS);
    };
    const stopPolling = () => {
      window.clearTimeout(pollTimer);
      pollTimer = undefined;
    };

    const connect = () => {
      setConnection((current) => (current === "polling" ? current : "connecting"));
      socket = new WebSocket(evaluationSocketUrl(id));
      socket.onopen = () => {
        attempts = 0;
        stopPolling();
        setConnection("live");
      };
      socket.onmessage = (event: MessageEvent<string>) => {
        let message: ProgressMessage;
        try {
          message = JSON.parse(event.data) as ProgressMessage;
        } catch {
          return;
        }
        if (message.type !== "evaluation.progress") return;
        setEvaluation((current) => (current ? applySnapshot(current, message.evaluation) : current));
      };
      socket.onclose = (event) => {
        socket = null;
        if (controller.signal.aborted) return;
        setConnection("polling");
        // Whatever happened while the socket was down is on the server.
        if (pollTimer === undefined) {
          void refresh(controller.signal);
          poll();
        }
        if (event.code === FORBIDDEN) return;
        const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** attempts++);
        reconnectTimer = window.setTimeout(connect, delay);
      };
    };
    connect();

    return () => {
      controller.abort();
      window.clearTimeout(reconnectTimer);
      stopPolling();
      if (socket) {
        socket.onclose = null;
        socket.close();
      }
    };
  }, [id, active, refresh]);

  return { evaluation, error, connection, refresh };
}
