"""The model store: registering and copying folders, zips, names, kinds, removal, and what the
presets and components make of installed models."""

import shutil
import zipfile
from pathlib import Path

import pytest

from rag.components import load_components
from rag.core import validate_tree
from rag.models_manager import CROSS_ENCODER, EMBEDDING, ModelInstallError, ModelStore, enables, packaged_models
from rag.presets import preset
from rag.retrievers.cross_encoder.retriever import cross_encoder_problem, load_cross_encoder

pytestmark = pytest.mark.unit


def zipped(folder: str, target: Path, *, inside: str | None = "model", extra: dict[str, bytes] | None = None,
           skip: tuple[str, ...] = ()) -> Path:
    """``folder`` as a zip (under one top-level folder ``inside``, or flat), plus ``extra`` entries."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(Path(folder).rglob("*")):
            relative = path.relative_to(folder).as_posix()
            if path.is_file() and relative not in skip:
                archive.write(path, f"{inside}/{relative}" if inside else relative)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return target


def refusal(call) -> ModelInstallError:
    with pytest.raises(ModelInstallError) as caught:
        call()
    return caught.value


# -- folders ----------------------------------------------------------------------------------


def test_a_registered_folder_stays_where_it_is_and_is_found_by_name(model_store, tiny_model_folders):
    folder = tiny_model_folders[CROSS_ENCODER]
    model = model_store.install_folder(Path(folder), kind=CROSS_ENCODER, name="tiny-ce")
    assert model.path == Path(folder).resolve() and model.details == {"labels": 1}
    assert model.source == {"type": "folder", "path": str(Path(folder).resolve())}
    assert [item.name for item in model_store.installed(CROSS_ENCODER)] == ["tiny-ce"]
    assert model_store.installed(EMBEDDING) == []
    assert model_store.resolve("tiny-ce", CROSS_ENCODER) == model
    assert model_store.resolve("tiny-ce", EMBEDDING) is None
    assert model.size == sum(path.stat().st_size for path in Path(folder).rglob("*") if path.is_file())


def test_a_copied_folder_survives_its_source(model_store, tiny_model_folders, tmp_path):
    source = Path(shutil.copytree(tiny_model_folders[EMBEDDING], tmp_path / "to-delete"))
    model = model_store.install_folder(source, kind=EMBEDDING, name="tiny-embed", copy=True)
    shutil.rmtree(source)
    assert model.path == model_store.root / "tiny-embed" / "files" and model.details == {"dimension": 32}
    assert model_store.get("tiny-embed") == model


@pytest.mark.parametrize(("kind", "claimed"), [(CROSS_ENCODER, EMBEDDING), (EMBEDDING, CROSS_ENCODER)])
def test_a_model_claimed_as_the_other_kind_is_refused_before_it_is_offered(model_store, tiny_model_folders, kind,
                                                                            claimed):
    error = refusal(lambda: model_store.install_folder(Path(tiny_model_folders[kind]), kind=claimed, name="wrong"))
    assert error.code == "wrong_kind"
    assert model_store.installed() == [] and not (model_store.root / "wrong").exists()


def test_names_are_checked_and_never_taken_twice(model_store, tiny_model_folders):
    folder = Path(tiny_model_folders[CROSS_ENCODER])
    for bad in ("../up", "with space", "-dash-first", "a" * 101):
        assert refusal(lambda bad=bad: model_store.install_folder(folder, kind=CROSS_ENCODER, name=bad)).code == "bad_name"
    model_store.install_folder(folder, kind=CROSS_ENCODER, name="tiny-ce")
    error = refusal(lambda: model_store.install_folder(folder, kind=CROSS_ENCODER, name="tiny-ce"))
    assert error.code == "name_taken" and "remove it first" in error.message


def test_only_embedding_models_and_cross_encoders_are_installed(model_store, tiny_model_folders):
    error = refusal(lambda: model_store.install_folder(Path(tiny_model_folders[EMBEDDING]), kind="llm", name="x"))
    assert error.code == "kind_not_installable"


def test_a_folder_that_holds_no_model_is_refused(model_store, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not a model")
    assert refusal(lambda: model_store.install_folder(tmp_path / "notes", kind=EMBEDDING)).code == "no_config"
    assert refusal(lambda: model_store.install_folder(tmp_path / "missing", kind=EMBEDDING)).code == "not_a_directory"


def test_removing_a_model_deletes_the_copy_but_never_a_registered_folder(model_store, tiny_model_folders):
    folder = Path(tiny_model_folders[CROSS_ENCODER])
    model_store.install_folder(folder, kind=CROSS_ENCODER, name="in-place")
    model_store.install_folder(folder, kind=CROSS_ENCODER, name="copied", copy=True)
    model_store.remove("in-place")
    model_store.remove("copied")
    assert model_store.installed() == [] and (folder / "config.json").is_file()
    assert not (model_store.root / "copied").exists()
    assert refusal(lambda: model_store.remove("copied")).code == "not_installed"


# -- zips -------------------------------------------------------------------------------------


@pytest.mark.parametrize("inside", ["tiny-ce", None], ids=["in-a-folder", "flat"])
def test_a_zip_of_a_model_folder_installs_without_its_code_or_pickles(model_store, tiny_model_folders, tmp_path,
                                                                       inside):
    archive = zipped(tiny_model_folders[CROSS_ENCODER], tmp_path / "tiny-ce.zip", inside=inside, extra={
        f"{inside + '/' if inside else ''}modeling_evil.py": b"import os; os.system('echo owned')",
        f"{inside + '/' if inside else ''}pytorch_model.bin": b"pickled",
        "__MACOSX/._config.json": b"resource fork",
    })
    stages = []
    model = model_store.install_zip(archive, kind=CROSS_ENCODER, progress=lambda *event: stages.append(event))
    assert model.name == "tiny-ce" and model.source == {"type": "zip", "file": "tiny-ce.zip"}
    files = {path.name for path in model.path.rglob("*")}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= files
    assert not files & {"modeling_evil.py", "pytorch_model.bin", "._config.json"}
    assert stages[0][0] == "extracting" and stages[-1] == ("checking", 1, 1)
    assert load_cross_encoder("tiny-ce", "CPU").predict([("river", "bank")]).shape == (1,)


@pytest.mark.parametrize(("entry", "code"), [
    ("../outside.json", "path_traversal"),
    ("model/../../outside.json", "path_traversal"),
    ("/etc/outside.json", "path_traversal"),
    ("C:/outside.json", "path_traversal"),
])
def test_a_zip_whose_entries_leave_the_folder_is_refused(model_store, tiny_model_folders, tmp_path, entry, code):
    archive = zipped(tiny_model_folders[CROSS_ENCODER], tmp_path / "evil.zip", extra={entry: b"{}"})
    error = refusal(lambda: model_store.install_zip(archive, kind=CROSS_ENCODER))
    assert error.code == code and entry in error.message
    assert not (tmp_path / "outside.json").exists() and model_store.installed() == []


def test_a_zip_with_a_symbolic_link_is_refused(model_store, tiny_model_folders, tmp_path):
    archive = zipped(tiny_model_folders[CROSS_ENCODER], tmp_path / "link.zip")
    link = zipfile.ZipInfo("model/vocab-link.txt")
    link.external_attr = (0o120777 << 16)
    with zipfile.ZipFile(archive, "a") as bundle:
        bundle.writestr(link, "/etc/passwd")
    assert refusal(lambda: model_store.install_zip(archive, kind=CROSS_ENCODER)).code == "link"


def test_a_zip_larger_than_the_limit_is_refused_even_when_it_compresses_well(tiny_model_folders, tmp_path):
    store = ModelStore(tmp_path / "small", max_bytes=200_000)
    archive = zipped(tiny_model_folders[CROSS_ENCODER], tmp_path / "big.zip",
                     extra={"model/padding.json": b" " * 400_000})
    assert archive.stat().st_size < 200_000
    error = refusal(lambda: store.install_zip(archive, kind=CROSS_ENCODER))
    assert error.code == "too_large" and "TRELLIS_MAX_MODEL_MB" in error.message
    assert store.installed() == []


def test_a_zip_without_safetensors_weights_or_a_config_is_not_a_model(model_store, tiny_model_folders, tmp_path):
    pickles_only = zipped(tiny_model_folders[CROSS_ENCODER], tmp_path / "pickles.zip", skip=("model.safetensors",),
                          extra={"model/pytorch_model.bin": b"pickled weights"})
    assert refusal(lambda: model_store.install_zip(pickles_only, kind=CROSS_ENCODER)).code == "no_safetensors"
    no_config = zipped(tiny_model_folders[CROSS_ENCODER], tmp_path / "noconfig.zip", skip=("config.json",))
    assert refusal(lambda: model_store.install_zip(no_config, kind=CROSS_ENCODER)).code == "no_config"
    (tmp_path / "notes.zip").write_bytes(b"PK\x03\x04 not really a zip")
    assert refusal(lambda: model_store.install_zip(tmp_path / "notes.zip", kind=CROSS_ENCODER)).code == "not_a_zip"


# -- what installed models make possible ------------------------------------------------------


def test_the_cross_encoder_preset_runs_on_an_installed_cross_encoder(model_store, tiny_model_folders):
    registry = load_components()
    _, errors = validate_tree(preset("hybrid-cross-encoder").config(), registry=registry, kind="retriever",
                              check_availability=True)
    (error,) = errors
    assert error.code == "unavailable"
    assert "Models page" in error.message
    assert "manage.py" not in error.message
    assert error.action == {"code": "install_model",
                            "params": {"kind": CROSS_ENCODER, "model": "cross-encoder/ms-marco-MiniLM-L-6-v2"}}

    model_store.install_folder(Path(tiny_model_folders[CROSS_ENCODER]), kind=CROSS_ENCODER, name="tiny-ce")
    config = preset("hybrid-cross-encoder").config()
    assert config["params"]["model_name"] == "tiny-ce"
    normalised, errors = validate_tree(config, registry=registry, kind="retriever", check_availability=True)
    assert errors == [] and normalised["params"]["model_name"] == "tiny-ce"
    assert cross_encoder_problem("tiny-ce") is None


def test_a_hub_id_finds_the_model_installed_from_it(model_store, tiny_model_folders):
    model_store.install_folder(Path(tiny_model_folders[CROSS_ENCODER]), kind=CROSS_ENCODER, name="tiny-ce")
    manifest = model_store.root / "tiny-ce" / "trellis-model.json"
    manifest.write_text(manifest.read_text().replace('"type": "folder"', '"type": "hub", "repo_id": "acme/tiny-ce"'))
    assert model_store.resolve("acme/tiny-ce", CROSS_ENCODER).name == "tiny-ce"
    assert cross_encoder_problem("acme/tiny-ce") is None


def test_an_installed_embedding_model_is_named_by_sentence_transformer_components(model_store, tiny_model_folders):
    from rag.embeddings import SentenceTransformerEmbedding

    model_store.install_folder(Path(tiny_model_folders[EMBEDDING]), kind=EMBEDDING, name="tiny-embed")
    assert SentenceTransformerEmbedding.availability_problem({"model_name_or_path": "tiny-embed"}) is None
    component = SentenceTransformerEmbedding(model_name_or_path="tiny-embed")
    assert component.embed_documents(["river bank"]).shape == (1, 32)
    assert component.model_key.startswith("tiny-embed-")


def test_packaged_models_are_listed_with_what_they_enable():
    packaged = {model.name: model for model in packaged_models()}
    assert {"all-minilm-l6-v2-int8", "all-minilm-l6-v2", "multilingual-e5-small-q4", "qwen2.5-0.5b-instruct"} <= set(packaged)
    int8 = packaged["all-minilm-l6-v2-int8"]
    assert int8.kind == EMBEDDING and int8.license == "Apache-2.0" and int8.size > 20_000_000
    assert enables(int8)["components"] == ["AllMiniLML6V2OnnxEmbedding"]
    assert "hybrid-llm-rerank" in enables(packaged["qwen2.5-0.5b-instruct"])["presets"]
