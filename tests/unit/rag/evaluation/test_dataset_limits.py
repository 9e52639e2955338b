"""Dataset archives within limits, checked while they are read: a record too long is skipped
without being held in memory and reported with its line; too many files, or more bytes
unpacked than allowed (a gzipped corpus too), refuse the archive."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
import zipfile

import pytest

from rag.evaluation import DatasetError, DatasetLimits, load_beir_archive

pytestmark = pytest.mark.unit

MEGABYTE = 1024 * 1024
QUERIES = '{"_id": "q1", "text": "first?"}\n{"_id": "q2", "text": "third?"}\n'
QRELS = "query-id\tcorpus-id\tscore\nq1\t1\t1\nq2\t3\t2\n"


def record(identifier: str, text: str) -> bytes:
    return (json.dumps({"_id": identifier, "title": "", "text": text}) + "\n").encode()


def archive(corpus_lines: list[bytes | tuple[bytes, int]], *, corpus_name: str = "set/corpus.jsonl",
            extra_files: int = 0) -> io.BytesIO:
    """A BEIR zip whose corpus is written piece by piece: ``(piece, times)`` repeats a piece,
    so a line of hundreds of megabytes is never built in memory here either."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        with bundle.open(corpus_name, "w", force_zip64=True) as corpus:
            target = gzip.GzipFile(fileobj=corpus, mode="wb") if corpus_name.endswith(".gz") else corpus
            for line in corpus_lines:
                piece, times = line if isinstance(line, tuple) else (line, 1)
                for _ in range(times):
                    target.write(piece)
            if target is not corpus:
                target.close()
        bundle.writestr("set/queries.jsonl", QUERIES)
        bundle.writestr("set/qrels/test.tsv", QRELS)
        for index in range(extra_files):
            bundle.writestr(f"set/extra/{index}.txt", "")
    buffer.seek(0)
    return buffer


def test_a_record_past_the_limit_is_skipped_while_streaming_and_reported_with_its_line():
    huge = [b'{"_id": "2", "text": "', (b"x" * MEGABYTE, 64), b'"}\n']
    bundle = archive([record("1", "First."), *huge, record("3", "Third.")])
    assert len(bundle.getvalue()) < MEGABYTE  # a small upload holding a 64 MB line

    tracemalloc.start()
    try:
        dataset = load_beir_archive(bundle, name="hostile")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak < 8 * MEGABYTE, f"reading held {peak / MEGABYTE:.0f} MB at once"
    assert [document.id for document in dataset.corpus] == ["1", "3"]
    assert [document.line for document in dataset.corpus] == [1, 3]
    [dropped] = dataset.dropped
    assert (dropped.file, dropped.line, dropped.code) == ("set/corpus.jsonl", 2, "too_long")
    assert dropped.message == ("set/corpus.jsonl, line 2: a record of 64.0 MB is longer than the limit of 1.0 MB; "
                               "it was left out")
    assert [query.id for query in dataset.queries] == ["q1", "q2"]


def test_the_record_limit_is_a_parameter_and_applies_to_every_file():
    limits = DatasetLimits(max_record_bytes=200)
    bundle = archive([record("1", "First."), record("2", "y" * 300), record("3", "Third.")])
    dataset = load_beir_archive(bundle, name="small", limits=limits)
    assert [(dropped.line, dropped.code) for dropped in dataset.dropped] == [(2, "too_long")]
    # A record of exactly the limit is kept.
    prefix, suffix = b'{"_id": "2", "text": "', b'"}'
    exact = prefix + b"z" * (200 - len(prefix) - len(suffix)) + suffix + b"\n"
    assert len(exact) == 201  # 200 bytes and the newline
    kept = load_beir_archive(archive([record("1", "a"), exact, record("3", "b")]), name="exact", limits=limits)
    assert [document.id for document in kept.corpus] == ["1", "2", "3"] and kept.dropped == []


def test_when_every_record_is_left_out_the_error_says_so():
    with pytest.raises(DatasetError, match=r"the corpus is empty \(1 record\(s\) left out, the first: "
                                           r"set/corpus.jsonl, line 1: a record of"):
        load_beir_archive(archive([record("1", "z" * 2000)]), name="empty", limits=DatasetLimits(max_record_bytes=1000))


def test_an_archive_with_more_files_than_the_limit_is_refused_before_its_directory_is_read():
    bundle = archive([record("1", "a"), record("3", "b")], extra_files=20)
    with pytest.raises(DatasetError, match="holds 23 files, more than the limit of 10"):
        load_beir_archive(bundle, name="many", limits=DatasetLimits(max_files=10))
    assert load_beir_archive(bundle, name="many", limits=DatasetLimits(max_files=23)).corpus


@pytest.mark.slow
def test_the_file_count_of_a_zip64_archive_is_read_from_its_zip64_record():
    bundle = archive([record("1", "a"), record("3", "b")], extra_files=70_000)  # past 65,535: zip64
    with pytest.raises(DatasetError, match="holds 70003 files, more than the limit of 1000"):
        load_beir_archive(bundle, name="zip64")


def test_an_archive_unpacking_past_the_limit_is_refused_while_it_is_read():
    lines = [record(str(index), "words " * 100) for index in range(4000)]  # about 2.5 MB
    with pytest.raises(DatasetError, match="the archive unpacks to more than 1.0 MB"):
        load_beir_archive(archive(lines), name="big", limits=DatasetLimits(max_bytes=MEGABYTE))


def test_a_gzipped_corpus_that_expands_past_the_limit_is_refused_while_it_is_decompressed():
    bomb = [b'{"_id": "1", "text": "', (b"0" * MEGABYTE, 200), b'"}\n']  # 200 MB, a few hundred KB packed
    bundle = archive(bomb, corpus_name="set/corpus.jsonl.gz")
    assert len(bundle.getvalue()) < 2 * MEGABYTE
    tracemalloc.start()
    try:
        with pytest.raises(DatasetError, match="the archive unpacks to more than 8.0 MB"):
            load_beir_archive(bundle, name="bomb", limits=DatasetLimits(max_bytes=8 * MEGABYTE))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * MEGABYTE, f"reading held {peak / MEGABYTE:.0f} MB at once"
