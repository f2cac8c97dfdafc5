"""Exact, offline token counts for OpenAI's ``o200k_base`` and ``cl100k_base`` encodings.

Counting runs on the linear-time Rust BPE of the ``bpe-openai`` package (the ``tokenizers``
extra: ``pip install 'hydrangea-context[tokenizers]'``), which gives tiktoken's token ids and
whose cost grows linearly with the text, pathological input included: one pre-token of millions
of letters, long runs of CJK or emoji, walls of whitespace (measured up to 6.4 million
characters; tiktoken itself grows faster than linearly there and panics in its regex engine on
1.6 million spaces). Nothing is downloaded: the engine's vocabulary is
embedded in its binary, and the package also ships OpenAI's vocabulary files.

Before the first count with an encoding, the vocabulary is checked twice:

1. the shipped ``<encoding>.tiktoken`` file must have the SHA-256 OpenAI publishes;
2. the engine must hold exactly that table: every token id of the file is decoded by the engine
   (padded with single-byte tokens where the token alone is not valid UTF-8) and must give the
   token's bytes. A token that can never be produced from text (a lone byte that UTF-8 never
   uses) cannot be decoded and is skipped; it can never affect a count either.

Either failure raises :class:`VocabularyIntegrityError`. The engine applies OpenAI's split
patterns itself; the tests compare its ids with tiktoken's (built from the same verified file
and the patterns in ``tiktoken_ext.openai_public``) on a generated corpus.

Nothing is imported at module import time: the package is looked up on first construction of
an :class:`OpenAITokenCounter`, and a missing extra raises :class:`MissingExtraError` naming it.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import importlib
import threading
import warnings
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
_DISTRIBUTION = "bpe-openai"
_ENGINE = "bpe_openai._bindings"
_VOCABULARY_PACKAGE = "bpe_openai"  # ships data/<encoding>.tiktoken.gz


def _import(package: str) -> Any:
    try:
        with warnings.catch_warnings():  # bpe-openai's own data loader uses a deprecated call
            warnings.filterwarnings("ignore", "open_binary is deprecated", DeprecationWarning)
            return importlib.import_module(package)
    except ImportError as exc:
        raise MissingExtraError(
            f"exact OpenAI token counts need the optional extra {_EXTRA!r}: "
            f"pip install 'hydrangea-context[{_EXTRA}]' (it installs {_DISTRIBUTION}; "
            f"{package} cannot be imported)"
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


# Bytes that complete a token which is not valid UTF-8 on its own: a lead byte before leading
# continuation bytes (by their number), continuation bytes after a trailing lead byte.
_LEADS = {0: b"", 1: b"\xc2", 2: b"\xe1", 3: b"\xf1"}
_TAILS = (b"", b"\x80", b"\x80\x80", b"\x80\x80\x80", b"\x90", b"\x90\x80", b"\x90\x80\x80",
          b"\xa0", b"\xa0\x80")


def _padding(token: bytes) -> tuple[bytes, bytes] | None:
    """Bytes before and after ``token`` that make valid UTF-8, or ``None`` if none can."""
    leading = 0
    while leading < len(token) and 0x80 <= token[leading] <= 0xBF:
        leading += 1
    lead = _LEADS.get(leading)
    if lead is None:
        return None
    for tail in _TAILS:
        try:
            (lead + token + tail).decode("utf-8")
        except UnicodeDecodeError:
            continue
        return lead, tail
    return None


def _check_engine_table(encoding: str, engine: Any, ranks: dict[bytes, int]) -> None:
    """Raise unless ``engine`` decodes every token id of ``ranks`` to that token's bytes."""
    single = {token[0]: rank for token, rank in ranks.items() if len(token) == 1}
    decode = engine.decode
    for token, rank in ranks.items():
        try:
            token.decode("utf-8")
            lead = tail = b""
        except UnicodeDecodeError:  # not valid UTF-8 alone: pad it with single-byte tokens
            padding = _padding(token)
            if padding is None:
                continue  # no text can ever produce this token
            lead, tail = padding
        ids = [single[b] for b in lead] + [rank] + [single[b] for b in tail]
        try:
            ok = decode(ids).encode("utf-8") == lead + token + tail
        except ValueError:  # the engine's token does not complete to valid UTF-8
            ok = False
        if not ok:
            raise VocabularyIntegrityError(
                f"the {encoding} vocabulary built into {_DISTRIBUTION} differs from the verified "
                f"file at token id {rank}; refusing to count with an unverified vocabulary"
            )


_lock = threading.Lock()
_verified: dict[str, Any] = {}


def _verified_encoder(encoding: str) -> Any:
    """The engine's tokenizer for ``encoding``, loaded once per process and handed out only
    once its table matched the shipped file and the file matched OpenAI's digest."""
    with _lock:
        encoder = _verified.get(encoding)
        if encoder is None:
            bindings = _import(_ENGINE)
            data = _read_vocabulary(encoding)
            verify_vocabulary(encoding, data, OPENAI_VOCABULARY_SHA256[encoding])
            loaded = bindings.tokenizer_for_encoding(encoding)
            _check_engine_table(encoding, loaded, _parse_ranks(encoding, data))
            encoder = _verified[encoding] = loaded
        return encoder


def _replace_surrogates(text: str) -> str:
    """What tiktoken counts for text holding surrogates (UTF-8 cannot encode them): a pair
    becomes its character, a lone one U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class OpenAITokenCounter:
    """Counts tokens exactly as OpenAI's ``o200k_base`` (GPT-4o and later) or ``cl100k_base``
    (GPT-4, GPT-3.5) encodings do, entirely offline.

    Text is encoded as ordinary text: a special-token spelling such as ``<|endoftext|>`` inside
    outside content counts as the characters it is made of, which is how the API treats message
    text. The vocabulary is verified against OpenAI's published SHA-256 the first time an encoding
    is used in a process, and so is the engine's table against it; a mismatch raises
    :class:`VocabularyIntegrityError`. The cost of a count grows linearly with the text, long
    runs of one character class included. Surrogates are counted as tiktoken counts them.
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
        try:
            return tuple(self._encoder.encode(text))
        except UnicodeEncodeError:
            return tuple(self._encoder.encode(_replace_surrogates(text)))

    def count(self, text: str) -> int:
        """The exact number of tokens in ``text``."""
        try:
            return int(self._encoder.count(text))
        except UnicodeEncodeError:
            return int(self._encoder.count(_replace_surrogates(text)))

    def __repr__(self) -> str:
        return f"OpenAITokenCounter({self._encoding!r})"
