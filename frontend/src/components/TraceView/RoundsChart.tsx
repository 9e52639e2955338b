import { useId } from "react";
import { useTranslation } from "react-i18next";

import type { RoundSummary } from "../../api/chat";

const WIDTH = 280;
const HEIGHT = 110;
const LEFT = 26;
const RIGHT = 10;
const TOP = 10;
const BOTTOM = 22;
/** Below this width per round a word does not fit under its bar, and the round's number alone does. */
const LABEL_ROOM = 48;

/**
 * Pool size (line) and new chunks (bars) per round, hand-drawn in SVG: two series over a handful
 * of rounds do not need a charting library.
 */
export function RoundsChart({ rounds }: { rounds: RoundSummary[] }) {
  const { t } = useTranslation();
  const titleId = useId();
  const top = Math.max(1, ...rounds.map((round) => Math.max(round.pool_size, round.added.length)));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const step = plotWidth / rounds.length;
  const x = (index: number) => LEFT + step * (index + 0.5);
  const y = (value: number) => TOP + plotHeight - (value / top) * plotHeight;
  const bar = Math.min(22, step * 0.45);
  const line = rounds.map((round, index) => `${index === 0 ? "M" : "L"}${x(index).toFixed(1)},${y(round.pool_size).toFixed(1)}`).join(" ");
  const summary = rounds.map((round) => t("trace.chartRound", { n: round.round, pool: round.pool_size, added: round.added.length })).join("; ");

  return (
    <figure className="rounds-chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={titleId}>
        <title id={titleId}>{`${t("trace.chartTitle")}: ${summary}`}</title>
        <line className="rounds-chart__axis" x1={LEFT} y1={TOP + plotHeight} x2={WIDTH - RIGHT} y2={TOP + plotHeight} />
        <line className="rounds-chart__grid" x1={LEFT} y1={TOP} x2={WIDTH - RIGHT} y2={TOP} />
        <text className="rounds-chart__label" x={LEFT - 6} y={TOP + 4} textAnchor="end">{top}</text>
        <text className="rounds-chart__label" x={LEFT - 6} y={TOP + plotHeight + 4} textAnchor="end">0</text>
        {rounds.map((round, index) => (
          <g key={round.round}>
            <rect
              className="rounds-chart__bar"
              data-testid="chart-bar"
              x={x(index) - bar / 2}
              y={y(round.added.length)}
              width={bar}
              height={Math.max(0, TOP + plotHeight - y(round.added.length))}
              rx={3}
            />
            <text className="rounds-chart__label" x={x(index)} y={HEIGHT - 6} textAnchor="middle">
              {step >= LABEL_ROOM ? t("trace.roundShort", { n: round.round }) : round.round}
            </text>
          </g>
        ))}
        <path className="rounds-chart__line" d={line} />
        {rounds.map((round, index) => (
          <circle key={round.round} className="rounds-chart__point" data-testid="chart-point" cx={x(index)} cy={y(round.pool_size)} r={3.5} />
        ))}
      </svg>
      <figcaption className="rounds-chart__legend">
        <span className="rounds-chart__key rounds-chart__key--pool">{t("trace.poolSize")}</span>
        <span className="rounds-chart__key rounds-chart__key--added">{t("trace.newChunks")}</span>
      </figcaption>
    </figure>
  );
}
