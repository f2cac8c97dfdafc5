"""The blocks of an Anthropic request, in the order the API counts them for caching.

Tools, then system blocks, then every message's content blocks (a string content is one block,
which cannot be marked). :class:`CachedBlocks` keeps the blocks of a request cache's cached
messages so a request's blocks (:class:`BlockView`) cost only its new messages, and
:class:`PrefixBlocks` is what a request cache holds beside its cached prefix for the breakpoint
placement of :mod:`hydrangea.providers.anthropic.caching`.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any, Literal, NamedTuple, overload

from hydrangea.providers.adapter import PrefixTracker

__all__ = [
    "BlockView",
    "CachedBlocks",
    "PrefixBlocks",
    "head_blocks",
    "message_blocks",
    "request_blocks",
]


class _Block(NamedTuple):  # a tuple: made for every block of every new message, so cheaply
    section: Literal["tools", "system", "messages"]
    outer: int  # index of the tool, system block or message
    inner: int  # index of the block inside the message (-1 otherwise)
    value: object


class BlockView(Sequence[_Block]):
    """``head + cached[:count]`` and the blocks of ``messages[first:]`` as one sequence of
    blocks, without copying ``cached`` (the blocks of the later messages are made only if read).

    For a caller that keeps the blocks of an unchanged prefix
    (:class:`PrefixBlocks`): ``cached`` is its own list, read only while the
    view is in use. The first :attr:`fixed` blocks (head and cached) hold the same values for as
    long as the caller keeps the placement ``memo`` it passes with them.
    """

    __slots__ = ("_cached", "_count", "_first", "_head", "_later", "_messages", "_rest", "_start")

    def __init__(
        self,
        head: list[_Block],
        cached: Sequence[_Block],
        count: int,
        messages: Sequence[object] = (),
        first: int = 0,
        *,
        later: int | None = None,
    ) -> None:
        self._head = head
        self._cached = cached
        self._count = count
        self._messages = messages
        self._first = first
        self._rest: list[_Block] | None = None
        self._start = len(head) + count
        if later is None:  # (a caller that walked the messages already passes the count)
            later = 0
            for m in range(first, len(messages)):
                message = messages[m]
                content = message.get("content") if isinstance(message, dict) else None
                later += len(content) if isinstance(content, list) else 1
        self._later = later

    @property
    def fixed(self) -> int:
        """How many leading blocks come from the head and the cached prefix (0 without one)."""
        return self._start if self._count else 0

    @property
    def rest(self) -> list[_Block]:
        """The blocks after the cached prefix (made on first use)."""
        if self._rest is None:
            self._rest = [
                block
                for m in range(self._first, len(self._messages))
                for block in message_blocks(m, self._messages[m])
            ]
        return self._rest

    def section_end(self, messages: int) -> int:
        """The number of blocks before message ``messages`` (see :func:`request_blocks`)."""
        count = self._count
        cached = self._cached
        if count and messages <= cached[count - 1].outer:
            if isinstance(cached, CachedBlocks):
                return len(self._head) + cached.before(messages)
            return len(self._head) + bisect_left(cached, messages, 0, count, key=_OUTER)
        if messages <= self._first:
            return self._start
        return self._start + bisect_left(self.rest, messages, key=_OUTER)

    def __len__(self) -> int:
        return self._start + self._later

    @overload
    def __getitem__(self, index: int) -> _Block: ...
    @overload
    def __getitem__(self, index: slice) -> list[_Block]: ...
    def __getitem__(self, index: int | slice) -> _Block | list[_Block]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(len(self)))]
        if index >= self._start:
            return self.rest[index - self._start]
        if index < 0:
            return self[index + len(self)] if index >= -len(self) else self.rest[index]
        head = len(self._head)
        return self._head[index] if index < head else self._cached[index - head]


_OUTER = attrgetter("outer")


class CachedBlocks(Sequence[_Block]):
    """The blocks of a list of messages (what :func:`message_blocks` lists for each), made
    when read: the list is kept as one offset per message, not one tuple per block."""

    __slots__ = ("_messages", "_starts", "_total")

    def __init__(self, messages: Sequence[object]) -> None:
        self._messages = messages
        self._starts = array("q")
        self._total = 0

    def reset(self, messages: Sequence[object]) -> None:
        """Empty, reading ``messages`` from now on."""
        self._messages = messages
        del self._starts[:]
        self._total = 0

    def add(self, message: object) -> None:
        """Take in the blocks of the next message (``messages[len(self.starts)]``)."""
        self._starts.append(self._total)
        content = message.get("content") if isinstance(message, dict) else None
        self._total += len(content) if isinstance(content, list) else 1

    def cut(self, messages: int) -> None:
        """Keep the blocks of the first ``messages`` messages only."""
        if messages < len(self._starts):
            self._total = self._starts[messages]
            del self._starts[messages:]

    def before(self, messages: int) -> int:
        """How many blocks the first ``messages`` messages hold."""
        return self._starts[messages] if messages < len(self._starts) else self._total

    def __len__(self) -> int:
        return self._total

    @overload
    def __getitem__(self, index: int) -> _Block: ...
    @overload
    def __getitem__(self, index: slice) -> list[_Block]: ...
    def __getitem__(self, index: int | slice) -> _Block | list[_Block]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(self._total))]
        if index < 0:
            index += self._total
        if not 0 <= index < self._total:
            raise IndexError(index)
        m = bisect_right(self._starts, index) - 1
        message = self._messages[m]
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            b = index - self._starts[m]
            return _Block("messages", m, b, content[b])
        return _Block("messages", m, -1, content)


def request_blocks(kwargs: Mapping[str, Any]) -> list[object]:
    """Every block of an Anthropic request in the API's order (tools, system, messages).

    A message whose content is a string counts as one block (which cannot be marked).
    """
    return [block.value for block in _blocks(kwargs)]


def _blocks(kwargs: Mapping[str, Any]) -> list[_Block]:
    out: list[_Block] = []
    for n, tool in enumerate(kwargs.get("tools") or ()):
        out.append(_Block("tools", n, -1, tool))
    system = kwargs.get("system")
    if isinstance(system, list):
        out.extend(_Block("system", n, -1, block) for n, block in enumerate(system))
    elif isinstance(system, str) and system:
        out.append(_Block("system", 0, -1, system))
    for m, message in enumerate(kwargs.get("messages") or ()):
        out.extend(message_blocks(m, message))
    return out


def message_blocks(m: int, message: object) -> list[_Block]:
    """The blocks of message ``m`` (what :func:`request_blocks` lists for it), for a caller
    that keeps the blocks of an unchanged prefix (:class:`PrefixBlocks`)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return [_Block("messages", m, b, block) for b, block in enumerate(content)]
    return [_Block("messages", m, -1, content)]


def head_blocks(kwargs: Mapping[str, Any]) -> list[_Block]:
    """The tools and system blocks of a request (what precedes its messages' blocks)."""
    return _blocks({key: value for key, value in kwargs.items() if key != "messages"})




def _marked(value: object) -> bool:
    return isinstance(value, dict) and "cache_control" in value


class PrefixBlocks(PrefixTracker):
    """The blocks of a request cache's cached messages and which carry a caller's marker."""

    __slots__ = ("_blocks", "_kept")

    def __init__(self, messages: Sequence[object]) -> None:
        self._blocks = CachedBlocks(messages)
        self._kept: list[int] = []

    @property
    def size(self) -> int:
        return len(self._blocks)

    def reset(self, messages: Sequence[object]) -> None:
        self._blocks.reset(messages)

    def cut(self, messages: int, size: int) -> None:
        self._blocks.cut(messages)
        self._kept = [n for n in self._kept if n < size]

    def add(self, index: int, message: object) -> None:
        for block in message_blocks(index, message):
            if _marked(block.value):
                self._kept.append(len(self._blocks) + max(block.inner, 0))
        self._blocks.add(message)

    def view(
        self, built: dict[str, Any], messages_from: int, size: int
    ) -> tuple[BlockView, tuple[int, ...]]:
        """The blocks of ``built`` (a request whose first ``messages_from`` messages are the
        cached ones, ``size`` blocks) and the positions of every caller's marker in it."""
        head = head_blocks(built)
        messages = built.get("messages") or []
        offset = len(head)
        kept = [n for n, b in enumerate(head) if _marked(b.value)]
        kept.extend(offset + n for n in self._kept if n < size)
        first = offset + size
        position = first
        for m in range(messages_from, len(messages)):
            content = messages[m].get("content") if type(messages[m]) is dict else None
            if type(content) is not list:
                position += 1
                continue
            for b, block in enumerate(content):
                if type(block) is dict and "cache_control" in block:
                    kept.append(position + b)
            position += len(content)
        view = BlockView(
            head, self._blocks, size, messages, messages_from, later=position - first
        )
        return view, tuple(kept)
