"""Installing from a Hugging Face Hub, for real over HTTP, against the loopback hub of
``tests/support/fake_hub.py``: progress, verification, resuming, and every refusal."""

from pathlib import Path

import pytest

from rag.models_manager import CROSS_ENCODER, ModelInstallError, ModelStore
from tests.support.fake_hub import FakeHub

pytestmark = pytest.mark.unit

REPO = "acme/tiny-ce"


@pytest.fixture
def hub(fake_hub, tiny_model_folders):
    fake_hub.add_repo(REPO, Path(tiny_model_folders[CROSS_ENCODER]), license="apache-2.0")
    return fake_hub


def install(store: ModelStore, hub: FakeHub, **options):
    events = []
    model = store.install_hub(options.pop("repo_id", REPO), kind=options.pop("kind", CROSS_ENCODER),
                              endpoint=hub.url, progress=lambda *event: events.append(event), **options)
    return model, events


def refusal(call) -> ModelInstallError:
    with pytest.raises(ModelInstallError) as caught:
        call()
    return caught.value


def test_a_hub_model_is_downloaded_verified_checked_and_installed_with_progress(model_store, hub):
    model, events = install(model_store, hub)
    repo = hub.repos[REPO]
    assert model.name == "tiny-ce" and model.kind == CROSS_ENCODER and model.license == "apache-2.0"
    assert model.source == {"type": "hub", "repo_id": REPO, "revision": repo.commit, "endpoint": hub.url}
    assert sorted(path.relative_to(model.path).as_posix() for path in model.path.rglob("*") if path.is_file()) \
        == sorted(repo.files)
    downloading = [event for event in events if event[0] == "downloading"]
    total = sum(len(item.data) for item in repo.files.values())
    assert downloading[-1] == ("downloading", total, total)
    assert [done for _, done, _ in downloading] == sorted(done for _, done, _ in downloading)
    assert events[-2:] == [("checking", 0, 1), ("checking", 1, 1)]
    assert model_store.resolve(REPO, CROSS_ENCODER) == model
    assert not (model_store.root / ".partial").exists() or not any((model_store.root / ".partial").iterdir())


def test_a_connection_cut_mid_file_is_resumed_and_the_file_still_verifies(model_store, hub):
    hub.cut_once["model.safetensors"] = 40_000
    model, _ = install(model_store, hub)
    assert len(hub.downloads_of("model.safetensors")) == 2
    assert (model.path / "model.safetensors").read_bytes() == hub.repos[REPO].files["model.safetensors"].data


def test_an_install_started_again_fetches_only_what_the_failed_one_lacked(model_store, hub):
    # Files come in the hub's order; vocab.txt is the last, served corrupted the first time.
    hub.corrupt.add("vocab.txt")
    error = refusal(lambda: install(model_store, hub))
    assert error.code == "checksum" and "vocab.txt" in error.message
    assert model_store.installed() == []
    assert len(hub.downloads_of("model.safetensors")) == 1

    hub.corrupt.clear()
    model, events = install(model_store, hub)
    assert len(hub.downloads_of("model.safetensors")) == 1, "the verified weights were downloaded again"
    assert len(hub.downloads_of("vocab.txt")) == 2
    total = sum(len(item.data) for item in hub.repos[REPO].files.values())
    assert ("downloading", total, total) in events and model.name == "tiny-ce"


def test_a_file_that_does_not_match_the_hubs_checksum_is_refused_and_deleted(model_store, hub):
    hub.corrupt.add("model.safetensors")
    error = refusal(lambda: install(model_store, hub))
    assert error.code == "checksum" and "model.safetensors" in error.message
    assert model_store.installed() == []
    assert not list(model_store.root.glob(".partial/*/files/model.safetensors"))


@pytest.mark.parametrize(("repo_id", "options", "code"), [
    ("acme/missing", {}, "not_found"),
    (REPO, {"revision": "v9"}, "no_revision"),
    ("not a repo id", {}, "bad_repo_id"),
])
def test_a_hub_that_cannot_give_the_model_is_refused_with_the_reason(model_store, hub, repo_id, options, code):
    assert refusal(lambda: install(model_store, hub, repo_id=repo_id, **options)).code == code
    assert model_store.installed() == []


def test_a_gated_model_asks_for_the_terms_and_a_token(model_store, hub, tiny_model_folders):
    hub.add_repo("acme/gated", Path(tiny_model_folders[CROSS_ENCODER]), gated=True)
    error = refusal(lambda: install(model_store, hub, repo_id="acme/gated"))
    assert error.code == "gated" and "token" in error.message


def test_a_model_without_safetensors_is_refused_before_any_download(model_store, hub, tiny_model_folders, tmp_path):
    folder = tmp_path / "pickled"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "pytorch_model.bin").write_bytes(b"pickle")
    hub.add_repo("acme/pickled", folder)
    assert refusal(lambda: install(model_store, hub, repo_id="acme/pickled")).code == "no_safetensors"
    assert not [request for request in hub.requests if "/resolve/" in request.path]


def test_a_model_over_the_size_limit_is_refused_before_any_download(hub, tmp_path):
    small = ModelStore(tmp_path / "small", max_bytes=50_000)
    error = refusal(lambda: install(small, hub))
    assert error.code == "too_large" and "TRELLIS_MAX_MODEL_MB" in error.message
    assert not [request for request in hub.requests if "/resolve/" in request.path]


def test_an_offline_store_downloads_nothing(hub, tmp_path):
    offline = ModelStore(tmp_path / "offline", offline=True)
    error = refusal(lambda: install(offline, hub))
    assert error.code == "offline" and "TRELLIS_OFFLINE=1" in error.message
    assert hub.requests == []


def test_an_unreachable_hub_is_named(model_store):
    error = refusal(lambda: model_store.install_hub(REPO, kind=CROSS_ENCODER, endpoint="http://127.0.0.1:9"))
    assert error.code == "unreachable" and "http://127.0.0.1:9" in error.message


def test_the_hub_endpoint_comes_from_hf_endpoint(model_store, hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    model = model_store.install_hub(REPO, kind=CROSS_ENCODER, name="from-env")
    assert model.source["endpoint"] == hub.url and hub.requests
