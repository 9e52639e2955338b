"""A model's files are data: a function they name is refused before sentence-transformers could
import or call it (issue 38, finding 1), and what loading raises never escapes as ``SystemExit``.

The hostile names are never really called: ``os.abort`` and ``torch.distributed.run.main`` are
replaced for each test by stand-ins that record the call and raise, so a regression fails loudly
instead of killing pytest or starting a distributed launcher."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from rag.core import TrellisError
from rag.embeddings.base import EmbeddingError
from rag.models_manager import CROSS_ENCODER, EMBEDDING, ModelInstallError, inspect_model_zip
from rag.models_manager.safety import (
    ALLOWED_ACTIVATIONS,
    ModelLoadAborted,
    abort_guard,
    check_model_files,
    model_files_problem,
)

pytestmark = pytest.mark.unit


class Called(Exception):
    """Raised by the stand-ins of the hostile callables."""


@pytest.fixture
def hostile_callables(monkeypatch):
    """``os.abort`` and ``torch.distributed.run.main`` replaced by recorders that raise."""
    import torch.distributed.run

    calls: list[str] = []

    def fake_abort() -> None:
        calls.append("os.abort")
        raise Called("os.abort was called")

    def fake_launcher(*args, **kwargs) -> None:
        calls.append("torch.distributed.run.main")
        raise SystemExit(2)  # what the real one does without arguments, after parsing sys.argv

    monkeypatch.setattr(os, "abort", fake_abort)
    monkeypatch.setattr(torch.distributed.run, "main", fake_launcher)
    return calls


def embedding_with_dense(source: str, target: Path, activation: str) -> Path:
    """The tiny embedding model plus a ``2_Dense`` module whose config names ``activation``."""
    from sentence_transformers.sentence_transformer.modules import Dense

    shutil.copytree(source, target)
    (target / "2_Dense").mkdir()
    Dense(32, 8).save(str(target / "2_Dense"))
    config_path = target / "2_Dense" / "config.json"
    config = json.loads(config_path.read_text())
    config["activation_function"] = activation
    config_path.write_text(json.dumps(config))
    modules = json.loads((target / "modules.json").read_text())
    modules.append({"idx": len(modules), "name": str(len(modules)), "path": "2_Dense",
                    "type": "sentence_transformers.base.modules.dense.Dense"})
    (target / "modules.json").write_text(json.dumps(modules))
    return target


def cross_encoder_naming(source: str, target: Path, activation: str) -> Path:
    """The tiny cross-encoder whose config.json names ``activation`` as its activation_fn (and
    whose config_sentence_transformers.json names none, as a plain Hugging Face save)."""
    shutil.copytree(source, target)
    config = json.loads((target / "config.json").read_text())
    config["sentence_transformers"] = {"activation_fn": activation}
    (target / "config.json").write_text(json.dumps(config))
    (target / "config_sentence_transformers.json").unlink()
    return target


def zipped(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"model/{path.relative_to(folder).as_posix()}")
    return target


def test_an_embedding_zip_whose_dense_layer_names_os_abort_is_refused_before_loading(
        model_store, tiny_model_folders, tmp_path, hostile_callables):
    folder = embedding_with_dense(tiny_model_folders[EMBEDDING], tmp_path / "hostile", "os.abort")
    archive = zipped(folder, tmp_path / "hostile.zip")

    with pytest.raises(ModelInstallError) as on_upload:
        inspect_model_zip(archive, max_bytes=10 ** 9, label="hostile.zip")
    with pytest.raises(ModelInstallError) as on_install:
        model_store.install_zip(archive, kind=EMBEDDING, name="hostile")

    for refusal in (on_upload.value, on_install.value):
        assert refusal.code == "names_code", refusal.message
        assert "2_Dense/config.json" in refusal.message and "'os.abort'" in refusal.message
        assert "Tanh" in refusal.message  # the reason says what is allowed
    assert model_store.installed() == [] and hostile_callables == []


def test_a_folder_naming_os_abort_is_refused_even_with_trust_remote_code(tiny_model_folders, tmp_path,
                                                                        hostile_callables):
    """The attack of the issue: the embedding component loads the folder with trust_remote_code,
    which lets sentence-transformers import and call any activation its files name."""
    from rag.embeddings.sentence_transformer import SentenceTransformerEmbedding

    folder = embedding_with_dense(tiny_model_folders[EMBEDDING], tmp_path / "hostile", "os.abort")
    model = SentenceTransformerEmbedding(model_name_or_path=str(folder), trust_remote_code=True)
    with pytest.raises(EmbeddingError, match=r"refuses to load .*'os\.abort'"):
        model.embed_documents(["a passage"])
    assert hostile_callables == []


def test_a_cross_encoder_zip_naming_a_torch_launcher_is_refused_before_loading(
        model_store, tiny_model_folders, tmp_path, hostile_callables):
    folder = cross_encoder_naming(tiny_model_folders[CROSS_ENCODER], tmp_path / "hostile",
                                  "torch.distributed.run.main")
    archive = zipped(folder, tmp_path / "hostile.zip")

    with pytest.raises(ModelInstallError) as on_upload:
        inspect_model_zip(archive, max_bytes=10 ** 9, label="hostile.zip")
    with pytest.raises(ModelInstallError) as on_install:
        model_store.install_zip(archive, kind=CROSS_ENCODER, name="hostile")
    with pytest.raises(ModelInstallError):
        model_store.install_folder(folder, kind=CROSS_ENCODER, name="hostile")

    for refusal in (on_upload.value, on_install.value):
        assert refusal.code == "names_code" and "'torch.distributed.run.main'" in refusal.message
    assert hostile_callables == []


def test_the_cross_encoder_component_refuses_a_folder_naming_a_function(tiny_model_folders, tmp_path,
                                                                        hostile_callables):
    from rag.retrievers.cross_encoder.retriever import load_cross_encoder

    folder = cross_encoder_naming(tiny_model_folders[CROSS_ENCODER], tmp_path / "hostile",
                                  "torch.distributed.run.main")
    with pytest.raises(TrellisError, match="torch.distributed.run.main"):
        load_cross_encoder(str(folder), "CPU")
    assert hostile_callables == []


@pytest.mark.parametrize("where", ["config.json", "config_sentence_transformers.json"])
def test_every_place_a_cross_encoder_names_its_activation_is_read(tiny_model_folders, tmp_path, where):
    folder = Path(shutil.copytree(tiny_model_folders[CROSS_ENCODER], tmp_path / "model"))
    config = json.loads((folder / where).read_text())
    if where == "config.json":
        config["sbert_ce_default_activation_function"] = "subprocess.getoutput"
    else:
        config["activation_fn"] = "builtins.exit"
    (folder / where).write_text(json.dumps(config))
    problem = model_files_problem(folder)
    assert problem is not None and problem.code == "names_code" and where in problem.message


def test_modules_outside_sentence_transformers_own_are_refused_unless_trusted(tiny_model_folders, tmp_path):
    folder = Path(shutil.copytree(tiny_model_folders[EMBEDDING], tmp_path / "model"))
    modules = json.loads((folder / "modules.json").read_text())
    modules[1]["type"] = "sentence_transformers.base.modules.router.Router"
    (folder / "modules.json").write_text(json.dumps(modules))
    problem = model_files_problem(folder)
    assert problem is not None and "Router" in problem.message
    # trust_remote_code (administrators only) lets custom modules in, never another activation.
    assert model_files_problem(folder, trust_remote_code=True) is None


def test_the_models_trellis_builds_and_ships_pass(tiny_model_folders):
    for folder in tiny_model_folders.values():
        check_model_files(Path(folder))
    assert {"torch.nn.modules.activation.Tanh", "torch.nn.modules.linear.Identity",
            "torch.nn.modules.activation.Sigmoid", "torch.nn.modules.activation.GELU"} <= ALLOWED_ACTIVATIONS


@pytest.mark.parametrize("raised", [SystemExit(2), KeyboardInterrupt()])
def test_what_loading_raises_beyond_exception_becomes_a_readable_error(raised):
    with pytest.raises(ModelLoadAborted) as caught, abort_guard():
        raise raised
    assert caught.value.code == "load_aborted" and type(raised).__name__ in caught.value.message
    assert isinstance(caught.value, Exception)
