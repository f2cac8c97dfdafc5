"""The OpenAI Responses adapter (:attr:`GatewayType.openai_responses`).

A stored item is one Responses input item exactly as ``client.responses.create(input=[...])``
takes it: a message, a ``function_call``, a ``function_call_output``, a ``reasoning`` item, or
another item the model produced. Conversion from a :class:`~hydrangea.message.Message`:

* system -> ``{"type": "message", "role": "system", "content": text}``, kept in place: the
  Responses input accepts system messages anywhere, so nothing is moved and the cached prefix
  stays put (``instructions`` is left to the caller);
* user -> each tool result becomes a ``function_call_output`` item, first, then one user
  message with the text (``input_text``) and images (``input_image``, ``detail`` "auto") in
  their order; a lone text is sent as a plain string;
* assistant -> a message with the text (plain string) if there is any, then one
  ``function_call`` item per tool call (arguments as a JSON string).

Model output (``Response.output``) is stored item by item; ``reasoning`` items keep their
``id``, ``summary`` and ``encrypted_content`` byte for byte.

Pairing rule of the request builder: a ``function_call`` (or ``custom_tool_call``) is answered
by the first output with its ``call_id`` anywhere after it. An unanswered call gets an output
reading :data:`~hydrangea.context.adapter.ORPHAN_CALL_NOTICE` right after the model turn that
made it (the run of model-side items holding the call); an output that answers nothing becomes a
user message ``"[tool result <call_id>] <output>"`` in its place.

The API also rejects a ``reasoning`` item that is not directly followed by the item it led to
(a message or call of the same turn); such an item (left at the end by the collector, or from a
turn cut short) is left out of the request. It stays in the Context unchanged.

Markers are plain text, not a trust boundary: the ``"[tool result <id>] "`` and
``"[tool error] "`` prefixes this adapter writes look exactly like user or tool text that happens
to start the same way, and such text is sent unchanged (rewriting it would change the caller's
bytes and the cached prefix). That is sound because messages put into a Context are trusted,
caller-authored text; untrusted outside text belongs in a :mod:`hydrangea.asof` fence, which it
cannot forge or close. See "Text markers" in docs/en/providers.md.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from typing import Any, Literal, NotRequired, TypedDict, assert_never

from hydrangea.context._openai_common import (
    arguments_json,
    image_url,
    orphan_result_text,
    output_entries,
    reject_foreign_sdk_object,
    sdk_dump,
    sdk_origin,
    split_assistant_parts,
    split_user_parts,
    tool_result_text,
)
from hydrangea.context._openai_responses_checks import (
    CALL_OUTPUT_TYPES,
    is_model_side,
    validate_responses_item,
)
from hydrangea.context.adapter import ORPHAN_CALL_NOTICE, Adapter
from hydrangea.context.native import NativeContent
from hydrangea.context.sdk import native_output
from hydrangea.errors import GatewayMismatchError, InvalidItemError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart

__all__ = ["OpenAIResponsesAdapter", "ResponsesMessage", "ResponsesReasoning"]

_log = logging.getLogger(__name__)

_OUTPUT_TYPES = frozenset(CALL_OUTPUT_TYPES.values())


class ResponsesMessage(TypedDict):
    """A message item. Model-written assistant messages also carry ``id`` and ``status`` and
    their content is a list of ``output_text`` parts; other content is a string or a list of
    ``input_text`` / ``input_image`` / ``input_file`` parts."""

    type: Literal["message"]
    role: Literal["user", "assistant", "system", "developer"]
    content: str | list[dict[str, Any]]
    id: NotRequired[str]
    status: NotRequired[str]


class ResponsesReasoning(TypedDict):
    """A reasoning item as the model returned it; sent back unchanged."""

    type: Literal["reasoning"]
    id: str
    summary: list[dict[str, str]]
    encrypted_content: NotRequired[str]


class OpenAIResponsesAdapter(Adapter):
    """OpenAI Responses: items are Responses input items; see the module docstring."""

    gateway = GatewayType.openai_responses

    # -- Message -> items ----------------------------------------------------------------------

    def from_message(self, message: Message) -> list[NativeContent]:
        """Convert ``message`` into input items (several for tool calls and results)."""
        match message.role:
            case Role.system:
                return [{"type": "message", "role": "system", "content": message.text}]
            case Role.user:
                return self._user_items(message)
            case Role.assistant:
                return self._assistant_items(message)
            case _:
                assert_never(message.role)

    def _user_items(self, message: Message) -> list[NativeContent]:
        results, parts = split_user_parts(message)
        items: list[NativeContent] = [
            {
                "type": "function_call_output",
                "call_id": part.call_id,
                "output": tool_result_text(part),
            }
            for part in results
        ]
        if not parts:
            return items
        content: str | list[dict[str, Any]]
        if len(parts) == 1 and isinstance(parts[0], TextPart):
            content = parts[0].text  # a lone text goes as a plain string
        else:
            content = [
                {"type": "input_text", "text": part.text}
                if isinstance(part, TextPart)
                else {"type": "input_image", "image_url": image_url(part), "detail": "auto"}
                for part in parts
            ]
        items.append({"type": "message", "role": "user", "content": content})
        return items

    def _assistant_items(self, message: Message) -> list[NativeContent]:
        texts, calls = split_assistant_parts(message, "the Responses API")
        items: list[NativeContent] = []
        if texts:
            items.append({"type": "message", "role": "assistant", "content": "\n".join(texts)})
        items.extend(
            {
                "type": "function_call",
                "call_id": part.id,
                "name": part.name,
                "arguments": arguments_json(part),
            }
            for part in calls
        )
        return items

    # -- model output -> items -----------------------------------------------------------------

    def from_output(self, output: object) -> list[NativeContent]:
        """Read an input item dict, a list of them, or a ``Response`` (dict or SDK object).

        Null fields are dropped (as the SDK's ``exclude_none`` would); everything else,
        reasoning state included, is kept as it is.
        """
        output = native_output(output, self.gateway)
        if isinstance(output, dict):
            return self._from_dict(output)
        if isinstance(output, list):
            entries = output_entries(output)
            return [item for entry in entries for item in self._from_dict(entry)]
        reject_foreign_sdk_object(output, self.gateway)
        if sdk_origin(output) == "openai":
            name = type(output).__name__
            module = type(output).__module__
            if name == "Response":
                return _response_items(sdk_dump(output))
            if module.startswith("openai.types.responses.") and hasattr(output, "type"):
                return [sdk_dump(output)]
            raise GatewayMismatchError(
                f"an openai {name} is not Responses output (Chat Completions objects belong to "
                "an openai Context)"
            )
        raise InvalidItemError(
            f"cannot read model output of type {type(output).__name__}: expected a Responses "
            "input item dict, a list of them, or a Response"
        )

    @staticmethod
    def _from_dict(output: dict[str, Any]) -> list[NativeContent]:
        kind = output.get("object")
        if kind == "response":
            return _response_items(output)
        if kind == "chat.completion":
            raise GatewayMismatchError(
                "a Chat Completions response cannot be pushed into an openai_responses Context"
            )
        return [_without_nulls(output)]

    # -- validation ----------------------------------------------------------------------------

    def validate(self, item: NativeContent) -> None:
        """Raise InvalidItemError unless ``item`` is an input item the Responses API accepts."""
        validate_responses_item(item)

    # -- tool exchanges ------------------------------------------------------------------------

    def opens_exchange(self, item: NativeContent) -> bool:
        """True for any ``*_call`` item and for a ``reasoning`` item (it needs its next item)."""
        kind = item.get("type")
        return isinstance(kind, str) and (kind.endswith("_call") or kind == "reasoning")

    def closes_exchange(self, item: NativeContent) -> bool:
        """True for any ``*_output`` item (the answer to an earlier call)."""
        kind = item.get("type")
        return isinstance(kind, str) and kind.endswith("_output")

    # -- request -------------------------------------------------------------------------------

    def build_request(self, items: Sequence[NativeContent]) -> dict[str, Any]:
        """``{"input": [...]}`` with every tool call answered and no stray tool output."""
        unanswered, stray = _pairing(items)
        result: list[dict[str, Any]] = []
        notices: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            if index in stray:
                result.append(_output_as_text(item))
            elif item.get("type") == "reasoning" and not _followed(items, index):
                _log.debug("left out reasoning item %s: nothing of its turn follows it", item["id"])
            else:
                result.append(copy.deepcopy(item))
            if index in unanswered:
                notices.append(
                    {
                        "type": CALL_OUTPUT_TYPES[item["type"]],
                        "call_id": item["call_id"],
                        "output": ORPHAN_CALL_NOTICE,
                    }
                )
            turn_ends = index + 1 == len(items) or not (
                is_model_side(item) and is_model_side(items[index + 1])
            )
            if turn_ends and notices:
                result.extend(notices)
                notices = []
        return {"input": result}


def _followed(items: Sequence[NativeContent], index: int) -> bool:
    """True if the reasoning item at ``index`` is directly followed by the item it led to."""
    if index + 1 == len(items):
        return False
    following = items[index + 1]
    return is_model_side(following) and following.get("type") != "reasoning"


def _pairing(items: Sequence[NativeContent]) -> tuple[set[int], set[int]]:
    """Indices of unanswered calls and of outputs that answer no earlier call."""
    open_calls: dict[tuple[str, str], list[int]] = {}
    stray: set[int] = set()
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind in CALL_OUTPUT_TYPES:
            key = (CALL_OUTPUT_TYPES[kind], item["call_id"])
            open_calls.setdefault(key, []).append(index)
        elif kind in _OUTPUT_TYPES:
            waiting = open_calls.get((kind, item["call_id"]))
            if waiting:
                waiting.pop(0)
            else:
                stray.add(index)
    unanswered = {index for waiting in open_calls.values() for index in waiting}
    return unanswered, stray


def _output_as_text(item: NativeContent) -> dict[str, Any]:
    text = orphan_result_text(item["call_id"], item.get("output"))
    return {"type": "message", "role": "user", "content": text}


def _without_nulls(value: Any) -> Any:
    """``value`` with every null-valued key removed from every nested object."""
    if isinstance(value, dict):
        return {key: _without_nulls(inner) for key, inner in value.items() if inner is not None}
    if isinstance(value, list):
        return [_without_nulls(inner) for inner in value]
    return value


def _response_items(response: dict[str, Any]) -> list[NativeContent]:
    output = response.get("output")
    if not isinstance(output, list):
        raise InvalidItemError("the Response has no 'output' list to read")
    items: list[NativeContent] = []
    for entry in output:
        if not isinstance(entry, dict):
            raise InvalidItemError("every entry of a Response's 'output' must be an object")
        items.append(_without_nulls(entry))
    return items
