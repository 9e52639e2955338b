import { useTranslation } from "react-i18next";

/** Whether a saved pipeline can answer now, or what it is waiting for (e.g. an index being built). */
export function ReadinessChip({ ready, waitingFor }: { ready: boolean; waitingFor: string[] }) {
  const { t } = useTranslation();
  if (ready) return <span className="chip chip--accent">{t("pipelines.ready")}</span>;
  return (
    <span className="chip chip--warning" title={waitingFor.join("\n")}>
      {t("pipelines.waiting", { count: waitingFor.length })}
    </span>
  );
}
