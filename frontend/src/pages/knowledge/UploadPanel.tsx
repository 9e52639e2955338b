import { CloudUpload, CopyPlus, RotateCw, X } from "lucide-react";
import { useId, useRef, useState, type DragEvent } from "react";
import { useTranslation } from "react-i18next";

import { ProgressBar } from "../../components/StatusViews";
import { formatBytes } from "../../lib/format";
import type { Upload } from "./uploads";

interface UploadPanelProps {
  uploads: readonly Upload[];
  onFiles: (files: File[]) => void;
  onForce: (key: number) => void;
  onRetry: (key: number) => void;
  onDismiss: (key: number) => void;
}

/** Drop files (or choose them) to add them; each shows its upload progress or why it was refused. */
export function UploadPanel({ uploads, onFiles, onForce, onRetry, onDismiss }: UploadPanelProps) {
  const { t, i18n } = useTranslation();
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const hintId = useId();

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setOver(false);
    const files = [...event.dataTransfer.files];
    if (files.length) onFiles(files);
  };

  return (
    <div className="upload">
      <div
        className={`dropzone${over ? " is-over" : ""}`}
        onDragOver={(event) => {
          event.preventDefault();
          event.dataTransfer.dropEffect = "copy";
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <CloudUpload aria-hidden="true" size={28} className="dropzone__icon" />
        <p className="dropzone__title">{t("upload.drop")}</p>
        <p id={hintId} className="dropzone__hint">
          {t("upload.formats")}
        </p>
        <button type="button" className="button" onClick={() => input.current?.click()} aria-describedby={hintId}>
          {t("upload.choose")}
        </button>
        <input
          ref={input}
          type="file"
          multiple
          hidden
          data-testid="upload-input"
          accept=".pdf,.docx,.html,.htm,.md,.markdown,.txt,application/pdf,text/plain,text/markdown,text/html"
          onChange={(event) => {
            const files = [...(event.target.files ?? [])];
            event.target.value = "";
            if (files.length) onFiles(files);
          }}
        />
      </div>

      {uploads.length > 0 && (
        <ul className="upload-list" aria-label={t("upload.listLabel")}>
          {uploads.map(({ key, file, state }) => (
            <li key={key} className={`upload-item upload-item--${state.status}`}>
              <div className="upload-item__head">
                <span className="upload-item__name">{file.name}</span>
                <span className="upload-item__size">{formatBytes(file.size, i18n.resolvedLanguage ?? "en")}</span>
              </div>
              {(state.status === "waiting" || state.status === "uploading") && (
                <div className="upload-item__progress">
                  <ProgressBar
                    value={state.status === "uploading" ? state.progress : 0}
                    label={t("upload.progressLabel", { name: file.name })}
                  />
                  <span className="upload-item__percent">
                    {state.status === "uploading" ? t("upload.percent", { percent: Math.round(state.progress * 100) }) : t("upload.waiting")}
                  </span>
                </div>
              )}
              {(state.status === "duplicate" || state.status === "rejected" || state.status === "failed") && (
                <div className="upload-item__problem">
                  <p className="upload-item__reason">{state.reason}</p>
                  <div className="upload-item__actions">
                    {state.status === "duplicate" && (
                      <button type="button" className="button button--small" onClick={() => onForce(key)}>
                        <CopyPlus aria-hidden="true" size={14} />
                        {t("upload.anyway")}
                      </button>
                    )}
                    {state.status === "failed" && (
                      <button type="button" className="button button--small" onClick={() => onRetry(key)}>
                        <RotateCw aria-hidden="true" size={14} />
                        {t("common.retry")}
                      </button>
                    )}
                    <button type="button" className="icon-button" aria-label={t("upload.dismiss", { name: file.name })} onClick={() => onDismiss(key)}>
                      <X aria-hidden="true" size={16} />
                    </button>
                  </div>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
