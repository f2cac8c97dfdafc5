"""The one policy for text that cannot be encoded: it is refused where it enters.

A Python ``str`` can hold a lone surrogate (``"\\ud800"``: half of a UTF-16 pair, as a cut emoji
or ``json.loads('"\\\\ud800"')`` produces). No UTF-8 file, database or provider can store it, so a
library that accepted it would fail later, at the next save or request, far from the cause.
Every boundary of the library (``Context.push_back`` and ``emplace_message``, messages and their
parts, components, context items, the stores) calls :func:`check_encodable` on the text it takes
and raises :class:`~hydrangea.errors.UnencodableTextError` naming where the text was, before
anything is changed. Text that passes is kept exactly as given.

>>> check_encodable("caf\\u00e9 \\U0001f600", "content")
'café 😀'
>>> first_unencodable("ab\\udc80")
2
"""

from __future__ import annotations

import re

from hydrangea.errors import UnencodableTextError

__all__ = ["check_encodable", "first_unencodable", "is_encodable"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def first_unencodable(text: str) -> int | None:
    """The index of the first lone surrogate in ``text``, or ``None`` if it encodes as UTF-8.

    A ``str`` never holds a valid surrogate *pair* (Python decodes pairs into one code point),
    so every surrogate code point in a ``str`` is a lone one.
    """
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


def is_encodable(text: str) -> bool:
    """True if ``text`` encodes as UTF-8 (it holds no lone surrogate)."""
    return first_unencodable(text) is None


def check_encodable(text: str, where: str) -> str:
    """Return ``text`` unchanged, or raise :class:`~hydrangea.errors.UnencodableTextError`.

    ``where`` names the text in the message (``"content"``, ``"item 3: content[0].text"``), so
    the caller can find it; the text itself is not repeated, only the offending code point.
    """
    index = first_unencodable(text)
    if index is not None:
        raise UnencodableTextError(
            f"{where} holds a lone surrogate U+{ord(text[index]):04X} at index {index}; "
            "text must be encodable as UTF-8 (decode outside input with errors='replace', "
            "or repair the surrogate pair)"
        )
    return text
