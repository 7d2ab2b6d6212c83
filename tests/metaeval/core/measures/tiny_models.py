"""Tiny random-weight Hugging Face models written by the tests, so the neural measures run without any hub.

Every model shares one WordPiece vocabulary (:data:`VOCAB`): the special tokens, punctuation, digits, single
letters and ``##`` letters (so any lowercase ASCII text tokenises without ``[UNK]``), some common English words
and ``##`` suffixes. Weights come from ``torch.manual_seed(seed)`` with a large ``initializer_range`` (0.2), so
the masked-LM distributions are far from uniform and texts get clearly different InfoLM distances.
"""
from __future__ import annotations

import string
from pathlib import Path
from typing import Any

#: tokenizer limit of the tiny BERTScore encoder fixture: long test texts get truncated
ENCODER_MAX_LENGTH = 12

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
PUNCTUATION = tuple(".,;:!?'\"-()$%&/#@")
DIGITS = tuple(string.digits)
LETTERS = tuple(string.ascii_lowercase)
WORDS = tuple(
    """
    the a an of to and in is was it for on that with as by at from this be are were has have had not but
    or if he she they we you i his her their our its who what when where which there than then so no yes
    one two three four five new old good bad big small long short first last many more most some all any
    each other same such only also very just about after before over under into out up down off again
    cat dog bird fish horse tree house car road city town country world people man woman child children
    day night year week time water fire food book school market government president police policy
    election report news story game team player music film art money bank price job work home family
    friend life death war peace law court money market company business state nation party vote
    say said says go went run ran see saw make made take took come came give gave know knew think
    thought find found tell told ask asked use used want wanted look looked read write wrote play played
    happy sad fast slow red blue green black white high low hot cold free open close right left
    because while during without within between through against among across
    """.split()
)
SUFFIXES = tuple(
    "##s ##es ##ed ##ing ##er ##est ##ly ##ness ##ment ##tion ##al ##ful ##less ##able ##ity ##ous ##ive ##ize".split()
)
HASH_LETTERS = tuple(f"##{c}" for c in LETTERS) + tuple(f"##{d}" for d in DIGITS)


def _unique(tokens: tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(tokens))  # WORDS repeats a few words ("market", "money"): keep the first


VOCAB: list[str] = _unique(SPECIAL_TOKENS + PUNCTUATION + DIGITS + LETTERS + HASH_LETTERS + WORDS + SUFFIXES)
assert len(VOCAB) == len(set(VOCAB))
assert VOCAB[:5] == list(SPECIAL_TOKENS)  # [PAD]=0 as BertConfig.pad_token_id expects


def write_vocab(folder: Path) -> Path:
    """Write :data:`VOCAB` as ``vocab.txt`` in ``folder``; its path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return path


def tokenizer(folder: Path, model_max_length: int = 64, *, distilbert: bool = False) -> Any:
    """A lower-casing WordPiece fast tokenizer over :data:`VOCAB`, saved into ``folder``."""
    from transformers import BertTokenizerFast, DistilBertTokenizerFast

    cls = DistilBertTokenizerFast if distilbert else BertTokenizerFast
    tok = cls(vocab_file=str(write_vocab(folder)), do_lower_case=True, model_max_length=model_max_length)
    tok.save_pretrained(str(folder))
    return tok


def _bert_config(**config: Any) -> Any:
    from transformers import BertConfig

    settings: dict[str, Any] = dict(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        initializer_range=0.2,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    settings.update(config)
    return BertConfig(**settings)


def masked_lm(folder: Path, seed: int = 0, *, model_max_length: int = 64, **config: Any) -> Path:
    """A random ``BertForMaskedLM`` (2 layers, hidden 32) and its tokenizer saved in ``folder``; the folder."""
    import torch
    from transformers import BertForMaskedLM

    folder = Path(folder)
    tokenizer(folder, model_max_length)
    torch.manual_seed(seed)
    model = BertForMaskedLM(_bert_config(**config)).eval()
    model.save_pretrained(str(folder))
    return folder


def encoder(folder: Path, seed: int = 0, *, model_max_length: int = 64, **config: Any) -> Path:
    """A random ``BertModel`` without an LM head (3 layers, so the layer choice matters) saved in ``folder``."""
    import torch
    from transformers import BertModel

    folder = Path(folder)
    tokenizer(folder, model_max_length)
    torch.manual_seed(seed)
    model = BertModel(_bert_config(**{"num_hidden_layers": 3, **config})).eval()
    model.save_pretrained(str(folder))
    return folder


def distilbert_masked_lm(folder: Path, seed: int = 0, *, model_max_length: int = 64, **config: Any) -> Path:
    """A random ``DistilBertForMaskedLM`` over the same vocabulary (a non-BERT head path) saved in ``folder``."""
    import torch
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    folder = Path(folder)
    tokenizer(folder, model_max_length, distilbert=True)
    settings: dict[str, Any] = dict(
        vocab_size=len(VOCAB),
        dim=32,
        n_layers=2,
        n_heads=2,
        hidden_dim=64,
        max_position_embeddings=64,
        initializer_range=0.2,
        dropout=0.0,
        attention_dropout=0.0,
    )
    settings.update(config)
    torch.manual_seed(seed)
    model = DistilBertForMaskedLM(DistilBertConfig(**settings)).eval()
    model.save_pretrained(str(folder))
    return folder
