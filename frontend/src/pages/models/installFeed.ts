import { useCallback, useRef } from "react";

import { fetchInstalls, isActiveInstall, modelsSocketUrl, type InstallMessage, type ModelInstall } from "../../api/models";
import { POLL_MS, useLiveFeed } from "../../lib/liveFeed";

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
  const settled = useRef(onSettled);
  settled.current = onSettled;
  const feed = useLiveFeed<ModelInstall[], InstallMessage>({
    load: fetchInstalls,
    socketUrl: modelsSocketUrl(language),
    apply: (installs, message) =>
      message.type === "model.installs" || message.type === "model.install" || message.type === "model.install.deleted"
        ? applyInstallMessage(installs ?? [], message)
        : installs,
    pollMs: (installs) => (installs?.some((install) => isActiveInstall(install.status)) ?? true ? POLL_MS : POLL_MS * 5),
    onChange: (before, after) => {
      for (const id of settledBetween(before ?? [], after)) {
        const install = after.find((item) => item.id === id);
        if (install) settled.current(install);
      }
    },
  });
  const { setData } = feed;

  /** An install the page itself just asked for (the answer may beat or trail its first event). */
  const add = useCallback(
    (install: ModelInstall) =>
      setData((current) => (current?.some((item) => item.id === install.id) ? current : [install, ...(current ?? [])])),
    [setData],
  );

  return { installs: feed.data, error: feed.error, connection: feed.connection, add, refresh: feed.refresh };
}
