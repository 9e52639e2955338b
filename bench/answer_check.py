"""The answer check over drafts a run saved: what the current thresholds decline, asking nothing again.

Run from the repository root, on rows ``bench/answers.py --absent --rows FILE`` wrote::

    .venv/bin/python bench/answer_check.py FILE [FILE ...]

Each row holds the model's draft, the question searched and the passages it read, so the check
(``rag.strategies.grounding.check``) can be run again in a second instead of an hour of answers: a
threshold is chosen on one run's rows and tried on another's (``--from-question`` runs hold out
questions). Rows the relevance floor declined have no draft and keep their verdict.

Per dataset and kind: ``declined`` (then, as saved, and now), ``concise_contains`` now (the draft's
when the check keeps it), ``supported_citations_now`` (the share of the kept drafts' citations
whose passage holds a reference answer), and the questions whose verdict changed. One JSON line per dataset.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _common import dataset_language, emit, mean_of
from rag.evaluation.answers import answer_contains, concise_contains
from rag.strategies.answer_prompts import cited_numbers
from rag.strategies.grounding import check, repointed


def rechecked(row: dict) -> dict:
    """``row``'s verdict under the current check: declined or not, its concise_contains, and
    for each passage a kept draft cites (wrong citations re-pointed, as the answer shows them), whether it holds a reference answer."""
    language = dataset_language(row["dataset"])
    if row["declined"] and row["declined_by"] not in ("support", "answer"):
        return {"declined": True, "concise_contains": 0.0, "citations": []}
    grounding = check(row["draft"], row.get("answered_question") or row["search_question"] or row["question"], row["passages"], language)
    if grounding.declined_by is not None:
        return {"declined": True, "concise_contains": 0.0, "citations": []}
    answer = repointed(row["draft"], grounding)
    cited = [number for number in dict.fromkeys(cited_numbers(answer)) if 1 <= number <= len(row["passages"])]
    return {"declined": False, "concise_contains": concise_contains(row["draft"], row["answers"], language),
            "citations": [answer_contains(row["passages"][number - 1], row["answers"], language) for number in cited]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows", type=Path, nargs="+")
    options = parser.parse_args()
    saved = [json.loads(line) for path in options.rows
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    saved = [row for row in saved if row.get("kind") in ("present", "absent") and "draft" in row]
    for name in dict.fromkeys(row["dataset"] for row in saved):
        figures: dict = {}
        for kind in ("present", "absent"):
            rows = [row for row in saved if row["dataset"] == name and row["kind"] == kind]
            if not rows:
                continue
            now = [rechecked(row) for row in rows]
            figures[kind] = {
                "questions": len(rows),
                "declined_then": mean_of([float(row["declined"]) for row in rows]),
                "declined_now": mean_of([float(verdict["declined"]) for verdict in now]),
                "concise_contains_then": mean_of([row["concise_contains"] for row in rows]),
                "concise_contains_now": mean_of([verdict["concise_contains"] for verdict in now]),
                "supported_citations_now": mean_of([float(held) for verdict in now for held in verdict["citations"]]),
                "changed": [row["question"] for row, verdict in zip(rows, now, strict=True)
                            if verdict["declined"] != row["declined"]],
            }
        emit({"dataset": name, **figures})


if __name__ == "__main__":
    main()
