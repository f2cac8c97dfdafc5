"""Saved documents: atomic, durable writes, checked reads, and what kind of file a document is.

:func:`write_text_atomic` encodes the whole text first (so text that cannot be encoded fails
before any file is touched), writes it to a temporary file in the target's folder, flushes and
fsyncs it, renames it over the target and fsyncs the folder. At every moment the target is
either the previous file or the complete new one; a failed save removes its temporary file and
leaves the previous file as it was.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from hydrangea.errors import SerializationError, UnencodableTextError

__all__ = ["check_format", "read_text_checked", "write_text_atomic"]

_log = logging.getLogger(__name__)

_KINDS = {
    "hydrangea.context": "a saved Context (read it with Context.load or Context.from_json)",
    "hydrangea.lifecycle": (
        "a saved lifecycle session (read it with Lifecycle.load or Lifecycle.from_json)"
    ),
}


def write_text_atomic(path: str | Path, text: str, what: str) -> None:
    """Replace ``path`` by ``text`` (UTF-8) atomically; ``what`` names the document in errors."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # refused at every boundary, so only a bug reaches this
        raise UnencodableTextError(
            f"{what} holds text that cannot be encoded as UTF-8 ({exc.reason} at {exc.start}); "
            "nothing was written"
        ) from exc
    target = Path(path)
    folder = target.parent
    try:
        mode = target.stat().st_mode & 0o7777
    except OSError:
        mode = 0o644
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        os.chmod(temporary, mode)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_folder(folder)


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (POSIX); folders cannot be opened this way on Windows."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError as exc:
        _log.debug("cannot open %s to fsync it: %s", folder, exc)
        return
    try:
        os.fsync(descriptor)
    except OSError as exc:  # some file systems refuse fsync on a folder; the rename happened
        _log.debug("fsync of folder %s failed: %s", folder, exc)
    finally:
        os.close(descriptor)


def read_text_checked(path: str | Path, what: str) -> str:
    """The UTF-8 text of ``path``; :class:`SerializationError` if it is not UTF-8."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SerializationError(f"{path} is not a saved {what}: it is not UTF-8 ({exc})") from exc


def check_format(document: object, expected: str, version: int, what: str) -> dict[str, Any]:
    """``document`` as a dict if its ``format`` is ``expected`` and its ``version`` is
    ``version``; otherwise :class:`SerializationError` saying what the document is instead."""
    if not isinstance(document, dict):
        raise SerializationError(
            f"not {what}: the document is a JSON {type(document).__name__}, not an object"
        )
    found = document.get("format")
    if found != expected:
        if "format" not in document:
            raise SerializationError(f"not {what}: the 'format' field is missing")
        known = _KINDS.get(found) if isinstance(found, str) else None
        if known is not None:
            raise SerializationError(f"not {what}: this file is {known}")
        raise SerializationError(f"not {what}: its format is {found!r}, not {expected!r}")
    if document.get("version") != version or type(document.get("version")) is not int:
        raise SerializationError(
            f"{what} of unsupported version {document.get('version')!r} (this library reads "
            f"version {version})"
        )
    return document
