"""The JSON text of a saved Context: the standard library's bytes, optionally written by orjson.

:func:`dumps` always returns exactly ``json.dumps(value, ensure_ascii=False,
separators=(",", ":"))``, whichever backend writes it. With the ``fast-json`` extra installed
(``pip install 'hydrangea-context[fast-json]'``) orjson writes it (about 4x faster at 1M items)
where it provably gives the same bytes, and the standard library writes it where orjson cannot;
the choice is made per document, by the value types it holds, and logged (``DEBUG``) whenever
orjson is passed over:

- **integers outside the 64-bit range** and **lone surrogates**: orjson refuses them (it raises),
  so the standard library writes the document;
- **floats below 1e-4 in magnitude**: orjson writes ``0.00001`` and ``1e-7`` where the standard
  library writes ``1e-05`` and ``1e-07``; orjson's output is searched for those two shapes and
  the standard library writes the document if either occurs (in a string too: the search only
  ever errs towards the standard library);
- **non-finite floats** (orjson writes ``null``, the standard library ``NaN``): a Context never
  holds one (every append refuses them), and :func:`dumps` requires finite floats.

Everything else (key order, the escape of every code point, finite floats of any other size,
nesting up to orjson's depth limit) is the same bytes on both; ``tests/test_context_json.py``
checks that with hypothesis over JSON values.

:func:`loads` always uses the standard library: orjson reads these documents no faster (1.06 s
against 1.11 s for 1M items, bench/load.py's text) and silently reads integers beyond 64 bits as
floats. What makes loading fast is not copying (see ``Context._from_parsed``). (Pausing the
cyclic garbage collector while parsing was measured and dropped: 0.70 s with and 0.69 s without
for a 300,000-item Context on CPython 3.11, whose collector already defers full collections.)
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

from hydrangea.errors import MissingExtraError, NonFiniteNumberError

__all__ = ["NonFiniteNumberError", "dumps", "fast_backend_available", "loads"]

_EXTRA = "fast-json"

_log = logging.getLogger(__name__)

# Shapes in which orjson writes a float differently from float.__repr__ (see the module doc):
# a one-digit negative exponent after a digit ("4.2e-7"), and a decimal below 1e-4.
_ONE_DIGIT_NEGATIVE_EXPONENT = re.compile(rb"e-[0-9](?![0-9])")
_SMALL_DECIMAL = b"0.0000"
_DIGITS = frozenset(b"0123456789")


def _orjson() -> Any:
    try:
        import orjson
    except ImportError:
        return None
    return orjson


def fast_backend_available() -> bool:
    """True when orjson (the ``fast-json`` extra) is installed and will be used."""
    return _orjson() is not None


def _standard_dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dumps(value: Any, *, fast: bool | None = None) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, the same string whichever
    backend writes it. ``value`` is a JSON value with finite floats (as a Context holds).

    ``fast=None`` uses orjson when it is installed, ``False`` never does, ``True`` requires it
    (:class:`~hydrangea.errors.MissingExtraError` without it).
    """
    orjson = _orjson() if fast is not False else None
    if fast and orjson is None:
        raise MissingExtraError(
            f"the fast JSON backend needs orjson: pip install 'hydrangea-context[{_EXTRA}]'"
        )
    if orjson is None:
        return _standard_dumps(value)
    try:
        written: bytes = orjson.dumps(value)
    except TypeError as exc:  # orjson.JSONEncodeError: big ints, lone surrogates, deep nesting
        _log.debug("orjson cannot write this document (%s); using the json module", exc)
        return _standard_dumps(value)
    if _float_shapes_differ(written):
        _log.debug("the document may hold a float below 1e-4; using the json module")
        return _standard_dumps(value)
    return written.decode("utf-8")


def _float_shapes_differ(written: bytes) -> bool:
    if written.find(_SMALL_DECIMAL) != -1:
        return True
    for match in _ONE_DIGIT_NEGATIVE_EXPONENT.finditer(written):
        start = match.start()
        if start and written[start - 1] in _DIGITS:
            return True
    return False


def _refuse_constant(name: str) -> Any:
    raise NonFiniteNumberError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise NonFiniteNumberError(f"{text[:40]} does not fit a float")
    return number


def loads(text: str) -> Any:
    """Parse JSON as ``json.loads`` does, refusing non-finite numbers.

    Raises ``json.JSONDecodeError`` for text that is not JSON and :class:`NonFiniteNumberError`
    for ``NaN``, ``Infinity`` and numbers that overflow a float (``1e400``).
    """
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
