import { LoaderCircle } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { DatasetStatus, EvaluationStatus } from "../../api/evaluation";

const TONES: Record<DatasetStatus | EvaluationStatus, string> = {
  importing: "badge--queued",
  indexing: "",
  queued: "badge--queued",
  running: "",
  ready: "badge--ready",
  done: "badge--ready",
  failed: "badge--failed",
};

function Badge({ status, label }: { status: DatasetStatus | EvaluationStatus; label: string }) {
  const busy = status === "importing" || status === "indexing" || status === "running";
  return (
    <span className={`badge evaluation-badge ${TONES[status]}`.trim()} data-status={status}>
      {busy && <LoaderCircle aria-hidden="true" size={12} className="spin" />}
      {label}
    </span>
  );
}

export function DatasetStatusBadge({ status }: { status: DatasetStatus }) {
  const { t } = useTranslation();
  return <Badge status={status} label={t(`evaluation.datasetStatus.${status}`)} />;
}

export function EvaluationStatusBadge({ status }: { status: EvaluationStatus }) {
  const { t } = useTranslation();
  return <Badge status={status} label={t(`evaluation.status.${status}`)} />;
}
