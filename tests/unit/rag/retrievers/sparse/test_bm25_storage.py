import json
import os
import shutil
import threading

import numpy as np
import pytest

from rag.retrievers.sparse import (
    FORMAT_VERSION,
    BagOfWordsConverter,
    BM25Index,
    BM25IndexError,
    BM25IndexNotFoundError,
    BM25Parameters,
    storage,
)

from .corpora import CHINESE, SCIENCE

pytestmark = pytest.mark.unit

QUERY = ["insulin", "risk", "heart", "heart", "unknown"]


@pytest.fixture
def index():
    converter = BagOfWordsConverter(ngram_max=2)
    return BM25Index.from_texts(SCIENCE + CHINESE, converter, doc_ids=[10_000 + 7 * i for i in range(26)],
                                params=BM25Parameters(variant="bm25plus", k1=1.2, b=0.6, delta=0.5),
                                metadata={"knowledge_base": 3})


def test_a_saved_index_loads_back_identical(index, tmp_path):
    path = index.save(tmp_path / "kb-3" / "bm25")
    loaded = BM25Index.load(path)
    assert loaded.params == index.params
    assert loaded.vocabulary == index.vocabulary
    assert loaded.doc_ids.tolist() == index.doc_ids.tolist()
    assert loaded.metadata == index.metadata and loaded.metadata["knowledge_base"] == 3
    assert np.array_equal(loaded.scores(QUERY), index.scores(QUERY))
    chinese = BagOfWordsConverter().analyze("珍珠奶茶")
    assert np.array_equal(loaded.top_k(chinese, 3)[0], index.top_k(chinese, 3)[0])


def test_saving_again_replaces_the_index_and_leaves_no_temporary_files(index, tmp_path):
    target = tmp_path / "bm25"
    index.save(target)
    smaller = BM25Index.from_tokens([["only", "two"], ["documents", "now"]], doc_ids=[1, 2])
    smaller.save(target)
    assert BM25Index.load(target).doc_ids.tolist() == [1, 2]
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["bm25"]
    assert sorted(entry.name for entry in target.iterdir()) == ["counts.npz", "manifest.json"]


def test_the_manifest_is_json_with_format_version_params_vocabulary_and_doc_ids(index, tmp_path):
    index.save(tmp_path / "bm25")
    manifest = json.loads((tmp_path / "bm25" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["format_version"] == FORMAT_VERSION
    assert manifest["params"] == {"variant": "bm25plus", "k1": 1.2, "b": 0.6, "delta": 0.5, "epsilon": 0.25}
    assert manifest["doc_ids"][:2] == [10_000, 10_007]
    assert "珍珠奶茶" in manifest["vocabulary"]


def test_loading_where_nothing_was_saved_says_so(tmp_path):
    with pytest.raises(BM25IndexNotFoundError, match="no BM25 index at"):
        BM25Index.load(tmp_path / "missing")


def test_a_corrupted_manifest_is_a_clear_error(index, tmp_path):
    target = index.save(tmp_path / "bm25")
    (target / "manifest.json").write_text('{"format": "trellis-bm25-index", "format_ver', encoding="utf-8")
    with pytest.raises(BM25IndexError, match=r"manifest.json is corrupt"):
        BM25Index.load(target)


def test_a_manifest_missing_a_field_names_it(index, tmp_path):
    target = index.save(tmp_path / "bm25")
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    del manifest["vocabulary"]
    (target / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(BM25IndexError, match=r"manifest.json is corrupt \(missing 'vocabulary'\)"):
        BM25Index.load(target)


def test_a_manifest_whose_lists_disagree_with_its_counts_is_refused(index, tmp_path):
    target = index.save(tmp_path / "bm25")
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    manifest["doc_ids"] = manifest["doc_ids"][:-1]
    (target / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(BM25IndexError, match="declares 26 documents .* lists 25 doc ids"):
        BM25Index.load(target)


def test_another_format_version_is_refused_with_advice_to_rebuild(index, tmp_path):
    target = index.save(tmp_path / "bm25")
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    manifest["format_version"] = FORMAT_VERSION + 1
    (target / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(BM25IndexError, match=rf"format version {FORMAT_VERSION + 1}; this Trellis reads version "
                                             rf"{FORMAT_VERSION}\. Rebuild the index"):
        BM25Index.load(target)


def test_a_damaged_array_file_fails_its_checksum(index, tmp_path):
    target = index.save(tmp_path / "bm25")
    arrays = target / "counts.npz"
    data = bytearray(arrays.read_bytes())
    data[len(data) // 2] ^= 0xFF
    arrays.write_bytes(bytes(data))
    with pytest.raises(BM25IndexError, match="counts.npz does not match its checksum"):
        BM25Index.load(target)


def test_a_missing_array_file_is_reported(index, tmp_path):
    target = index.save(tmp_path / "bm25")
    (target / "counts.npz").unlink()
    with pytest.raises(BM25IndexError, match="incomplete: counts.npz is missing"):
        BM25Index.load(target)


def test_a_directory_that_is_not_an_index_is_never_overwritten(index, tmp_path):
    target = tmp_path / "documents"
    target.mkdir()
    (target / "precious.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(BM25IndexError, match="does not hold a BM25 index"):
        index.save(target)
    assert (target / "precious.txt").read_text(encoding="utf-8") == "keep me"


def test_a_reader_never_sees_a_half_written_index_while_it_is_replaced(tmp_path):
    target = tmp_path / "bm25"
    versions = [
        BM25Index.from_tokens([[f"term{v}", "shared"]] * (v + 2), doc_ids=range(v * 100, v * 100 + v + 2))
        for v in range(2)
    ]
    versions[0].save(target)
    expected = {tuple(version.doc_ids.tolist()) for version in versions}
    stop, failures, seen = threading.Event(), [], set()

    def read():
        while not stop.is_set():
            try:
                loaded = BM25Index.load(target)
                seen.add(tuple(loaded.doc_ids.tolist()))
            except Exception as exc:  # noqa: BLE001 - any failure is what this test looks for
                failures.append(repr(exc))

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        for round_ in range(60):
            versions[round_ % 2].save(target)
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert failures == []
    assert seen <= expected and seen


def test_a_reader_that_missed_the_directory_mid_save_reads_the_finished_save(index, tmp_path, monkeypatch):
    # The interleaving a stress test meets only sometimes: the reader opens the path between a
    # save's two renames, and the save finishes (and deletes the old directory) before the
    # reader looks again.
    target = index.save(tmp_path / "bm25")
    newer = BM25Index.from_tokens([["newer"]] * 3, doc_ids=[7, 8, 9])
    read, opened_mid_save = storage._read, []

    def read_during_a_save(path):
        if opened_mid_save:
            return read(path)
        retired = path.with_name(f".{path.name}.{os.getpid()}.old")
        os.replace(path, retired)
        try:
            return read(path)
        finally:
            opened_mid_save.append(path)
            newer.save(path)
            shutil.rmtree(retired)

    monkeypatch.setattr(storage, "_read", read_during_a_save)
    assert BM25Index.load(target).doc_ids.tolist() == [7, 8, 9]
    assert len(opened_mid_save) == 1
