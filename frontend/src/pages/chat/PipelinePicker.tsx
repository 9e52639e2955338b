import { Hourglass, RotateCw, TriangleAlert } from "lucide-react";
import { useId } from "react";
import { useTranslation } from "react-i18next";

import type { PipelineSummary } from "../../api/pipelines";

/** Which pipeline answers; one that cannot answer yet says what it waits for, and one that can says
 * how many documents of its knowledge base it cannot draw on yet. */
export function PipelinePicker({ pipelines, value, disabled, onChange, onRecheck }: {
  pipelines: PipelineSummary[];
  value: number | null;
  disabled: boolean;
  onChange: (id: number) => void;
  onRecheck: () => void;
}) {
  const { t } = useTranslation();
  const id = useId();
  const chosen = pipelines.find((pipeline) => pipeline.id === value) ?? null;
  return (
    <div className="pipeline-picker">
      <div className="pipeline-picker__row">
        <label htmlFor={id} className="field__label">
          {t("chat.pipeline")}
        </label>
        <select id={id} className="input pipeline-picker__select" value={value ?? ""} disabled={disabled} onChange={(event) => onChange(Number(event.target.value))}>
          {value === null && <option value="">{t("chat.choosePipeline")}</option>}
          {pipelines.map((pipeline) => (
            <option key={pipeline.id} value={pipeline.id}>
              {pipeline.ready
                ? t("chat.pipelineOption", { name: pipeline.name, base: pipeline.knowledge_base_name })
                : t("chat.pipelineOptionWaiting", { name: pipeline.name, base: pipeline.knowledge_base_name })}
            </option>
          ))}
        </select>
      </div>
      {chosen && <p className="pipeline-picker__representation">{chosen.representation}</p>}
      {chosen && chosen.ready && chosen.documents_reading > 0 && (
        <div className="notice notice--info notice--compact" role="status">
          <Hourglass aria-hidden="true" className="notice__icon" size={18} />
          <div>
            <p className="notice__title">
              {t("chat.stillReading", { count: chosen.documents_reading, base: chosen.knowledge_base_name })}
            </p>
            <RecheckButton onRecheck={onRecheck} />
          </div>
        </div>
      )}
      {chosen && !chosen.ready && (
        <div className="notice notice--warning notice--compact" role="alert">
          <TriangleAlert aria-hidden="true" className="notice__icon" size={18} />
          <div>
            <p className="notice__title">{t("chat.notReady", { name: chosen.name })}</p>
            <ul className="notice__list">
              {chosen.waiting_for.map((reason) => (
                <li key={reason}>{reason}</li>
              ))}
            </ul>
            <RecheckButton onRecheck={onRecheck} />
          </div>
        </div>
      )}
    </div>
  );
}

/** Asks the server again whether the pipeline is ready and what it still reads. */
function RecheckButton({ onRecheck }: { onRecheck: () => void }) {
  const { t } = useTranslation();
  return (
    <button type="button" className="button button--small notice__action" onClick={onRecheck}>
      <RotateCw aria-hidden="true" size={14} />
      {t("chat.recheck")}
    </button>
  );
}
