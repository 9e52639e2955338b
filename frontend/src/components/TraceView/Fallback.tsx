import { TriangleAlert } from "lucide-react";
import { useTranslation } from "react-i18next";

/**
 * What an agentic search did when its model gave no usable answer, in the reader's language. The
 * engine records the fallback in English for the log; where it happened (planning or judging)
 * and after how many attempts is all the view needs to say it.
 */
export function FallbackNote({ kind, attempts }: { kind: "plan" | "judge"; attempts: number }) {
  const { t } = useTranslation();
  return (
    <p className="trace-fallback" role="note">
      <TriangleAlert aria-hidden="true" size={14} />
      <strong>{t("trace.fallback")}</strong> {t(`trace.fallbacks.${kind}`, { count: attempts })}
    </p>
  );
}
