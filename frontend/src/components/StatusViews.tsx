import { CircleAlert, LoaderCircle, RotateCw } from "lucide-react";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";

export function Loading({ label }: { label: string }) {
  return (
    <p role="status" className="status-line">
      <LoaderCircle aria-hidden="true" className="spin" size={18} />
      {label}
    </p>
  );
}

export function EmptyState({ icon, title, children }: { icon: ReactNode; title: string; children?: ReactNode }) {
  return (
    <div className="empty-state">
      <span className="empty-state__icon">{icon}</span>
      <p className="empty-state__title">{title}</p>
      {children}
    </div>
  );
}

export function ErrorNotice({ title, message, onRetry }: { title: string; message: string; onRetry?: () => void }) {
  const { t } = useTranslation();
  return (
    <div role="alert" className="notice notice--error">
      <CircleAlert aria-hidden="true" className="notice__icon" size={20} />
      <div>
        <p className="notice__title">{title}</p>
        <p className="notice__detail">{message}</p>
        {onRetry && (
          <button type="button" className="button notice__action" onClick={onRetry}>
            <RotateCw aria-hidden="true" size={16} />
            {t("common.retry")}
          </button>
        )}
      </div>
    </div>
  );
}

/** A determinate bar; `value` in [0, 1]. */
export function ProgressBar({ value, label, tone }: { value: number; label: string; tone?: "failed" | "done" }) {
  const percent = Math.round(Math.min(1, Math.max(0, value)) * 100);
  return (
    <div
      className={`progress${tone ? ` progress--${tone}` : ""}`}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent}
    >
      <span className="progress__fill" style={{ width: `${percent}%` }} />
    </div>
  );
}
