"""The Anthropic Messages gateway (``client.messages.create``).

A stored item is one Anthropic message dict, ``{"role": "user" | "assistant", "content": ...}``,
where ``content`` is a string or a list of content blocks exactly as the API takes them. The API
has no system role inside ``messages`` that we rely on, so a system message is stored as the
pseudo-item ``{"role": "system", "content": "<text>"}`` (:class:`AnthropicSystemItem`);
:meth:`AnthropicAdapter.build_request` places it (see :mod:`._anthropic_request`).

Reasoning state (``thinking`` blocks with their ``signature``, ``redacted_thinking`` blocks with
their ``data``) is stored as the API returned it and sent back unchanged, in its original order,
inside the assistant turn that produced it.

Markers are plain text, not a trust boundary: the ``"[system] "``, ``"[tool result <id>] "`` and
``"[conversation start]"`` texts this adapter writes look exactly like user text that happens to
start the same way, and such text is sent unchanged (rewriting it would change the caller's bytes
and the cached prefix). That is sound because messages put into a Context are trusted,
caller-authored text; untrusted outside text belongs in a :mod:`hydrangea.asof` fence, which it
cannot forge or close. See "Text markers" in docs/en/providers.md.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict, assert_never

from hydrangea.errors import InvalidItemError, RequestOptionError, UnsupportedContentError
from hydrangea.gateway import GatewayType
from hydrangea.message import (
    ImagePart,
    Message,
    Part,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from hydrangea.providers._intake import output_body
from hydrangea.providers._output import dict_entries
from hydrangea.providers.adapter import Adapter, CachePolicy, CallIds
from hydrangea.providers.anthropic._checks import check_output, validate_strict
from hydrangea.providers.anthropic._request import (
    LEADING_USER_PLACEHOLDER,
    SYSTEM_NOTICE_PREFIX,
    build_anthropic_request,
)
from hydrangea.providers.anthropic.blocks import PrefixBlocks
from hydrangea.providers.anthropic.caching import (
    AnthropicCaching,
    cached_anthropic_kwargs,
    keep_memo,
)
from hydrangea.providers.anthropic.management import ThresholdCompaction
from hydrangea.providers.features import RequestFeature
from hydrangea.providers.native import NativeContent, copy_json
from hydrangea.providers.pairing import CallSite, ResultSite

__all__ = [
    "LEADING_USER_PLACEHOLDER",
    "SYSTEM_NOTICE_PREFIX",
    "AnthropicAdapter",
    "AnthropicMessageItem",
    "AnthropicSystemItem",
]

_IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

class AnthropicSystemItem(TypedDict):
    """A system message; the leading run becomes the top-level ``system`` of the request."""

    role: Literal["system"]
    content: str | list[dict[str, Any]]


class AnthropicMessageItem(TypedDict):
    """One Anthropic input message (``anthropic.types.MessageParam``)."""

    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]


_THINKING = ("thinking", "redacted_thinking")


class AnthropicAdapter(Adapter):
    """Adapter for the Anthropic Messages API. Stateless.

    ``system_messages=True`` (``Context(..., system_messages=True)``) is for models that take
    mid-conversation ``role: "system"`` messages: a system item after the leading run is then
    sent as one where the API's placement rule allows it, instead of as ``"[system]"`` user
    text (see :mod:`hydrangea.providers.anthropic._request`).
    """

    gateway = GatewayType.anthropic
    history_key = "messages"
    places_breakpoints = True
    gen_ai_system = "anthropic"

    def __init__(self, *, system_messages: bool = False) -> None:
        self.system_messages = system_messages

    # -- the request cache's and the Context's hooks -----------------------------------------

    def with_system_messages(self) -> AnthropicAdapter:
        """An adapter sending later system items as mid-conversation system messages."""
        return AnthropicAdapter(system_messages=True)

    def seam_anchor(self, before: Sequence[Any]) -> NativeContent:
        """A user ``"."``; with system messages after an assistant turn, an assistant one
        (whether a system message fits depends on the message before it)."""
        if self.system_messages and before and before[-1].get("role") == "assistant":
            return {"role": "assistant", "content": "."}
        return {"role": "user", "content": "."}

    def prefix_tracker(self, messages: Sequence[object]) -> PrefixBlocks:
        """The cached messages' content blocks, for the breakpoint placement."""
        return PrefixBlocks(messages)

    def keep_memo(self, memo: dict[str, Any], messages: int, size: int) -> None:
        """What the placement memoized of the blocks kept
        (:func:`~hydrangea.providers.anthropic.caching.keep_memo`)."""
        keep_memo(memo, messages, size)

    def breakpoint_request(
        self,
        items: Sequence[NativeContent],
        *,
        caching: CachePolicy | None = None,
        **plan: Any,
    ) -> dict[str, Any]:
        """The request with breakpoints placed
        (:func:`~hydrangea.providers.anthropic.caching.cached_anthropic_kwargs`)."""
        if caching is not None and not isinstance(caching, AnthropicCaching):
            raise RequestOptionError(
                f"caching= on Anthropic takes an AnthropicCaching, got {type(caching).__name__}"
            )
        return cached_anthropic_kwargs(self, items, caching=caching, **plan)

    def merge_option(self, built: Mapping[str, Any], key: str, value: object) -> object:
        """A ``system`` option goes before the Context's own system blocks."""
        if key == "system" and "system" in built:
            return [*_option_blocks(value), *built["system"]]
        return value

    def ends_open(self, segment: Sequence[NativeContent]) -> bool:
        """With system messages, a system item is sent as one or as a notice by the messages
        around it, which are settled only once an assistant turn follows it."""
        if not self.system_messages:
            return False
        for item in reversed(segment):
            role = item.get("role")
            if role == "assistant":
                return False
            if role == "system":
                return True
        return False

    # -- Message -> items --------------------------------------------------------------------

    def from_message(self, message: Message) -> list[NativeContent]:
        """One item per message: system pseudo-item, or a user/assistant message of blocks."""
        match message.role:
            case Role.system:
                return [{"role": "system", "content": message.text}]
            case Role.user if isinstance(message.content, str):  # plain text: no parts to make
                return [{"role": "user", "content": [{"type": "text", "text": message.content}]}]
            case Role.user | Role.assistant:
                blocks = [_block_from_part(part) for part in message.parts]
                return [{"role": message.role.value, "content": blocks}]
            case _:
                assert_never(message.role)

    # -- model output -> items ---------------------------------------------------------------

    def from_output(self, output: object) -> list[NativeContent]:
        """Read an ``anthropic`` Message (beta and parsed ones too), its JSON, a message dict or
        a list of them.

        A response body (``{"type": "message", "role": "assistant", "content": ...}``) is
        reduced to its role and content; every block is kept as the API sent it, known type or
        not. An SDK object gives the same JSON as its raw body (see :mod:`._intake`).
        """
        return _read_body(output_body(output, self.gateway))

    def from_pushed(self, output: list[Any] | dict[str, Any]) -> list[NativeContent]:
        """:meth:`from_output` of checked JSON (:meth:`canonical` is the identity here)."""
        return _read_body(output_body(output, self.gateway, checked=True))

    def compaction_start(self, item: NativeContent) -> NativeContent | None:
        """An assistant message holding a ``compaction`` block: the API ignores every block
        before the last one, so later requests start with this message, its content from that
        block on (the message itself when the block comes first, as it does in replies).

        A block with neither ``content`` nor ``encrypted_content`` (a failed summary) is no
        boundary: "the server treats them as no-ops" (the SDK's ``BetaCompactionBlock``), so the
        history before it is still read and still sent."""
        content = item.get("content")
        if item.get("role") != "assistant" or not isinstance(content, list):
            return None
        last = None
        for position, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "compaction" and (
                block.get("content") is not None or block.get("encrypted_content") is not None
            ):
                last = position
        if last is None:
            return None
        return item if last == 0 else {**item, "content": content[last:]}

    def native_compaction(self, threshold_tokens: int) -> RequestFeature | None:
        """Threshold compaction (``compact_20260112``) triggered at ``threshold_tokens``."""
        return ThresholdCompaction(trigger_input_tokens=threshold_tokens)

    def swapped_head(self, output: object) -> list[NativeContent] | None:
        """The reply to an on-demand compaction request (``stop_reason: "compaction"``): its
        one message takes the place of the messages that request sent."""
        reason = (
            output.get("stop_reason") if isinstance(output, dict)
            else getattr(output, "stop_reason", None)
        )
        if reason != "compaction":
            return None
        return self.from_output(output)

    # -- validation --------------------------------------------------------------------------

    def validate(self, item: NativeContent) -> None:
        """Check role, content and every block against what the Messages API accepts."""
        validate_strict(item)

    def check_output(self, item: NativeContent) -> None:
        """Check only what the library relies on; unknown block types are kept."""
        check_output(item)

    # -- tool exchanges ----------------------------------------------------------------------

    def tool_sites(self, item: NativeContent) -> tuple[list[CallSite], list[ResultSite]]:
        """``tool_use`` blocks of an assistant turn, ``tool_result`` blocks of a user turn.

        Server-side pairs (``server_tool_use`` / ``mcp_tool_use`` and their results) live in
        the assistant turn that ran them and are not described: nothing can split them.
        """
        content = item.get("content")
        if not isinstance(content, list):
            return [], []
        role = item.get("role")
        calls: list[CallSite] = []
        results: list[ResultSite] = []
        for slot, block in enumerate(content):
            kind = block.get("type")
            if role == "assistant" and kind == "tool_use":
                calls.append(CallSite(slot, block["id"], block["name"]))
            elif role == "user" and kind == "tool_result":
                results.append(ResultSite(slot, block["tool_use_id"]))
        return calls, results

    def opens_exchange(self, item: NativeContent) -> bool:
        """True for an assistant turn with a ``tool_use`` block, or a server-side call whose
        result is not in the same turn (a paused turn): the next item must follow it."""
        if item.get("role") != "assistant" or not isinstance(item.get("content"), list):
            return False
        open_server: set[str] = set()
        for block in item["content"]:
            kind = block.get("type")
            if kind == "tool_use":
                return True
            if isinstance(kind, str) and kind.endswith("_tool_use") and "id" in block:
                open_server.add(block["id"])
            elif isinstance(kind, str) and kind.endswith("_tool_result"):
                open_server.discard(block.get("tool_use_id"))
        return bool(open_server)

    def closes_exchange(self, item: NativeContent) -> bool:
        """True for a user turn holding a ``tool_result`` block."""
        return item.get("role") == "user" and _has_block(item, frozenset({"tool_result"}))

    # -- reading back ------------------------------------------------------------------------

    def to_messages(self, item: NativeContent, ids: CallIds | None = None) -> list[Message]:
        """Text, images, ``tool_use`` and ``tool_result`` blocks as a Message; the rest (thinking,
        server tools, documents, unknown blocks) has no generic form and is left out."""
        role = str(item.get("role"))
        content = item.get("content")
        if role == "system":
            return [Message(role=Role.system, content=_joined_text(content))]
        if isinstance(content, str):
            return [Message(role=Role(role), content=content)] if content else []
        parts: list[Part] = []
        for block in content if isinstance(content, list) else []:
            part = _part_of(block, role)
            if part is not None:
                parts.append(part)
        return [Message(role=Role(role), content=tuple(parts))] if parts else []

    def binds_prefix(self, item: NativeContent) -> bool:
        """True for a message holding a ``thinking`` or ``redacted_thinking`` block."""
        content = item.get("content")
        return type(content) is list and any(
            type(block) is dict and block.get("type") in _THINKING for block in content
        )

    def for_other_model(self, item: NativeContent) -> NativeContent | None:
        """Leave out ``thinking`` and ``redacted_thinking`` blocks: their signatures belong to
        the model that wrote them. An item left with no block is left out."""
        content = item.get("content")
        if item.get("role") != "assistant" or not isinstance(content, list):
            return item
        kept = [b for b in content if b.get("type") not in ("thinking", "redacted_thinking")]
        if len(kept) == len(content):
            return item
        return {**item, "content": kept} if kept else None

    # -- requests ----------------------------------------------------------------------------

    def build_request(self, items: Sequence[NativeContent]) -> dict[str, Any]:
        """``{"messages": [...], "system"?: [text blocks]}`` for ``client.messages.create``."""
        return build_anthropic_request(
            items, self.pairing, system_messages=self.system_messages
        )

    def item_text(self, item: NativeContent) -> str:
        """Text, tool inputs (as JSON) and tool results of an item; no signatures or images."""
        content = item.get("content")
        if isinstance(content, str):
            return content
        chunks: list[str] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind in {"text", "thinking"}:
                chunks.append(str(block.get(kind, "")))
            elif kind == "tool_use":
                chunks.append(json.dumps(block.get("input", {}), sort_keys=True))
            elif kind == "tool_result":
                chunks.append(_result_text(block.get("content", "")))
        return "\n".join(chunks)


def _block_from_part(part: TextPart | ImagePart | ToolCallPart | ToolResultPart) -> dict[str, Any]:
    match part:
        case TextPart():
            return {"type": "text", "text": part.text}
        case ImagePart():
            if part.url is not None:
                return {"type": "image", "source": {"type": "url", "url": part.url}}
            assert part.data is not None
            if part.media_type not in _IMAGE_MEDIA_TYPES:
                raise UnsupportedContentError(
                    f"Anthropic takes images as {sorted(_IMAGE_MEDIA_TYPES)}, "
                    f"not {part.media_type!r}"
                )
            encoded = base64.b64encode(part.data).decode("ascii")
            source = {"type": "base64", "media_type": part.media_type, "data": encoded}
            return {"type": "image", "source": source}
        case ToolCallPart():
            arguments = copy_json(part.arguments)
            return {"type": "tool_use", "id": part.id, "name": part.name, "input": arguments}
        case ToolResultPart():
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": part.call_id,
                "content": part.content,
            }
            if part.is_error:
                block["is_error"] = True
            return block
        case _:
            assert_never(part)


def _has_block(item: NativeContent, kinds: frozenset[str]) -> bool:
    content = item.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") in kinds for block in content
    )


def _read_body(body: object) -> list[NativeContent]:
    if isinstance(body, list):
        entries = dict_entries(body, "expected an Anthropic message dict")
        return [_strip_response_dict(entry) for entry in entries]
    if not isinstance(body, dict):
        raise InvalidItemError(f"cannot read {type(body).__name__} as Anthropic output")
    return [_strip_response_dict(body)]


def _strip_response_dict(output: dict[str, Any]) -> NativeContent:
    """A response body (``"type": "message"``) keeps only its role and content."""
    if output.get("type") == "message" and "content" in output:
        role = output.get("role")
        if role != "assistant":
            raise InvalidItemError(
                f"an Anthropic response must have role 'assistant', got {role!r}"
            )
        return {"role": role, "content": output["content"]}
    return output


def _joined_text(content: object) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


def _part_of(block: dict[str, Any], role: object) -> Part | None:
    kind = block.get("type")
    if kind == "text" and block.get("text"):
        return TextPart(text=block["text"])
    if kind == "image" and isinstance(block.get("source"), dict):
        source = block["source"]
        if source.get("type") == "url" and isinstance(source.get("url"), str):
            return ImagePart(url=source["url"])
        if source.get("type") == "base64" and isinstance(source.get("data"), str):
            data = base64.b64decode(source["data"])
            return ImagePart(data=data, media_type=source.get("media_type"))
        return None
    if kind == "tool_use" and role == "assistant":
        arguments = block.get("input")
        return ToolCallPart(
            id=block["id"],
            name=block["name"],
            arguments=arguments if isinstance(arguments, dict) else {},
        )
    if kind == "tool_result" and role == "user":
        return ToolResultPart(
            call_id=block["tool_use_id"],
            content=_result_text(block.get("content", "")),
            is_error=bool(block.get("is_error", False)),
        )
    return None


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def _option_blocks(system: object) -> list[Any]:
    if isinstance(system, str):
        return [{"type": "text", "text": system}]
    if isinstance(system, list | tuple):
        return list(system)
    raise RequestOptionError(
        f"system must be a string or a list of text blocks, got {type(system).__name__}"
    )
