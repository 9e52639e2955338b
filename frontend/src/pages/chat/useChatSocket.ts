import { useCallback, useEffect, useRef, useState } from "react";

import { chatSocketUrl, conversationsSocketUrl, type ConversationEvent, type ServerEvent } from "../../api/chat";

/**
 * `connecting` until the first open; `live` while open; `reconnecting` after a drop; `offline`
 * when it never opened (a server without websockets): asks then go through the REST API, while
 * connecting keeps being tried in the background.
 */
export type SocketState = "connecting" | "live" | "reconnecting" | "offline" | "forbidden";

/** Closed by the server: the conversation is not the user's. */
const FORBIDDEN = 4403;
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 15000;

interface Handlers<Event> {
  onEvent: (event: Event) => void;
  /** The socket is open again after a drop: whatever happened meanwhile is on the server. */
  onReconnected: () => void;
  /** The socket dropped; until it is open again, nothing more arrives. */
  onDropped: () => void;
}

/** The conversation's websocket, reconnecting with growing pauses when it drops. */
export function useChatSocket(conversationId: number, handlers: Handlers<ServerEvent>) {
  return useLiveSocket(chatSocketUrl(conversationId), handlers);
}

/** The user's conversation list as it changes (titles, new and deleted conversations), live. */
export function useConversationsSocket(handlers: Handlers<ConversationEvent>) {
  return useLiveSocket(conversationsSocketUrl(), handlers);
}

function useLiveSocket<Event>(url: string, handlers: Handlers<Event>) {
  const [state, setState] = useState<SocketState>("connecting");
  const socket = useRef<WebSocket | null>(null);
  const latest = useRef(handlers);
  latest.current = handlers;
  /** Who waits for the first connection to open (true) or fail (false); null once it has settled. */
  const waiting = useRef<((open: boolean) => void)[] | null>([]);

  useEffect(() => {
    let closed = false;
    let attempts = 0;
    let everOpened = false;
    let timer: number | undefined;
    waiting.current = [];
    const settle = (open: boolean) => {
      const waiters = waiting.current ?? [];
      waiting.current = null;
      waiters.forEach((resolve) => resolve(open));
    };

    const connect = () => {
      const ws = new WebSocket(url);
      socket.current = ws;
      ws.onopen = () => {
        attempts = 0;
        settle(true);
        setState("live");
        if (everOpened) latest.current.onReconnected();
        everOpened = true;
      };
      ws.onmessage = (event: MessageEvent<string>) => {
        let message: Event;
        try {
          message = JSON.parse(event.data) as Event;
        } catch {
          return;
        }
        latest.current.onEvent(message);
      };
      ws.onclose = (event: CloseEvent) => {
        if (socket.current === ws) socket.current = null;
        if (closed) return;
        if (event.code === FORBIDDEN) {
          setState("forbidden");
          return;
        }
        if (everOpened) latest.current.onDropped();
        else settle(false);
        // Never opened yet: the fallback (REST) takes over at once; after a drop, say we are reconnecting.
        setState(everOpened ? "reconnecting" : "offline");
        const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** attempts++);
        timer = window.setTimeout(connect, delay);
      };
    };
    connect();

    return () => {
      closed = true;
      settle(false);
      window.clearTimeout(timer);
      const ws = socket.current;
      socket.current = null;
      if (ws) {
        ws.onclose = null;
        ws.close();
      }
    };
  }, [url]);

  /** Send a message; false when the socket is not open. */
  const send = useCallback((message: object): boolean => {
    const ws = socket.current;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(message));
    return true;
  }, []);

  /**
   * Whether the socket is open, once its first connection has opened or failed: a question asked
   * while the page is still connecting waits for it (and its live rounds) rather than falling
   * back to REST at once.
   */
  const opened = useCallback((): Promise<boolean> => {
    const ws = socket.current;
    if (ws && ws.readyState === WebSocket.OPEN) return Promise.resolve(true);
    const waiters = waiting.current;
    if (waiters === null) return Promise.resolve(false);
    return new Promise((resolve) => waiters.push(resolve));
  }, []);

  return { state, send, opened };
}
