"""One policy for text that cannot be stored: refused where it enters, with a clear error.

Python strings may hold lone surrogates (``"\\ud800"``), which no UTF-8 encoder, JSON file or
database accepts. Every public constructor that takes text calls :func:`check_encodable`, so such
text is refused at the boundary instead of failing later, half-way through a save.
"""

from __future__ import annotations

from hydrangea.errors import UnencodableTextError

__all__ = ["check_encodable"]


def check_encodable(text: str, where: str) -> str:
    """``text`` unchanged if it encodes as UTF-8; otherwise :class:`UnencodableTextError`
    naming ``where`` (the field or argument) and the position of the first offending character.

    >>> check_encodable("ok", "content")
    'ok'
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = text[exc.start]
        raise UnencodableTextError(
            f"{where} holds a lone surrogate U+{ord(char):04X} at index {exc.start}; text must "
            "encode as UTF-8 (decode input with errors='replace' or remove it)"
        ) from None
    return text
