"""Local model servers are pooled: at most the cap alive, the least recently used idle one let go
of (and freed), never one that is answering; threads and context clamped to what the machine
and the memory limit allow (issue 38, finding 6). With the packaged SmolLM2 135M."""

import socket
import threading
from urllib.parse import urlsplit

import pytest

from rag.llms import LocalLLM, local
from rag.llms.server_pool import ServerPool, ServerPoolError

SMOLLM = "smollm2-135m-instruct"
QUESTION = [{"role": "user", "content": "Say yes."}]


@pytest.fixture
def pool(tmp_path_factory, monkeypatch):
    """A fresh, empty pool of this process's llama.cpp servers; ``limit(servers, memory_mb)``
    bounds it."""
    monkeypatch.setenv("TRELLIS_MODELS_DIR", str(tmp_path_factory.getbasetemp() / "pool-models"))
    fresh = ServerPool(local.server_limits, wait_s=30)
    monkeypatch.setattr(local, "_servers", fresh)
    monkeypatch.setattr(local, "_configured_limits", local._configured_limits)  # back as it was, after
    yield lambda servers, memory_mb=0: local.configure_local_servers(max_servers=servers, max_memory_mb=memory_mb)
    fresh.clear()


def listening(address: str) -> bool:
    parts = urlsplit(address)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=1).close()
        return True
    except OSError:
        return False


def llama_threads() -> int:
    import os

    return len(os.listdir("/proc/self/task"))


@pytest.mark.unit
@pytest.mark.slow
def test_four_context_sizes_keep_at_most_the_cap_of_servers_and_free_the_ones_let_go(pool):
    pool(2)
    threads_before = llama_threads()
    addresses = []
    for context in (512, 768, 1024, 1280):
        model = LocalLLM(model=SMOLLM, context_tokens=context, max_tokens=2, threads=1)
        model.init_model()
        addresses.append(model._engine().address)
    alive = [address for address in addresses if listening(address)]
    assert len(set(addresses)) == 4, "each context size had a server of its own"
    assert alive == addresses[2:], "only the two most recently used servers are alive; the others are freed"
    assert sorted(server.key[1] for server in local._servers.servers()) == [1024, 1280]
    # What llama.cpp runs for two servers, not four (each server has its own threads).
    assert llama_threads() - threads_before <= 2 * 12
    # A smaller context is served by a larger server of the same file: nothing loads.
    assert LocalLLM(model=SMOLLM, context_tokens=512, max_tokens=2, threads=1).generate(QUESTION) is not None
    assert [listening(address) for address in addresses] == [False, False, True, True]


@pytest.mark.unit
@pytest.mark.slow
def test_a_server_answering_is_not_let_go_of(pool):
    pool(2)
    answering = LocalLLM(model=SMOLLM, context_tokens=512, max_tokens=48, threads=1)
    stream = answering.stream([{"role": "user", "content": "Count from one to ten in words."}])
    assert next(stream)
    [server] = local._servers.servers()
    assert server.leases == 1, "a stream holds its server while it generates"
    stream.close()
    # A request in flight on another thread (as a stream's producer is) holds the 512 server.
    holding, release = threading.Event(), threading.Event()

    def in_flight():
        with server.lease():
            holding.set()
            release.wait(10)

    threading.Thread(target=in_flight, daemon=True).start()
    assert holding.wait(10)
    idle = LocalLLM(model=SMOLLM, context_tokens=768, max_tokens=2, threads=1)
    idle.init_model()
    idle_address = idle._engine().address
    LocalLLM(model=SMOLLM, context_tokens=1024, max_tokens=2, threads=1).init_model()
    release.set()
    assert not listening(idle_address), "the idle 768 server went, though the 512 one was used longer ago"
    assert listening(server.address) and server.leases in (0, 1)
    assert sorted(server.key[1] for server in local._servers.servers()) == [512, 1024]


@pytest.mark.unit
@pytest.mark.slow
def test_threads_and_context_are_clamped_to_the_cores_and_the_memory_limit(pool, monkeypatch):
    pool(3, memory_mb=250)
    # One core (as in a one-core container): a llama.cpp server's first start with two threads
    # takes seconds on a busy machine, and the clamp is the same.
    monkeypatch.setattr(local, "available_cores", lambda: 1)
    model = LocalLLM(model=SMOLLM, context_tokens=32768, threads=256, max_tokens=2)
    model.init_model()
    [server] = local._servers.servers()
    path, context, threads = server.key
    assert threads == 1
    # 250 MB less the weights (94 MB) and buffers (96 MB), at 2 slots x 23 KB a token: 1,280 tokens
    # (in steps of 256); without the limit, the model's own 8,192.
    assert context == 1280
    assert local.server_memory_bytes(path, context) <= 250 * 2**20
    assert model.generate(QUESTION) is not None
    pool(3, memory_mb=150)
    with pytest.raises(ServerPoolError, match=r"needs about \d+ MB even with the smallest context, more than the "
                                              r"150 MB"):
        LocalLLM(model=SMOLLM, context_tokens=1024, max_tokens=2, threads=1).init_model()
