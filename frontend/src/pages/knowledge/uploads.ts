import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";

import { extractErrorMessage } from "../../api/client";
import { uploadDocument, type KnowledgeDocument, type UploadOutcome } from "../../api/knowledge";

export type UploadState =
  | { status: "waiting" }
  | { status: "uploading"; progress: number }
  | { status: "duplicate"; reason: string }
  | { status: "rejected"; reason: string }
  | { status: "failed"; reason: string };

export interface Upload {
  key: number;
  file: File;
  state: UploadState;
}

/** Files sent at once; the rest wait their turn. */
const PARALLEL = 3;

function isOutcome(body: unknown): body is UploadOutcome {
  return typeof body === "object" && body !== null && Array.isArray((body as UploadOutcome).rejected);
}

/**
 * Upload files one request each (so each has its own progress), a few at a time. An accepted
 * file leaves this list for the documents list (`onAccepted`); a refused one stays, with the
 * server's reason, to be forced (duplicates), retried (failures) or dismissed.
 */
export function useUploads(knowledgeBaseId: number, onAccepted: (documents: KnowledgeDocument[]) => void) {
  const { t } = useTranslation();
  const [uploads, setUploads] = useState<Upload[]>([]);
  const nextKey = useRef(1);
  const active = useRef(new Set<number>());
  const forced = useRef(new Set<number>());
  const accepted = useRef(onAccepted);
  accepted.current = onAccepted;
  const aborter = useRef(new AbortController());

  useEffect(() => {
    const controller = new AbortController();
    aborter.current = controller;
    return () => controller.abort();
  }, []);

  const settle = useCallback((key: number, state: UploadState | null) => {
    active.current.delete(key);
    setUploads((current) => (state ? current.map((item) => (item.key === key ? { ...item, state } : item)) : current.filter((item) => item.key !== key)));
  }, []);

  const send = useCallback(
    async (upload: Upload) => {
      active.current.add(upload.key);
      const setProgress = (progress: number) =>
        setUploads((current) => current.map((item) => (item.key === upload.key ? { ...item, state: { status: "uploading", progress } } : item)));
      setProgress(0);
      try {
        const { status, body } = await uploadDocument(knowledgeBaseId, upload.file, {
          force: forced.current.has(upload.key),
          onProgress: setProgress,
          signal: aborter.current.signal,
        });
        const rejection = isOutcome(body) ? body.rejected[0] : undefined;
        if (status === 201 && isOutcome(body)) {
          accepted.current(body.documents);
          settle(upload.key, null);
        } else if (rejection?.code === "duplicate") {
          settle(upload.key, { status: "duplicate", reason: rejection.reason });
        } else if (rejection || status === 413) {
          settle(upload.key, { status: "rejected", reason: rejection?.reason ?? t("upload.tooLarge") });
        } else {
          settle(upload.key, { status: "failed", reason: extractErrorMessage(body) ?? t("errors.http", { status }) });
        }
      } catch (error) {
        if (!aborter.current.signal.aborted) settle(upload.key, { status: "failed", reason: (error as Error).message });
      }
    },
    [knowledgeBaseId, settle, t],
  );

  // Start waiting uploads while fewer than PARALLEL are under way.
  useEffect(() => {
    const free = PARALLEL - active.current.size;
    uploads
      .filter((item) => item.state.status === "waiting" && !active.current.has(item.key))
      .slice(0, Math.max(0, free))
      .forEach((item) => void send(item));
  }, [uploads, send]);

  const add = useCallback((files: readonly File[]) => {
    const added = files.map((file) => ({ key: nextKey.current++, file, state: { status: "waiting" } as UploadState }));
    setUploads((current) => [...current, ...added]);
  }, []);

  const requeue = useCallback((key: number, force: boolean) => {
    if (force) forced.current.add(key);
    setUploads((current) => current.map((item) => (item.key === key ? { ...item, state: { status: "waiting" } } : item)));
  }, []);

  const dismiss = useCallback((key: number) => {
    setUploads((current) => current.filter((item) => item.key !== key));
  }, []);

  return {
    uploads,
    add,
    /** Upload a duplicate anyway. */
    force: (key: number) => requeue(key, true),
    retry: (key: number) => requeue(key, false),
    dismiss,
  };
}
