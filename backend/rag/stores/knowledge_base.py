"""A knowledge base's stores as retrievers see them: its vector collections and BM25 indices.

BM25 indices are derived data: built from the chunks at one ``content_version`` and saved under
``<data_dir>/indices/kb<id>/bm25-<fingerprint>/v<version>``. Any process that finds no index for
the current version builds it once (a lock file keeps two processes from building the same one)
and every reader then loads the same files.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import threading
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.documents.models import ChunksByDocument

from .chroma import ChromaStore, VectorCollection

if TYPE_CHECKING:
    from rag.retrievers.sparse import BagOfWordsConverter, BM25Index

_cache_lock = threading.Lock()
_bm25_cache: OrderedDict[tuple[str, int], BM25Index] = OrderedDict()
_BM25_CACHE_SIZE = 8


def converter_fingerprint(converter_config: Mapping[str, Any]) -> str:
    """A short stable digest of a converter configuration."""
    canonical = json.dumps(converter_config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class KnowledgeBaseStores:
    """What retrievers of one knowledge base read, at one content version.

    Parameters
    ----------
    knowledge_base_id : int
    data_dir : Path
        Trellis's data directory; indices live under ``indices/kb<id>``.
    chroma : ChromaStore
    content_version : int
        Version of the set of ready chunks ``chunks`` holds.
    chunks : ChunksByDocument
        Every ready chunk, by document and position.
    default_embedding : dict
        The knowledge base's embedding component reference (the dense default).
    """

    def __init__(
        self,
        *,
        knowledge_base_id: int,
        data_dir: Path,
        chroma: ChromaStore,
        content_version: int,
        chunks: ChunksByDocument,
        default_embedding: Mapping[str, Any],
    ) -> None:
        self.knowledge_base_id = knowledge_base_id
        self.data_dir = Path(data_dir)
        self.chroma = chroma
        self.content_version = content_version
        self.chunks = chunks
        self.default_embedding = dict(default_embedding)

    @staticmethod
    def index_dir_of(data_dir: Path, knowledge_base_id: int) -> Path:
        return Path(data_dir) / "indices" / f"kb{knowledge_base_id}"

    @property
    def index_dir(self) -> Path:
        return self.index_dir_of(self.data_dir, self.knowledge_base_id)

    def vectors(self, model_key: str, metric: str = "cosine") -> VectorCollection:
        return self.chroma.collection(self.knowledge_base_id, model_key, metric)

    def bm25(self, converter: BagOfWordsConverter) -> BM25Index:
        """The BM25 index of the current chunks under ``converter``, loaded or built once."""
        from rag.retrievers.sparse import BM25Index, BM25IndexError
        from rag.retrievers.sparse.storage import load_index, save_index

        fingerprint = converter_fingerprint(converter.to_config())
        home = self.index_dir / f"bm25-{fingerprint}"
        directory = home / f"v{self.content_version}"
        key = (str(directory), self.content_version)
        with _cache_lock:
            if key in _bm25_cache:
                _bm25_cache.move_to_end(key)
                return _bm25_cache[key]
        with _file_lock(home / ".lock"):
            try:
                index = load_index(directory)
            except BM25IndexError:
                ordered = [chunk for positions in self.chunks.values() for chunk in positions.values()]
                index = BM25Index.from_texts(
                    [chunk.text for chunk in ordered],
                    converter,
                    doc_ids=[chunk.id for chunk in ordered],
                    metadata={"content_version": self.content_version},
                )
                save_index(index, directory)
                _prune_older_versions(home, keep=directory.name)
        with _cache_lock:
            _bm25_cache[key] = index
            while len(_bm25_cache) > _BM25_CACHE_SIZE:
                _bm25_cache.popitem(last=False)
        return index

    @classmethod
    def drop(cls, *, knowledge_base_id: int, data_dir: Path, chroma: ChromaStore) -> None:
        """Delete every index of a knowledge base (vectors and BM25)."""
        chroma.drop_knowledge_base(knowledge_base_id)
        index_dir = cls.index_dir_of(data_dir, knowledge_base_id)
        shutil.rmtree(index_dir, ignore_errors=True)
        with _cache_lock:
            for key in [key for key in _bm25_cache if key[0].startswith(str(index_dir) + "/")]:
                del _bm25_cache[key]


@contextmanager
def _file_lock(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _prune_older_versions(home: Path, *, keep: str) -> None:
    for candidate in home.iterdir():
        if candidate.is_dir() and candidate.name.startswith("v") and candidate.name != keep:
            current = int(keep[1:])
            try:
                version = int(candidate.name[1:])
            except ValueError:
                continue
            if version < current:
                shutil.rmtree(candidate, ignore_errors=True)
