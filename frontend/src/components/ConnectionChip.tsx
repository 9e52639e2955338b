import { Radio, RefreshCw } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { Connection } from "../lib/liveFeed";

/**
 * Whether a page's figures are pushed live or read every few seconds; nothing while connecting
 * or once nothing is watched. `subject` names the translation keys: `<subject>.live`,
 * `<subject>.liveHint`, `<subject>.polling`, `<subject>.pollingHint`.
 */
export function ConnectionChip({ connection, subject }: { connection: Connection; subject: "documents" | "evaluation" }) {
  const { t } = useTranslation();
  if (connection !== "live" && connection !== "polling") return null;
  const live = connection === "live";
  return (
    <span className={live ? "chip chip--accent" : "chip"} title={t(`${subject}.${connection}Hint`)}>
      {live ? <Radio aria-hidden="true" size={13} /> : <RefreshCw aria-hidden="true" size={13} />}
      {t(`${subject}.${connection}`)}
    </span>
  );
}
