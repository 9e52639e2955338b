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


def build_tiny_embedding_model(directory: Path, words: list[str] | None = None) -> str:
    """A randomly initialised 2-layer BERT saved as a sentence-transformers model (mean
    pooling, 32 dimensions); returns its path. Its vectors mean nothing; loading and encoding
    are the real ones."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *(words or [])]
    source = directory.parent / f"{directory.name}-bert"
    source.mkdir(parents=True, exist_ok=True)
    (source / "vocab.txt").write_text("\n".join(vocabulary) + "\n")
    BertTokenizerFast(vocab_file=str(source / "vocab.txt")).save_pretrained(source)
    config = BertConfig(vocab_size=len(vocabulary), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64)
    BertModel(config).save_pretrained(source)
    transformer = Transformer(str(source), max_seq_length=64)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(directory))
    return str(directory)
