"""Models shared by the slot component tests."""

import pytest


@pytest.fixture(scope="module")
def minilm():
    """The packaged all-MiniLM-L6-v2 embedding component, loaded once per module."""
    from rag.embeddings import AllMiniLML6V2Embedding

    model = AllMiniLML6V2Embedding()
    model.init_model()
    yield model
    model.close()


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A randomly initialised 2-layer BERT cross-encoder saved like a downloaded one (no package
    ships cross-encoder weights). Its tokenizer reads every word as [UNK], so a pair's score
    depends only on how many words the text has: arbitrary, but deterministic."""
    from sentence_transformers import CrossEncoder
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    import torch

    torch.manual_seed(0)
    directory = tmp_path_factory.mktemp("cross-encoder")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    (directory / "vocab.txt").write_text("\n".join(words) + "\n")
    BertTokenizerFast(vocab_file=str(directory / "vocab.txt")).save_pretrained(directory)
    config = BertConfig(vocab_size=len(words), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(directory)
    CrossEncoder(str(directory)).save(str(directory))
    return str(directory)
