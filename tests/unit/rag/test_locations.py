"""Where the shared datasets are found: the environment, the folders above the checkout, and,
for a clone, the folders above the repository it was cloned from."""

import subprocess

import pytest

from rag.locations import datasets_dir

pytestmark = pytest.mark.unit


@pytest.fixture
def workplace(tmp_path):
    """``<tmp>/shared/datasets`` beside ``<tmp>/work/trellis`` (a git repository)."""
    (tmp_path / "shared" / "datasets" / "scifact").mkdir(parents=True)
    checkout = tmp_path / "work" / "trellis"
    checkout.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    subprocess.run(["git", "-C", str(checkout), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q",
                    "--allow-empty", "-m", "start"], check=True)
    return tmp_path, checkout


def test_the_environment_variable_wins(workplace, tmp_path):
    _, checkout = workplace
    assert datasets_dir(checkout, {"TRELLIS_DATASETS_DIR": str(tmp_path / "mine")}) == (tmp_path / "mine").resolve()


def test_the_nearest_shared_datasets_above_the_checkout_is_found(workplace):
    root, checkout = workplace
    assert datasets_dir(checkout, {}) == root / "shared" / "datasets"


def test_a_clone_elsewhere_finds_them_above_the_repository_it_was_cloned_from(workplace, tmp_path_factory):
    root, checkout = workplace
    clone = tmp_path_factory.mktemp("elsewhere") / "clone"
    subprocess.run(["git", "clone", "-q", str(checkout), str(clone)], check=True)
    assert datasets_dir(clone, {}) == root / "shared" / "datasets"


def test_with_none_anywhere_it_names_the_conventional_place(tmp_path):
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    assert datasets_dir(lonely, {}) == tmp_path / "shared" / "datasets"
