import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";

import type { UploadResult } from "../api/client";
import { pathErrorsIn, pathErrorsOf, type PathError } from "../api/components";
import { UnplacedErrors } from "./fields";
import { Modal } from "./Modal";
import { ProgressBar } from "./StatusViews";
import { useToast } from "./Toasts";

/**
 * Sending a dialog's form: as JSON, or as a file upload with its progress. The server's errors
 * that name a field are kept for the field; any other failure is a toast titled `failedTitle`.
 */
export function useSubmission(failedTitle: string) {
  const { t } = useTranslation();
  const toast = useToast();
  const [errors, setErrors] = useState<PathError[]>([]);
  const [busy, setBusy] = useState(false);
  const [uploaded, setUploaded] = useState<number | null>(null);
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);

  const fail = (list: PathError[] | null, error?: unknown) => {
    if (list) setErrors(list);
    else toast.error(failedTitle, error);
    setBusy(false);
    setUploaded(null);
  };
  const start = () => {
    setBusy(true);
    setErrors([]);
  };

  /** Send a JSON request; `onDone` hears its answer. */
  const send = async <T,>(request: () => Promise<T>, onDone: (answer: T) => void) => {
    start();
    try {
      onDone(await request());
    } catch (error) {
      fail(pathErrorsOf(error), error);
    }
  };

  /** Upload a form with its progress; `onDone` hears the created object (a 201's body). */
  const upload = async <T,>(
    request: (onProgress: (fraction: number) => void, signal: AbortSignal) => Promise<UploadResult>,
    onDone: (created: T) => void,
  ) => {
    start();
    abort.current = new AbortController();
    setUploaded(0);
    try {
      const result = await request(setUploaded, abort.current.signal);
      if (result.status === 201) onDone(result.body as T);
      else fail(result.status === 400 ? pathErrorsIn(result.body) : null, new Error(t("errors.http", { status: result.status })));
    } catch (error) {
      fail(null, error);
    }
  };

  const messagesAt = (field: string) => errors.filter((error) => error.path === field).map((error) => error.message);
  return { errors, setErrors, busy, uploaded, send, upload, messagesAt };
}

interface SubmitDialogProps {
  title: ReactNode;
  submitLabel: string;
  /** Whether the form holds enough to send. */
  ready: boolean;
  busy: boolean;
  onSubmit: () => void;
  onClose: () => void;
  /** The upload's progress (0–1) while a file is sent, and what is being sent. */
  uploaded?: number | null;
  uploadLabel?: string;
  size?: "small" | "medium" | "large";
  /** "off" for a form of secrets the browser must not offer to remember. */
  autoComplete?: "off";
  /** The server's errors that no field of the form shows. */
  unplacedErrors: readonly PathError[];
  children: ReactNode;
}

/** A modal form with Cancel and a submit button, an upload's progress, and the errors no field shows. */
export function SubmitDialog(props: SubmitDialogProps) {
  const { t } = useTranslation();
  const formId = useId();
  return (
    <Modal
      title={props.title}
      onClose={props.onClose}
      size={props.size}
      footer={
        <>
          <button type="button" className="button" onClick={props.onClose}>
            {t("common.cancel")}
          </button>
          <button type="submit" form={formId} className="button button--primary" disabled={props.busy || !props.ready}>
            {props.submitLabel}
          </button>
        </>
      }
    >
      <form
        id={formId}
        className="stack"
        noValidate
        autoComplete={props.autoComplete}
        onSubmit={(event) => {
          event.preventDefault();
          if (props.ready && !props.busy) props.onSubmit();
        }}
      >
        {props.children}
        {props.uploaded != null && (
          <div className="upload-item__progress">
            <ProgressBar value={props.uploaded} label={props.uploadLabel ?? ""} />
            <span className="upload-item__percent">{t("upload.percent", { percent: Math.round(props.uploaded * 100) })}</span>
          </div>
        )}
        <UnplacedErrors errors={props.unplacedErrors} />
      </form>
    </Modal>
  );
}
