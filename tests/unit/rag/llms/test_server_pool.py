"""The bounded pool of model servers, with stand-in servers, and the GGUF header it sizes them by."""

import threading
import time

import pytest

from rag.llms import local_models
from rag.llms.gguf import model_shape
from rag.llms.server_pool import Pooled, PoolLimits, ServerPool, ServerPoolError

pytestmark = pytest.mark.unit


class Fake(Pooled):
    def __init__(self, name: str) -> None:
        self.name = name


def fake_pool(servers: int, memory_mb: int | None = None, wait_s: float = 5.0) -> ServerPool:
    return ServerPool(lambda: PoolLimits(servers, memory_mb * 2**20 if memory_mb else None), wait_s=wait_s)


def test_the_least_recently_used_idle_server_goes_first_and_memory_counts():
    pool = fake_pool(3, memory_mb=100)
    for name in "abc":
        pool.acquire(name, load=lambda name=name: Fake(name), memory_bytes=30 * 2**20)
    pool.acquire("a", load=lambda: Fake("again"), memory_bytes=30 * 2**20)  # a is used again: b is the oldest
    pool.acquire("d", load=lambda: Fake("d"), memory_bytes=30 * 2**20)
    assert sorted(server.name for server in pool.servers()) == ["a", "c", "d"]
    closed = [server for server in pool.servers() if server.name in ("a", "c")]
    pool.acquire("e", load=lambda: Fake("e"), memory_bytes=60 * 2**20)  # memory: c, then a, must go
    assert sorted(server.name for server in pool.servers()) == ["d", "e"]
    assert pool.memory_bytes() <= 100 * 2**20
    assert all(server.closed for server in closed)


def test_when_every_server_is_answering_a_load_waits_for_one_and_then_gives_up():
    pool = fake_pool(1, wait_s=0.3)
    busy = pool.acquire("busy", load=lambda: Fake("busy"), memory_bytes=1)
    with busy.lease():
        started = time.monotonic()
        with pytest.raises(ServerPoolError, match="is busy answering"):
            pool.acquire("other", load=lambda: Fake("other"), memory_bytes=1)
        assert time.monotonic() - started >= 0.3
    pool.wait_s = 5
    lease = busy.lease()
    lease.__enter__()
    threading.Timer(0.2, lambda: lease.__exit__(None, None, None)).start()
    other = pool.acquire("other", load=lambda: Fake("other"), memory_bytes=1)  # once the lease is given back
    assert [server.name for server in pool.servers()] == [other.name] == ["other"]


def test_the_gguf_header_gives_the_context_cache_a_token_and_the_trained_context(tmp_path):
    path = local_models.ensure("smollm2-135m-instruct", tmp_path)
    shape = model_shape(path)
    # 30 layers x 3 key-value heads x (64 + 64) x 2 bytes
    assert (shape.cache_bytes_per_token, shape.trained_context) == (23_040, 8192)
    assert shape.file_bytes == path.stat().st_size
    other = tmp_path / "not-a-model.gguf"
    other.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 16)
    assert model_shape(other).cache_bytes_per_token is None
