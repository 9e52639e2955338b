import { useCallback, useEffect, useRef, useState } from "react";

import {
  DOCUMENT_STAGES,
  fetchDocuments,
  knowledgeSocketUrl,
  type DocumentProgress,
  type DocumentStatus,
  type KnowledgeDocument,
} from "../../api/knowledge";

/** What `ws/knowledge/<id>/` sends. */
export type FeedMessage =
  | { type: "snapshot"; documents: DocumentProgress[] }
  | { type: "document.progress"; document: DocumentProgress }
  | { type: "document.deleted"; document_id: number };

/** How the list stays current: pushed by the server, or asked for every few seconds. */
export type Connection = "connecting" | "live" | "polling";

/** Closed by the server because the user may not watch this knowledge base. */
const FORBIDDEN = 4403;
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30000;
const POLL_BUSY_MS = 2000;
const POLL_IDLE_MS = 10000;
const SETTLE_MS = 500;

function merged(document: KnowledgeDocument | undefined, progress: DocumentProgress): KnowledgeDocument {
  return {
    mime: "",
    size: 0,
    page_count: null,
    created_at: new Date().toISOString(),
    ...document,
    id: progress.id,
    name: progress.name,
    status: progress.status,
    progress: { done: progress.done, total: progress.total },
    chunk_count: progress.chunk_count,
    error: progress.error,
    error_detail: progress.error_detail ?? null,
    error_code: progress.error_code,
  };
}

/** The documents after one message; fields only the REST API has (size, pages) are kept. */
export function applyFeedMessage(documents: readonly KnowledgeDocument[], message: FeedMessage): KnowledgeDocument[] {
  switch (message.type) {
    case "snapshot": {
      const known = new Map(documents.map((document) => [document.id, document]));
      return message.documents.map((progress) => merged(known.get(progress.id), progress));
    }
    case "document.progress": {
      const at = documents.findIndex((document) => document.id === message.document.id);
      if (at < 0) return [merged(undefined, message.document), ...documents];
      return documents.map((document, index) => (index === at ? merged(document, message.document) : document));
    }
    case "document.deleted":
      return documents.filter((document) => document.id !== message.document_id);
  }
}

/**
 * Put documents the upload answered with in the list, newest first. Events may have brought a
 * document first: its progress is kept, and the upload's fields the events lack (size, type) added.
 */
export function addDocuments(documents: readonly KnowledgeDocument[], added: readonly KnowledgeDocument[]): KnowledgeDocument[] {
  const byId = new Map(added.map((document) => [document.id, document]));
  const known = documents.map((document) => {
    const uploaded = byId.get(document.id);
    return uploaded ? { ...uploaded, ...progressOf(document) } : document;
  });
  const fresh = added.filter((document) => !documents.some((item) => item.id === document.id));
  return [...fresh, ...known];
}

function progressOf(document: KnowledgeDocument) {
  const { status, progress, chunk_count, error, error_detail, error_code } = document;
  return { status, progress, chunk_count, error, error_detail, error_code };
}

export function isInProgress(document: { status: DocumentStatus }): boolean {
  return (DOCUMENT_STAGES as readonly string[]).includes(document.status);
}

/**
 * The knowledge base's documents, kept current by its websocket; when the websocket cannot
 * connect (a proxy without websockets, a plain WSGI server) or drops, the list is polled until
 * it reconnects, with growing pauses between attempts.
 */
export function useDocumentFeed(knowledgeBaseId: number, language: string) {
  const [documents, setDocuments] = useState<KnowledgeDocument[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [connection, setConnection] = useState<Connection>("connecting");
  const latest = useRef<KnowledgeDocument[] | null>(null);
  latest.current = documents;

  const refresh = useCallback(
    async (signal?: AbortSignal) => {
      try {
        const fresh = await fetchDocuments(knowledgeBaseId, signal);
        setDocuments(fresh);
        setError(null);
      } catch (failure) {
        if (!signal?.aborted) setError((failure as Error).message);
      }
    },
    [knowledgeBaseId],
  );

  useEffect(() => {
    const controller = new AbortController();
    let socket: WebSocket | null = null;
    let reconnectTimer: number | undefined;
    let pollTimer: number | undefined;
    let settleTimer: number | undefined;
    let attempts = 0;

    const poll = () => {
      const busy = latest.current?.some(isInProgress) ?? true;
      pollTimer = window.setTimeout(async () => {
        await refresh(controller.signal);
        if (!controller.signal.aborted) poll();
      }, busy ? POLL_BUSY_MS : POLL_IDLE_MS);
    };
    const stopPolling = () => {
      window.clearTimeout(pollTimer);
      pollTimer = undefined;
    };

    const connect = () => {
      socket = new WebSocket(knowledgeSocketUrl(knowledgeBaseId, language));
      socket.onopen = () => {
        attempts = 0;
        stopPolling();
        setConnection("live");
      };
      socket.onmessage = (event: MessageEvent<string>) => {
        let message: FeedMessage;
        try {
          message = JSON.parse(event.data) as FeedMessage;
        } catch {
          return;
        }
        setDocuments((current) => applyFeedMessage(current ?? [], message));
        // Finished documents gain fields only the REST API has (page count): read them once.
        if (message.type === "document.progress" && !isInProgress(message.document)) {
          window.clearTimeout(settleTimer);
          settleTimer = window.setTimeout(() => void refresh(controller.signal), SETTLE_MS);
        }
      };
      socket.onclose = (event) => {
        socket = null;
        if (controller.signal.aborted) return;
        setConnection("polling");
        if (pollTimer === undefined) poll();
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
      window.clearTimeout(settleTimer);
      stopPolling();
      if (socket) {
        socket.onclose = null;
        socket.close();
      }
    };
  }, [knowledgeBaseId, language, refresh]);

  return { documents, setDocuments, error, connection, refresh };
}
