"""Reading BEIR datasets: folders (plain or gzipped corpus), zip archives, graded judgements,
reference answers, coinciding ids, and readable errors."""

import gzip
import io
import json
import zipfile

import pytest

from rag.evaluation import DatasetError, dataset_path, detect_language, load_beir, load_beir_archive, write_beir

from .conftest import DATASETS, garden

pytestmark = pytest.mark.unit


def beir_folder(root, *, gzip_corpus=False, qrels="query-id\tcorpus-id\tscore\n1\t1\t2\n1\t2\t1\nq2\t3\t0\nq3\t3\t1\n"):
    root.mkdir(parents=True, exist_ok=True)
    corpus = "".join(json.dumps(record) + "\n" for record in [
        {"_id": "1", "title": "One", "text": "First document.", "url": "http://example.org/1"},
        {"_id": "2", "title": "", "text": "Second document."},
        {"_id": "3", "title": "Three", "text": ""},
    ])
    if gzip_corpus:
        (root / "corpus.jsonl.gz").write_bytes(gzip.compress(corpus.encode()))
    else:
        (root / "corpus.jsonl").write_text(corpus)
    (root / "queries.jsonl").write_text(
        '{"_id": "1", "text": "first?", "answers": ["First"]}\n{"_id": "q2", "text": "unjudged"}\n'
        '{"_id": "q3", "text": "third?"}\n')
    (root / "qrels").mkdir(exist_ok=True)
    (root / "qrels" / "test.tsv").write_text(qrels)
    return root


@pytest.mark.parametrize("gzip_corpus", [False, True])
def test_a_beir_folder_loads_with_graded_judgements_answers_and_extra_fields(tmp_path, gzip_corpus):
    dataset = load_beir(beir_folder(tmp_path / "tiny", gzip_corpus=gzip_corpus))
    assert dataset.name == "tiny"
    assert [document.id for document in dataset.corpus] == ["1", "2", "3"]
    assert dataset.corpus[0].content == "One\n\nFirst document." and dataset.corpus[1].content == "Second document."
    assert dataset.corpus[0].metadata == {"url": "http://example.org/1"}
    # q2 has only a grade-0 judgement: nothing relevant to find, so it is not a test query.
    assert [query.id for query in dataset.queries] == ["1", "q3"]
    assert dataset.qrels == {"1": {"1": 2, "2": 1}, "q3": {"3": 1}}
    assert dataset.queries[0].answers == ("First",) and dataset.has_answers


def test_query_and_document_ids_that_coincide_are_both_kept(tmp_path):
    dataset = load_beir(beir_folder(tmp_path / "tiny"))
    assert "1" in dataset.relevant("1") and dataset.queries[0].id == "1"


def test_the_shared_medline_keeps_its_query_whose_relevant_document_has_the_same_id():
    dataset = load_beir(DATASETS / "medline")
    assert (len(dataset.corpus), len(dataset.queries)) == (1033, 30)
    assert dataset.relevant("5")["5"] == 1


def test_the_shared_xquad_zh_has_answers_and_is_detected_as_chinese():
    dataset = load_beir(DATASETS / "xquad-zh")
    assert dataset.language == "zh" and dataset.has_answers
    assert dataset.queries[0].answers == ("308",)


@pytest.mark.parametrize("prefix", ["", "tiny-beir/"])
def test_a_zip_archive_loads_with_its_files_at_the_root_or_in_one_folder(tmp_path, prefix):
    folder = beir_folder(tmp_path / "tiny")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
            archive.write(folder / name, prefix + name)
    buffer.seek(0)
    dataset = load_beir_archive(buffer, name="uploaded")
    assert dataset.name == "uploaded" and len(dataset.corpus) == 3 and dataset.qrels["1"] == {"1": 2, "2": 1}


def test_a_dataset_written_back_reads_the_same(tmp_path):
    original = garden()
    again = load_beir(write_beir(original, tmp_path / "garden"))
    assert [(d.id, d.content) for d in again.corpus] == [(d.id, d.content) for d in original.corpus]
    assert again.queries == original.queries and again.qrels == original.qrels


def test_missing_files_and_malformed_lines_say_where(tmp_path):
    with pytest.raises(DatasetError, match="no qrels/test.tsv"):
        folder = beir_folder(tmp_path / "a")
        (folder / "qrels" / "test.tsv").unlink()
        load_beir(folder)
    folder = beir_folder(tmp_path / "b")
    (folder / "queries.jsonl").write_text('{"_id": "1", "text": "ok"}\nnot json\n')
    with pytest.raises(DatasetError, match=r"queries.jsonl, line 2: not JSON"):
        load_beir(folder)
    with pytest.raises(DatasetError, match="no query has a relevant judgement"):
        load_beir(beir_folder(tmp_path / "c", qrels="query-id\tcorpus-id\tscore\nzz\t1\t1\n"))
    with pytest.raises(DatasetError, match="not a readable zip"):
        load_beir_archive(io.BytesIO(b"not a zip"), name="x")


def test_a_name_is_looked_up_in_the_datasets_folder_and_a_path_used_as_it_is(tmp_path):
    folder = beir_folder(tmp_path / "sets" / "tiny")
    assert dataset_path("tiny", tmp_path / "sets") == folder
    assert dataset_path(str(folder), tmp_path / "elsewhere") == folder
    with pytest.raises(DatasetError, match=r"no dataset 'nope' .* \(available: tiny\)"):
        dataset_path("nope", tmp_path / "sets")


def test_subset_keeps_every_judged_document_of_the_kept_queries():
    dataset = garden().subset(max_queries=2, max_documents=2)
    assert [query.id for query in dataset.queries] == ["1", "q2"]
    assert {document.id for document in dataset.corpus} == {"1", "2", "3", "4"}


@pytest.mark.parametrize(("text", "language"), [
    ("The results of the trial show that the drug was effective in most of the patients.", "en"),
    ("Los resultados del ensayo muestran que el fármaco fue eficaz en la mayoría de los pacientes.", "es"),
    ("黑豹队的防守只丢了308分，在联赛中排名第六。", "zh"),
])
def test_language_is_detected_from_the_text(text, language):
    from rag.evaluation import CorpusDocument

    assert detect_language([CorpusDocument("1", "", text)]) == language
