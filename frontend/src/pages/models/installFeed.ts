import { useCallback, useEffect, useRef, useState } from "react";

import { fetchInstalls, isActiveInstall, modelsSocketUrl, type InstallMessage, type ModelInstall } from "../../api/models";

/** How the installs stay current: pushed by the server, or asked for every few seconds. */
export type Connection = "connecting" | "live" | "polling";

const FORBIDDEN = 4403;
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30000;
export const POLL_MS = 2000;

/** The installs after one message (a snapshot, a change, a removal), newest first. */
export function applyInstallMessage(installs: readonly ModelInstall[], message: InstallMessage): ModelInstall[] {
  if (message.type === "model.installs") return [...message.installs];
  if (message.type === "model.install.deleted") return installs.filter((install) => install.id !== message.id);
  const at = installs.findIndex((install) => install.id === message.install.id);
  if (at < 0) return [message.install, ...installs];
  return installs.map((install, index) => (index === at ? message.install : install));
}

/** Ids whose install just ended (became installed, failed or removed) between two lists. */
export function settledBetween(before: readonly ModelInstall[], after: readonly ModelInstall[]): number[] {
  const previous = new Map(before.map((install) => [install.id, install.status]));
  return after
    .filter((install) => {
      const was = previous.get(install.id);
      return was !== undefined && was !== install.status && !isActiveInstall(install.status);
    })
    .map((install) => install.id);
}

/**
 * The user's model installs, read from the REST API and kept current by `ws/models/`; while the
 * websocket is down they are polled (every few seconds while one is running) until it
 * reconnects. `onSettled` hears each install that ends, so the page can list the new model.
 */
export function useInstallFeed(language: string, onSettled: (install: ModelInstall) => void) {
  const [installs, setInstalls] = useState<ModelInstall[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [connection, setConnection] = useState<Connection>("connecting");
  const latest = useRef<ModelInstall[] | null>(null);
  const settled = useRef(onSettled);
  settled.current = onSettled;

  const update = useCallback((next: ModelInstall[]) => {
    const before = latest.current ?? [];
    latest.current = next;
    setInstalls(next);
    for (const id of settledBetween(before, next)) {
      const install = next.find((item) => item.id === id);
      if (install) settled.current(install);
    }
  }, []);

  const refresh = useCallback(
    async (signal?: AbortSignal) => {
      try {
        update(await fetchInstalls(signal));
        setError(null);
      } catch (failure) {
        if (!signal?.aborted) setError((failure as Error).message);
      }
    },
    [update],
  );

  /** An install the page itself just asked for (the answer may beat or trail its first event). */
  const add = useCallback(
    (install: ModelInstall) => {
      const current = latest.current ?? [];
      if (!current.some((item) => item.id === install.id)) update([install, ...current]);
    },
    [update],
  );

  useEffect(() => {
    const controller = new AbortController();
    let socket: WebSocket | null = null;
    let reconnectTimer: number | undefined;
    let pollTimer: number | undefined;
    let attempts = 0;

    const poll = () => {
      const busy = latest.current?.some((install) => isActiveInstall(install.status)) ?? true;
      pollTimer = window.setTimeout(async () => {
        await refresh(controller.signal);
        if (!controller.signal.aborted) poll();
      }, busy ? POLL_MS : POLL_MS * 5);
    };
    const stopPolling = () => {
      window.clearTimeout(pollTimer);
      pollTimer = undefined;
    };

    const connect = () => {
      socket = new WebSocket(modelsSocketUrl(language));
      socket.onopen = () => {
        attempts = 0;
        stopPolling();
        setConnection("live");
      };
      socket.onmessage = (event: MessageEvent<string>) => {
        let message: InstallMessage;
        try {
          message = JSON.parse(event.data) as InstallMessage;
        } catch {
          return;
        }
        if (message.type !== "model.installs" && message.type !== "model.install" && message.type !== "model.install.deleted") return;
        update(applyInstallMessage(latest.current ?? [], message));
      };
      socket.onclose = (event) => {
        socket = null;
        if (controller.signal.aborted) return;
        setConnection("polling");
        if (pollTimer === undefined) {
          void refresh(controller.signal);
          poll();
        }
        if (event.code === FORBIDDEN) return;
        const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** attempts++);
        reconnectTimer = window.setTimeout(connect, delay);
      };
    };

    void refresh(controller.signal).then(() => {
      if (!controller.signal.aborted) connect();
    });

    return () => {
      controller.abort();
      window.clearTimeout(reconnectTimer);
      stopPolling();
      if (socket) {
        socket.onclose = null;
        socket.close();
      }
    };
  }, [language, refresh, update]);

  return { installs, error, connection, add, refresh };
}
