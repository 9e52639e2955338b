"""Evaluation datasets in the BEIR layout: a corpus, queries (with optional reference answers)
and graded relevance judgements.

A BEIR folder holds ``corpus.jsonl`` (or ``corpus.jsonl.gz``) with one ``{"_id", "title",
"text"}`` object per line, ``queries.jsonl`` with ``{"_id", "text"}`` (plus ``answers``, a list
of reference strings, in QA datasets) and ``qrels/<split>.tsv`` with a ``query-id corpus-id
score`` header. Query and document ids live in separate namespaces: the same string may name a
query and a document, and nothing here ever relates the two.

Files are read line by line within ``DatasetLimits``: a record (one line) longer than
``max_record_bytes`` is skipped without being held in memory and reported in the dataset's
``dropped`` with its file and line; an archive holding more than ``max_files`` files, or
unpacking (a gzipped corpus included) to more than ``max_bytes``, is refused while it is read.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import struct
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import IO, Any
from zlib import error as zlib_error

from rag.core.i18n import gettext_noop
from rag.documents.parsers.base import readable_size

Qrels = dict[str, dict[str, int]]
"""``{query_id: {corpus_id: grade}}``; a grade above 0 is relevant, higher is more relevant."""

CORPUS_FILES = ("corpus.jsonl.gz", "corpus.jsonl")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W\d_]+")
_SPANISH = frozenset(["el", "la", "los", "las", "de", "del", "que", "y", "en", "un", "una", "por", "con", "para", "es", "se", "al", "lo", "como", "más", "pero", "sus"])
_ENGLISH = frozenset(["the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "by", "on", "are", "this", "be", "from", "at", "an"])


class DatasetError(ValueError):
    """A dataset that cannot be read; the message says which file and why."""


@dataclass(frozen=True)
class DatasetLimits:
    """What a dataset may hold. ``max_bytes``: the text read from every file together (an
    archive's files unpacked, a gzipped corpus decompressed); ``max_files``: files in an
    archive; ``max_record_bytes``: one line, a record longer than it is dropped."""

    max_bytes: int = 1024**3
    max_files: int = 1000
    max_record_bytes: int = 1024**2


@dataclass(frozen=True)
class DroppedRecord:
    """A record left out of a dataset: where it was, a stable ``code`` and why (``template``
    with its ``context``, a translatable message)."""

    file: str
    line: int
    code: str
    template: str
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def message(self) -> str:
        return f"{self.file}, line {self.line}: " + self.template.format(**self.context)


RECORD_TOO_LONG = gettext_noop("a record of {size} is longer than the limit of {limit}; it was left out")


@dataclass(frozen=True)
class CorpusDocument:
    """One corpus record: ``id`` is the BEIR ``_id`` (a string)."""

    id: str
    title: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    line: int | None = field(default=None, compare=False)
    """Its line in the corpus file, when it was read from one."""

    @property
    def content(self) -> str:
        """The text a retriever sees: the title as its own paragraph, then the body."""
        title, text = self.title.strip(), self.text.strip()
        return f"{title}\n\n{text}" if title and text else (title or text)


@dataclass(frozen=True)
class Query:
    """One query; ``answers`` holds its reference answers (empty when the dataset has none)."""

    id: str
    text: str
    answers: tuple[str, ...] = ()


@dataclass
class EvaluationDataset:
    """A corpus, its queries and their relevance judgements.

    Parameters
    ----------
    name : str
    corpus : list of CorpusDocument
        In file order; ids are unique.
    queries : list of Query
        Only queries with at least one relevant judgement (grade > 0), in file order.
    qrels : Qrels
        The judgements as given, for the kept queries.
    language : str
        ``"en"``, ``"es"``, ``"zh"``…: chooses the default embedding model and how answers are
        compared.
    dropped : list of DroppedRecord
        Records left out while reading (too long), in file order.
    corpus_file : str
        The corpus file's name (in its archive), as ``dropped`` and line numbers refer to it.
    """

    name: str
    corpus: list[CorpusDocument]
    queries: list[Query]
    qrels: Qrels
    language: str = "en"
    dropped: list[DroppedRecord] = field(default_factory=list)
    corpus_file: str = "corpus.jsonl"

    @property
    def has_answers(self) -> bool:
        return any(query.answers for query in self.queries)

    def relevant(self, query_id: str) -> dict[str, int]:
        return self.qrels.get(query_id, {})

    def limited(self, limit: int | None) -> EvaluationDataset:
        """The same corpus with only the first ``limit`` queries (all when None)."""
        if limit is None or limit >= len(self.queries):
            return self
        queries = self.queries[:limit]
        return replace(self, queries=queries, qrels={query.id: self.qrels[query.id] for query in queries})

    def subset(self, *, max_queries: int | None = None, max_documents: int | None = None) -> EvaluationDataset:
        """A smaller dataset: the first ``max_queries`` queries, and a corpus of every document
        judged for them followed by leading documents up to ``max_documents`` (the judged ones
        are all kept even beyond it). Metrics on a subset are higher than on the whole corpus."""
        dataset = self.limited(max_queries)
        if max_documents is None or max_documents >= len(self.corpus):
            return dataset
        judged = {doc for judgements in dataset.qrels.values() for doc in judgements}
        chosen = {document.id for document in self.corpus if document.id in judged}
        for document in self.corpus:
            if len(chosen) >= max_documents:
                break
            chosen.add(document.id)
        return replace(dataset, corpus=[document for document in self.corpus if document.id in chosen])

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "documents": len(self.corpus), "queries": len(self.queries),
                "judgements": sum(len(judged) for judged in self.qrels.values()),
                "language": self.language, "has_answers": self.has_answers}


# -- reading -------------------------------------------------------------------------------------


def parse_corpus(lines: Iterable[str], source: str = "corpus.jsonl") -> list[CorpusDocument]:
    documents: list[CorpusDocument] = []
    seen: set[str] = set()
    for number, record in _json_lines(lines, source):
        if "_id" not in record:
            raise DatasetError(f"{source}, line {number}: a corpus record needs an \"_id\"")
        identifier = str(record["_id"])
        if identifier in seen:
            raise DatasetError(f"{source}, line {number}: the document id {identifier!r} appears twice")
        seen.add(identifier)
        extra = {key: value for key, value in record.items() if key not in ("_id", "title", "text")}
        documents.append(CorpusDocument(identifier, str(record.get("title") or ""), str(record.get("text") or ""),
                                        extra, number))
    return documents


def parse_queries(lines: Iterable[str], source: str = "queries.jsonl") -> list[Query]:
    queries: list[Query] = []
    for number, record in _json_lines(lines, source):
        if "_id" not in record or not isinstance(record.get("text"), str):
            raise DatasetError(f"{source}, line {number}: a query needs an \"_id\" and a \"text\"")
        answers = record.get("answers") or ()
        if isinstance(answers, str):
            answers = (answers,)
        queries.append(Query(str(record["_id"]), record["text"], tuple(str(answer) for answer in answers)))
    return queries


def parse_qrels(lines: Iterable[str], source: str = "qrels/test.tsv") -> Qrels:
    """``query-id  corpus-id  score`` rows (tab separated; a header line is skipped)."""
    qrels: Qrels = {}
    for number, line in enumerate(lines, start=1):
        fields = line.rstrip("\r\n").split("\t")
        if not line.strip():
            continue
        if len(fields) != 3:
            raise DatasetError(f"{source}, line {number}: expected 3 tab-separated fields, got {len(fields)}")
        query_id, corpus_id, score = fields
        try:
            grade = int(score)
        except ValueError:
            try:
                grade = int(float(score))
            except ValueError:
                if number == 1:
                    continue  # the header
                raise DatasetError(f"{source}, line {number}: the score {score!r} is not a number") from None
        qrels.setdefault(query_id, {})[corpus_id] = grade
    return qrels


def assemble(name: str, corpus: list[CorpusDocument], queries: list[Query], qrels: Qrels,
             language: str | None = None, dropped: list[DroppedRecord] | None = None) -> EvaluationDataset:
    """A dataset from parsed parts: only queries with a relevant judgement are kept."""
    if not corpus:
        raise DatasetError(f"{name}: the corpus is empty" + _dropped_note(dropped))
    judged = [query for query in queries if any(grade > 0 for grade in qrels.get(query.id, {}).values())]
    if not judged:
        raise DatasetError(f"{name}: no query has a relevant judgement in the qrels" + _dropped_note(dropped))
    kept = {query.id: qrels[query.id] for query in judged}
    return EvaluationDataset(name, corpus, judged, kept, language or detect_language(corpus, judged),
                             list(dropped or []))


def _dropped_note(dropped: list[DroppedRecord] | None) -> str:
    if not dropped:
        return ""
    return f" ({len(dropped)} record(s) left out, the first: {dropped[0].message})"


def load_beir(path: str | Path, *, split: str = "test", language: str | None = None,
              name: str | None = None, limits: DatasetLimits | None = None) -> EvaluationDataset:
    """Read a BEIR folder within ``limits`` (the defaults of ``DatasetLimits`` when None).

    Raises
    ------
    DatasetError
        When a file is missing or malformed, or the files are larger than the limits (the
        message names the file and the limit).
    """
    root = Path(path)
    limits = limits or DatasetLimits()
    if not root.is_dir():
        raise DatasetError(f"{root} is not a folder")
    corpus_path = next((root / candidate for candidate in CORPUS_FILES if (root / candidate).is_file()), None)
    if corpus_path is None:
        raise DatasetError(f"{root} has no corpus.jsonl or corpus.jsonl.gz")
    for required in ("queries.jsonl", f"qrels/{split}.tsv"):
        if not (root / required).is_file():
            raise DatasetError(f"{root} has no {required}")
    reader = _Reader(limits, f"the files of {root.name} hold more than {readable_size(limits.max_bytes)}")
    with open(corpus_path, "rb") as stream:
        corpus = parse_corpus(reader.lines(stream, corpus_path.name), corpus_path.name)
    with open(root / "queries.jsonl", "rb") as stream:
        queries = parse_queries(reader.lines(stream, "queries.jsonl"))
    with open(root / "qrels" / f"{split}.tsv", "rb") as stream:
        qrels = parse_qrels(reader.lines(stream, f"qrels/{split}.tsv"), f"qrels/{split}.tsv")
    return replace(assemble(name or root.name, corpus, queries, qrels, language, reader.dropped),
                   corpus_file=corpus_path.name)


def load_beir_archive(archive: str | Path | IO[bytes], *, name: str, split: str = "test",
                      language: str | None = None, limits: DatasetLimits | None = None) -> EvaluationDataset:
    """Read a BEIR dataset from a zip archive, its files at the root or in one folder, within
    ``limits``: the file count is checked before the archive's directory is read, the bytes
    unpacked as they are read (a zip bomb is refused, never unpacked)."""
    limits = limits or DatasetLimits()
    try:
        bundle = _open_zip(archive, limits.max_files)
    except (zipfile.BadZipFile, OSError, struct.error) as exc:
        raise DatasetError(f"the archive is not a readable zip file ({exc})") from None
    reader = _Reader(limits, f"the archive unpacks to more than {readable_size(limits.max_bytes)}")
    with bundle:
        members = {PurePosixPath(info.filename): info for info in bundle.infolist() if not info.is_dir()}
        if sum(info.file_size for info in members.values()) > limits.max_bytes:
            raise DatasetError(f"the archive unpacks to more than {readable_size(limits.max_bytes)}")
        corpus_member = next((member for candidate in CORPUS_FILES for member in sorted(members, key=lambda path: len(path.parts))
                              if member.name == candidate and "__MACOSX" not in member.parts), None)
        if corpus_member is None:
            raise DatasetError("the archive has no corpus.jsonl or corpus.jsonl.gz")
        base = corpus_member.parent

        def member(relative: str) -> zipfile.ZipInfo:
            path = base / relative
            if path not in members:
                raise DatasetError(f"the archive has no {path}")
            return members[path]

        try:
            with bundle.open(members[corpus_member]) as stream:
                corpus = parse_corpus(reader.lines(stream, str(corpus_member)), str(corpus_member))
            with bundle.open(member("queries.jsonl")) as stream:
                queries = parse_queries(reader.lines(stream, str(base / "queries.jsonl")),
                                        str(base / "queries.jsonl"))
            qrels_name = str(base / "qrels" / f"{split}.tsv")
            with bundle.open(member(f"qrels/{split}.tsv")) as stream:
                qrels = parse_qrels(reader.lines(stream, qrels_name), qrels_name)
        except (zipfile.BadZipFile, EOFError, gzip.BadGzipFile, zlib_error) as exc:
            raise DatasetError(f"the archive is damaged ({exc})") from None
    return replace(assemble(name, corpus, queries, qrels, language, reader.dropped), corpus_file=str(corpus_member))


def _open_zip(archive: str | Path | IO[bytes], max_files: int) -> zipfile.ZipFile:
    """The archive, once its end record says it holds at most ``max_files`` entries (Python
    reads the whole directory when it opens an archive: a million entries are refused unread)."""
    if isinstance(archive, (str, Path)):
        with open(archive, "rb") as handle:
            entries = _zip_entry_count(handle)
    else:
        entries = _zip_entry_count(archive)
        archive.seek(0)
    if entries is not None and entries > max_files:
        raise DatasetError(f"the archive holds {entries} files, more than the limit of {max_files}")
    return zipfile.ZipFile(archive)


_END = b"PK\x05\x06"
_END64_LOCATOR = b"PK\x06\x07"
_END64 = b"PK\x06\x06"


def _zip_entry_count(handle: IO[bytes]) -> int | None:
    """The entry count an archive's end of central directory record gives (None: not found,
    left to ``zipfile`` to refuse)."""
    size = handle.seek(0, io.SEEK_END)
    tail_size = min(size, 22 + 65_535)  # the end record, then at most a 64 KB comment
    handle.seek(size - tail_size)
    tail = handle.read(tail_size)
    at = tail.rfind(_END)
    if at < 0 or len(tail) - at < 22:
        return None
    entries = struct.unpack("<H", tail[at + 10:at + 12])[0]
    if entries != 0xFFFF:
        return entries
    locator = tail[at - 20:at] if at >= 20 else b""
    if not locator.startswith(_END64_LOCATOR):
        return None
    handle.seek(struct.unpack("<Q", locator[8:16])[0])
    record = handle.read(56)
    if not record.startswith(_END64):
        return None
    return struct.unpack("<Q", record[32:40])[0]


class _Reader:
    """Lines of a dataset's files within ``limits``: every byte read counts against
    ``max_bytes``; a line longer than ``max_record_bytes`` is skipped piece by piece and
    recorded in ``dropped``, its place kept by an empty line so later lines keep their numbers.
    ``too_much`` is the error past ``max_bytes``."""

    PIECE = 64 * 1024

    def __init__(self, limits: DatasetLimits, too_much: str) -> None:
        self.limits, self.too_much = limits, too_much
        self.read = 0
        self.dropped: list[DroppedRecord] = []

    def _count(self, size: int) -> None:
        self.read += size
        if self.read > self.limits.max_bytes:
            raise DatasetError(self.too_much)

    def lines(self, raw: IO[bytes], name: str) -> Iterator[str]:
        stream: IO[bytes] | gzip.GzipFile = gzip.GzipFile(fileobj=raw) if name.endswith(".gz") else raw
        limit = self.limits.max_record_bytes
        number = 0
        while True:
            line = stream.readline(limit + 1)
            if not line:
                return
            self._count(len(line))
            number += 1
            if len(line) > limit and not line.endswith(b"\n"):
                size = len(line)
                while not line.endswith(b"\n"):
                    line = stream.readline(self.PIECE)
                    if not line:
                        break
                    self._count(len(line))
                    size += len(line)
                self.dropped.append(DroppedRecord(name, number, "too_long", RECORD_TOO_LONG,
                                                  {"size": readable_size(size), "limit": readable_size(limit)}))
                yield ""
                continue
            if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
            try:
                yield line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{name}, line {number}: not UTF-8 ({exc.reason})") from None


def write_beir(dataset: EvaluationDataset, path: str | Path, *, split: str = "test") -> Path:
    """Write ``dataset`` as a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels``)."""
    root = Path(path)
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as stream:
        for document in dataset.corpus:
            stream.write(json.dumps({"_id": document.id, "title": document.title, "text": document.text,
                                     **document.metadata}, ensure_ascii=False) + "\n")
    with open(root / "queries.jsonl", "w", encoding="utf-8") as stream:
        for query in dataset.queries:
            record: dict[str, Any] = {"_id": query.id, "text": query.text}
            if query.answers:
                record["answers"] = list(query.answers)
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    with open(root / "qrels" / f"{split}.tsv", "w", encoding="utf-8") as stream:
        stream.write("query-id\tcorpus-id\tscore\n")
        for query_id, judged in dataset.qrels.items():
            for corpus_id, grade in judged.items():
                stream.write(f"{query_id}\t{corpus_id}\t{grade}\n")
    return root


def detect_language(corpus: Iterable[CorpusDocument], queries: Iterable[Query] = ()) -> str:
    """``"zh"`` when CJK ideographs dominate a sample of the text, else ``"es"`` or ``"en"`` by
    which language's most common words are more frequent (a tie is English)."""
    sample = " ".join([document.content[:500] for _, document in zip(range(200), corpus, strict=False)]
                      + [query.text for _, query in zip(range(200), queries, strict=False)])
    letters = sum(1 for character in sample if character.isalpha())
    if letters and len(_CJK.findall(sample)) / letters > 0.3:
        return "zh"
    words = [word.lower() for word in _WORD.findall(sample)]
    spanish = sum(word in _SPANISH for word in words)
    english = sum(word in _ENGLISH for word in words)
    return "es" if spanish > english else "en"


def dataset_path(name_or_path: str | Path, datasets_dir: str | Path) -> Path:
    """A folder given by path, else the folder of that name under ``datasets_dir``."""
    candidate = Path(name_or_path).expanduser()
    if candidate.is_dir():
        return candidate
    if "/" in str(name_or_path) or str(name_or_path) in ("", ".", ".."):
        raise DatasetError(f"{name_or_path} is not a folder")
    named = Path(datasets_dir) / str(name_or_path)
    if not named.is_dir():
        available = ", ".join(available_datasets(datasets_dir)) or "none"
        raise DatasetError(f"no dataset {name_or_path!r} in {datasets_dir} (available: {available})")
    return named


def available_datasets(datasets_dir: str | Path) -> list[str]:
    """Names of the BEIR folders directly under ``datasets_dir``."""
    root = Path(datasets_dir)
    if not root.is_dir():
        return []
    return sorted(child.name for child in root.iterdir()
                  if child.is_dir() and any((child / name).is_file() for name in CORPUS_FILES))


def readme_title(folder: str | Path) -> str:
    """The first heading of the folder's README, or ''."""
    for name in ("README.md", "README"):
        path = Path(folder) / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return ""


def _json_lines(lines: Iterable[str], source: str) -> Iterable[tuple[int, Mapping[str, Any]]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{source}, line {number}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{source}, line {number}: expected a JSON object")
        yield number, record

