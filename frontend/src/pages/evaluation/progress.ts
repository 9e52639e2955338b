import type { TFunction } from "i18next";

import type { Evaluation } from "../../api/evaluation";

/**
 * What the progress counts, read as it is: every pipeline searches each query (and answers the
 * first few), so 20 queries over 2 pipelines are "20 queries × 2 pipelines: 40 of 40 runs".
 */
export function progressText(t: TFunction, evaluation: Pick<Evaluation, "progress" | "pipelines">): string {
  const { done, total, queries, answers } = evaluation.progress;
  if (queries === undefined) return t("evaluation.progress.count", { done, total });
  const counts = {
    queries: t("evaluation.progress.queries", { count: queries }),
    pipelines: t("evaluation.progress.pipelines", { count: evaluation.pipelines.length }),
    done,
    total,
  };
  if (!answers) return t("evaluation.progress.runs", counts);
  return t("evaluation.progress.runsAnswered", { ...counts, answers: t("evaluation.progress.answers", { count: answers }) });
}
