import { useTranslation } from "react-i18next";

import type { PlaygroundHit } from "../../api/playground";
import { useComponentName } from "../../catalog/CatalogProvider";
import { formatScore } from "../TraceView/format";

interface HitExplanationProps {
  hit: PlaygroundHit;
  language: string;
  /** The translated name of a score scale. */
  scale: (key: string | null | undefined) => string;
}

/** Why a hit ranks where it does: BM25's terms, or the fused children; nothing for a score that explains itself. */
export function HitExplanation({ hit, language, scale }: HitExplanationProps) {
  const { t } = useTranslation();
  const name = useComponentName();
  const number = (value: number) => formatScore(language, value);
  const { terms, sources } = hit.explanation;

  if (terms && terms.length > 0) {
    return (
      <details className="playground-hit__why">
        <summary>{t("playground.why")}</summary>
        <table className="playground-terms">
          <thead>
            <tr>
              <th scope="col">{t("playground.term")}</th>
              <th scope="col">{t("playground.inQuestion")}</th>
              <th scope="col">{t("playground.inChunk")}</th>
              <th scope="col">{t("playground.idf")}</th>
              <th scope="col">{t("playground.adds")}</th>
            </tr>
          </thead>
          <tbody>
            {terms.map((term) => (
              <tr key={term.term} className={term.contribution === 0 ? "muted" : undefined}>
                <th scope="row"><code>{term.term}</code></th>
                <td>{term.query_count}</td>
                <td>{term.term_frequency}</td>
                <td>{number(term.idf)}</td>
                <td>{number(term.contribution)}</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row" colSpan={4}>{t("playground.total", { scale: scale("bm25") })}</th>
              <td data-testid="terms-total">{number(terms.reduce((sum, term) => sum + term.contribution, 0))}</td>
            </tr>
          </tfoot>
        </table>
      </details>
    );
  }

  if (sources && sources.length > 0) {
    return (
      <details className="playground-hit__why">
        <summary>{t("playground.why")}</summary>
        <ul className="plain-list playground-sources">
          {sources.map((source) => (
            <li key={`${source.child}-${source.rank}`}>
              {t(source.weight === undefined ? "playground.source" : "playground.weightedSource", {
                name: name(source.component),
                rank: source.rank,
                scale: scale(source.score_scale),
                score: number(source.score),
                contribution: number(source.contribution),
                weight: source.weight === undefined ? "" : number(source.weight),
                normalised: source.normalised === undefined ? "" : number(source.normalised),
              })}
            </li>
          ))}
        </ul>
      </details>
    );
  }
  return null;
}
