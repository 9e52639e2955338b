import { useCallback } from "react";

import {
  DOCUMENT_STAGES,
  fetchDocuments,
  knowledgeSocketUrl,
  type DocumentProgress,
  type DocumentStatus,
  type KnowledgeDocument,
} from "../../api/knowledge";
import { useLiveFeed } from "../../lib/liveFeed";

/** What `ws/knowledge/<id>/` sends. */
export type FeedMessage =
  | { type: "snapshot"; documents: DocumentProgress[] }
  | { type: "document.progress"; document: DocumentProgress }
  | { type: "document.deleted"; document_id: number };

const POLL_BUSY_MS = 2000;
const POLL_IDLE_MS = 10000;

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
    default:
      return [...documents];
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
 * it reconnects.
 */
export function useDocumentFeed(knowledgeBaseId: number, language: string) {
  const load = useCallback((signal?: AbortSignal) => fetchDocuments(knowledgeBaseId, signal), [knowledgeBaseId]);
  const feed = useLiveFeed<KnowledgeDocument[], FeedMessage>({
    load,
    socketUrl: knowledgeSocketUrl(knowledgeBaseId, language),
    apply: (documents, message) => applyFeedMessage(documents ?? [], message),
    pollMs: (documents) => (documents?.some(isInProgress) ?? true ? POLL_BUSY_MS : POLL_IDLE_MS),
    // Finished documents gain fields only the REST API has (page count): read them once.
    reloadAfter: (message) => message.type === "document.progress" && !isInProgress(message.document),
  });
  return { documents: feed.data, setDocuments: feed.setData, error: feed.error, connection: feed.connection, refresh: feed.refresh };
}
