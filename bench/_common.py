"""What the benchmarks share: the environment, BEIR datasets read in place, the chunk corpus,
nDCG, and the one JSON line each script ends with.

Import it first (``from _common import ...`` from a script in ``bench/``): it puts
``backend/`` on ``sys.path`` and sets ``HF_HUB_OFFLINE=1`` before anything loads a model.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BACKEND = ROOT / "backend"
if str(BACKEND) not in sys.path:
    sys.path.insert(0, str(BACKEND))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

STARTED = time.perf_counter()
LOAD_AT_START = os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def datasets_dir() -> Path:
    """``$TRELLIS_DATASETS_DIR``, else the ``shared/datasets`` nearest above the checkout (or
    above the repository it was cloned from), as the app finds it."""
    from rag.locations import datasets_dir as find

    return find(ROOT)


def dataset_language(name: str) -> str:
    """The language of a shared dataset's questions, by its name ("xquad-es" → "es", "xquad-zh" →
    "zh-Hant", as the knowledge base's language setting names them)."""
    return "zh-Hant" if name.endswith("zh") else name.rsplit("-", 1)[-1]


def default_dataset(name: str = "scifact") -> Path:
    return datasets_dir() / name


def corpus_file(dataset: Path) -> Path | None:
    for name in ("corpus.jsonl.gz", "corpus.jsonl"):
        if (dataset / name).is_file():
            return dataset / name
    return None


def require_dataset(dataset: Path) -> Path:
    """The corpus file of ``dataset``; exits with a readable message when there is none."""
    found = corpus_file(dataset)
    if found is None:
        print(f"no BEIR corpus at {dataset} (expected corpus.jsonl[.gz]); pass --dataset or set "
              "TRELLIS_DATASETS_DIR", file=sys.stderr)
        raise SystemExit(2)
    return found


def read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def read_corpus(dataset: Path) -> list[dict]:
    return read_jsonl(require_dataset(dataset))


def read_queries(dataset: Path) -> list[dict]:
    return read_jsonl(dataset / "queries.jsonl")


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{query_id: {corpus_id: grade}}`` from a BEIR ``qrels/*.tsv`` (header skipped)."""
    relevant: dict[str, dict[str, int]] = {}
    if not path.is_file():
        return relevant
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3 or not fields[2].lstrip("-").isdigit():
                continue  # the header
            relevant.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    return relevant


def document_text(document: dict) -> str:
    """A BEIR record as one text: the title as its own paragraph, then the body."""
    title, text = (document.get("title") or "").strip(), (document.get("text") or "").strip()
    return f"{title}\n\n{text}" if title and text else (title or text)


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int) -> float:
    gains = sum(relevant.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sum(gain / math.log2(rank + 2)
                for rank, gain in enumerate(sorted(relevant.values(), reverse=True)[:k]))
    return gains / ideal if ideal else 0.0


def documents_of(chunks: Iterable, names: dict[int, str]) -> list[str]:
    """A chunk ranking as a document ranking: each document at the rank of its best chunk."""
    seen: dict[str, None] = {}
    for chunk in chunks:
        seen.setdefault(names[chunk.document_id], None)
    return list(seen)


def chunker(chunk_size: int, chunk_overlap: int):
    """The project's ``RecursiveCharacterChunker`` with these settings, built as the app builds it."""
    from rag.components import load_components
    from rag.core import build

    return build({"component": "RecursiveCharacterChunker",
                  "params": {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap}},
                 kind="chunker", registry=load_components())


@dataclass
class ChunkCorpus:
    """A BEIR corpus cut into engine chunks.

    ``chunks`` is ``{document_id: {position: Chunk}}`` as retrievers receive it (document ids
    1..n in corpus order, chunk ids 1..m in document and position order); ``names`` maps a
    document id back to its BEIR ``_id``.
    """

    chunks: dict
    names: dict[int, str]
    documents: int
    chunk_size: int
    chunk_overlap: int

    @property
    def ordered(self) -> list:
        return [chunk for positions in self.chunks.values() for chunk in positions.values()]

    def __len__(self) -> int:
        return sum(len(positions) for positions in self.chunks.values())


def chunk_corpus(records: Sequence[dict], *, chunk_size: int, chunk_overlap: int, prefix: str = "") -> ChunkCorpus:
    """Split every record with the project's chunker; ``prefix`` namespaces the BEIR ids."""
    from rag.documents.models import Chunk

    splitter = chunker(chunk_size, chunk_overlap)
    chunks: dict = {}
    names: dict[int, str] = {}
    chunk_id = 0
    for document_id, record in enumerate(records, start=1):
        names[document_id] = prefix + str(record["_id"])
        positions = {}
        for position, text in enumerate(splitter.split_text(document_text(record))):
            chunk_id += 1
            positions[position] = Chunk(chunk_id, document_id, position, text)
        if positions:
            chunks[document_id] = positions
    return ChunkCorpus(chunks, names, len(records), chunk_size, chunk_overlap)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (linear interpolation, as numpy's default)."""
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if len(values) else float("nan")


def mean_of(values: Sequence[float]) -> float | None:
    """The mean to three decimals; None when there is nothing to average."""
    return round(sum(values) / len(values), 3) if values else None


def answer_check_fields(state: dict) -> dict:
    """What the answer check made of a finished run's answer: the draft the model wrote (the answer
    itself when the check changed nothing), the check's verdict per sentence, what declined it
    (None when the answer stands), the parts of the question asked again and a draft that copied a
    worked example; rows keep them so ``answer_check.py`` can replay the check."""
    generate = next((step for step in (state.get("trace") or {}).get("steps", []) if step.get("step") == "generate"),
                    {})
    return {"draft": generate.get("draft", state.get("response") or ""), "grounding": generate.get("grounding"),
            "declined_by": (state.get("declined") or {}).get("by"),
            "parts_asked_again": generate.get("parts_asked_again"),
            "asked_without_examples": generate.get("asked_without_examples")}


def p50(values: Iterable[float | None]) -> int | None:
    """The median of the values given (None left out), rounded; None when none is given."""
    present = [value for value in values if value is not None]
    return round(percentile(present, 50)) if present else None


def machine() -> dict:
    """The facts a reader needs to compare runs: cores, and the 1-minute load average when the
    script started and now (other work on the machine slows every figure)."""
    now = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"cores": os.cpu_count(),
            "load_1m": [round(value, 2) if value is not None else None for value in (LOAD_AT_START, now)]}


def wall_s() -> float:
    return round(time.perf_counter() - STARTED, 1)


def emit(result: dict) -> None:
    """Print the closing JSON line (with the wall time so far)."""
    print(json.dumps({**result, "wall_s": wall_s()}, ensure_ascii=False), flush=True)
