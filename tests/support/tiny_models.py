"""Models the tests build themselves, since no package ships them (MODELS.md)."""

from __future__ import annotations

from pathlib import Path


def build_tiny_cross_encoder(directory: Path, words: list[str] | None = None) -> str:
    """A randomly initialised 2-layer BERT cross-encoder saved like a downloaded one; returns
    its path. Its scores are meaningless; its mechanics (tokenising pairs, one logit per pair)
    are the real ones."""
    from sentence_transformers import CrossEncoder
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *(words or [])]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(vocabulary) + "\n")
    BertTokenizerFast(vocab_file=str(directory / "vocab.txt")).save_pretrained(directory)
    config = BertConfig(vocab_size=len(vocabulary), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(directory)
    CrossEncoder(str(directory)).save(str(directory))
    return str(directory)
