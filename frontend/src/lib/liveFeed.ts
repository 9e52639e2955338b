import { useCallback, useEffect, useRef, useState, type SetStateAction } from "react";

/** How a feed stays current: pushed by the server, asked for every few seconds, or not watched. */
export type Connection = "connecting" | "live" | "polling" | "idle";

/** Closed by the server: the user may not watch this. Polling goes on; reconnecting would not help. */
const FORBIDDEN = 4403;
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30000;
/** After a message that settles something, wait this long for its siblings before reading again. */
const SETTLE_MS = 500;
export const POLL_MS = 2000;

export interface LiveFeedOptions<T, M> {
  /** Reads the whole state from the REST API. Keep it stable (a module function or `useCallback`):
   *  a new function (say, for another id) reads again and reconnects. */
  load: (signal?: AbortSignal) => Promise<T>;
  /** The websocket that pushes messages; `null` while nothing is to be watched. */
  socketUrl: string | null;
  /** The state after one message; a message the feed does not know leaves it as it is. */
  apply: (current: T | null, message: M) => T | null;
  /** The pause between reads while the websocket is down. */
  pollMs?: (current: T | null) => number;
  /** Messages after which the REST API has fields the websocket does not carry. */
  reloadAfter?: (message: M) => boolean;
  /** Hears every change of state, with the state before it. */
  onChange?: (before: T | null, after: T) => void;
}

/**
 * State read from the REST API and kept current by a websocket. The websocket opens after the
 * first read, so an older read never overwrites a newer message. When it cannot connect (a proxy
 * without websockets) or drops, the state is read at once and then polled until it reconnects,
 * with growing pauses between attempts.
 */
export function useLiveFeed<T, M>({ load, socketUrl, apply, pollMs, reloadAfter, onChange }: LiveFeedOptions<T, M>) {
  const [data, setState] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [connection, setConnection] = useState<Connection>(socketUrl === null ? "idle" : "connecting");
  const latest = useRef<T | null>(null);
  const handlers = useRef({ apply, pollMs, reloadAfter, onChange });
  handlers.current = { apply, pollMs, reloadAfter, onChange };
  const firstRead = useRef<Promise<void>>(Promise.resolve());

  const setData = useCallback((action: SetStateAction<T | null>) => {
    const before = latest.current;
    const next = typeof action === "function" ? (action as (current: T | null) => T | null)(before) : action;
    if (Object.is(next, before)) return;
    latest.current = next;
    setState(next);
    if (next !== null) handlers.current.onChange?.(before, next);
  }, []);

  const refresh = useCallback(
    async (signal?: AbortSignal) => {
      try {
        const fresh = await load(signal);
        if (signal?.aborted) return;
        setData(fresh);
        setError(null);
      } catch (failure) {
        if (!signal?.aborted) setError((failure as Error).message);
      }
    },
    [load, setData],
  );

  useEffect(() => {
    const controller = new AbortController();
    firstRead.current = refresh(controller.signal);
    return () => controller.abort();
  }, [refresh]);

  useEffect(() => {
    if (socketUrl === null) {
      setConnection("idle");
      return;
    }
    const controller = new AbortController();
    let socket: WebSocket | null = null;
    let reconnectTimer: number | undefined;
    let pollTimer: number | undefined;
    let settleTimer: number | undefined;
    let attempts = 0;

    const poll = () => {
      const pause = handlers.current.pollMs?.(latest.current) ?? POLL_MS;
      pollTimer = window.setTimeout(async () => {
        await refresh(controller.signal);
        if (!controller.signal.aborted) poll();
      }, pause);
    };
    const stopPolling = () => {
      window.clearTimeout(pollTimer);
      pollTimer = undefined;
    };

    const connect = () => {
      setConnection((current) => (current === "polling" ? current : "connecting"));
      socket = new WebSocket(socketUrl);
      socket.onopen = () => {
        attempts = 0;
        stopPolling();
        setConnection("live");
      };
      socket.onmessage = (event: MessageEvent<string>) => {
        let message: M;
        try {
          message = JSON.parse(event.data) as M;
        } catch {
          return;
        }
        setData((current) => handlers.current.apply(current, message));
        if (handlers.current.reloadAfter?.(message)) {
          window.clearTimeout(settleTimer);
          settleTimer = window.setTimeout(() => void refresh(controller.signal), SETTLE_MS);
        }
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

    void firstRead.current.then(() => {
      if (!controller.signal.aborted) connect();
    });

    return () => {
      controller.abort();
      window.clearTimeout(reconnectTimer);
      window.clearTimeout(settleTimer);
      stopPolling();
      if (socket) {
        socket.onclose = null;
        socket.close();
      }
    };
  }, [socketUrl, refresh, setData]);

  return { data, setData, error, connection, refresh };
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
