"""parse_document_isolated: every Markdown, HTML, PDF or DOCX file is parsed by a fresh child of
the parsers' zygote, within its time and memory limits, and one child's death harms no other."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from rag.documents.errors import DocumentParseError
from rag.documents.parsers import isolated, parse_document, parse_document_isolated

pytestmark = pytest.mark.unit

MARKDOWN = b"# Ferns\n\nFerns *reproduce* by spores, not seeds.\n"
QUADRATIC_MARKDOWN = b"[a](" * 30_000  # Python-Markdown's inline patterns take minutes on this


def test_a_child_answers_what_parsing_in_process_answers():
    html = b"<html><body><h1>Moss</h1><p>Moss has no roots.</p><script>alert(1)</script></body></html>"
    for data, name in ((MARKDOWN, "ferns.md"), (html, "moss.html")):
        assert parse_document_isolated(data, name) == parse_document(data, name)


def test_a_child_past_its_time_is_ended_and_the_next_file_is_parsed():
    with pytest.raises(DocumentParseError) as refused:
        parse_document_isolated(QUADRATIC_MARKDOWN, "links.md", timeout_s=1)
    assert refused.value.code == "timeout"
    assert "longer than 1 s" in str(refused.value) and "Markdown" in str(refused.value)
    assert parse_document_isolated(MARKDOWN, "ferns.md").sections[0].text.startswith("Ferns")


def test_a_child_out_of_memory_fails_its_file_alone():
    # 20 MB of address space is less than the interpreter already maps: the child's first
    # allocation of the parse fails.
    with pytest.raises(DocumentParseError) as refused:
        parse_document_isolated(MARKDOWN * 2000, "ferns.md", memory_bytes=20 * 1024 * 1024)
    assert refused.value.code in ("too_much_memory", "parser_crashed")
    assert parse_document_isolated(MARKDOWN, "ferns.md").sections


def test_a_killed_zygote_is_started_again_for_the_next_file():
    parse_document_isolated(MARKDOWN, "ferns.md")
    first = isolated._zygote
    assert first is not None and first.alive()
    first.process.kill()
    first.process.wait()
    assert parse_document_isolated(MARKDOWN, "ferns.md").sections[0].text.startswith("Ferns")
    assert isolated._zygote is not first and isolated._zygote.alive()
    assert not os.path.exists(first.folder)


def test_plain_text_is_parsed_in_process_without_a_child(monkeypatch):
    def no_child(*args, **kwargs):
        raise AssertionError("plain text went to a child process")

    monkeypatch.setattr(isolated, "_ask_a_child", no_child)
    assert parse_document_isolated(b"Plain words.", "notes.txt").sections[0].text == "Plain words."


def test_a_zygote_whose_parent_has_gone_removes_its_socket_folder():
    # A parent killed outright runs no atexit: the zygote sees its stdin close and cleans up.
    zygote = isolated._Zygote()
    assert os.path.exists(zygote.address)
    assert zygote.process.stdin is not None
    zygote.process.stdin.close()
    assert zygote.process.wait(timeout=10) == 0
    assert not os.path.exists(zygote.folder)


@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_zygote_ended_by_a_signal_removes_its_socket_folder(ending):
    # `kill` of a process group or Ctrl-C reaches the parent too, which may die without its atexit.
    zygote = isolated._Zygote()
    try:
        os.kill(zygote.process.pid, ending)
        assert zygote.process.wait(timeout=10) == 0
        assert not os.path.exists(zygote.folder)
    finally:
        zygote.close()


def test_a_child_ended_by_a_signal_fails_its_file_and_leaves_the_zygote_serving():
    parse_document_isolated(MARKDOWN, "ferns.md")
    zygote = isolated._zygote
    assert zygote is not None
    outcome: list[BaseException] = []

    def parse_forever() -> None:
        try:
            parse_document_isolated(QUADRATIC_MARKDOWN, "links.md", timeout_s=60)
        except DocumentParseError as error:
            outcome.append(error)

    children = Path(f"/proc/{zygote.process.pid}/task/{zygote.process.pid}/children")
    # A child of an earlier file may still be ending: the one to kill is the one forked for this file.
    earlier = set(children.read_text().split())
    parsing = threading.Thread(target=parse_forever)
    parsing.start()
    deadline = time.monotonic() + 10
    while not (child := set(children.read_text().split()) - earlier) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert child, "the zygote forked no child for the file"
    os.kill(int(child.pop()), signal.SIGTERM)
    parsing.join(timeout=30)
    assert isinstance(outcome[0], DocumentParseError) and outcome[0].code == "parser_crashed"
    assert zygote.alive() and os.path.exists(zygote.address)
    assert isolated._zygote is zygote
    assert parse_document_isolated(MARKDOWN, "ferns.md").sections[0].text.startswith("Ferns")
