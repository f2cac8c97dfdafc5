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

Compaction. A ``compaction`` item in a normal response (server-side compaction,
``context_management``) is output like any other: appended and sent back as it is. The
standalone ``/responses/compact`` endpoint (``client.responses.compact``) answers with a
``response.compaction`` object whose ``output`` is the compacted window (the user messages, then
one ``compaction`` item); OpenAI's rule is that this window *replaces* the input of the next
request. A Context is append-only, so the window starts a Context: ``push_back(compacted)``
stores its output items, as provider output, in a Context that holds no conversation yet (only
system or developer messages may come first), and the next request is the window followed by
what is appended after it. Pushed after a conversation it raises
:class:`~hydrangea.errors.CompactionPlacementError` and nothing is appended (the window appended
to the history it replaces would send the conversation twice). The window's user messages carry
an output ``id``, which the Responses input type of a message does not declare; the request
sends input messages without it (the stored item keeps it).

Pairing rule of the request builder: a ``function_call`` (or ``custom_tool_call``) is answered
by an output with its ``call_id`` anywhere after it, as the pairing engine decides
(:mod:`hydrangea.providers.pairing`). An unanswered call gets an output
reading :data:`~hydrangea.providers.adapter.ORPHAN_CALL_NOTICE` right after the model turn that
made it (the run of model-side items holding the call); an output that answers nothing becomes a
user message ``"[tool result <call_id>] <output>"`` in its place.

Built-in tool items are sent as stored, with one exception: the entries of a
``file_search_call``'s ``results`` are sent with only the fields the Responses input takes for
them (``attributes``, ``file_id``, ``filename``, ``score``, ``text``; the SDK's
``ResponseFileSearchToolCallParam``). The API returns more in its output (``vector_store_id``)
than its input schema declares, and it answers an input field outside its schema with ``400
Unknown parameter``. The stored item keeps every field byte for byte.

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

import logging
from collections.abc import Sequence
from typing import Any, Literal, NotRequired, TypedDict, assert_never

from hydrangea.errors import CompactionPlacementError, InvalidItemError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart
from hydrangea.providers._intake import output_body
from hydrangea.providers.adapter import (
    ORPHAN_CALL_NOTICE,
    Adapter,
    CachePolicy,
    CallIds,
    ToolSpec,
)
from hydrangea.providers.features import RequestFeature
from hydrangea.providers.native import NativeContent, clone_json
from hydrangea.providers.openai._common import (
    arguments_json,
    image_url,
    orphan_result_text,
    output_entries,
    split_assistant_parts,
    split_user_parts,
    tool_result_text,
)
from hydrangea.providers.openai._read import read_responses_item
from hydrangea.providers.openai._responses_checks import (
    CALL_OUTPUT_TYPES,
    check_responses_output,
    is_model_side,
    validate_responses_item,
)
from hydrangea.providers.openai.context_management import ResponsesCompaction
from hydrangea.providers.openai.explicit_caching import OpenAIExplicitCaching, explicit_request
from hydrangea.providers.pairing import CallSite, ResultSite

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
    history_key = "input"
    gen_ai_system = "openai"

    def tool_declarations(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        """``{"type": "function", name, description, parameters, "strict": False}``."""
        return [
            {
                "type": "function",
                "name": name,
                "description": text,
                "parameters": schema,
                "strict": False,
            }
            for name, text, schema in tools
        ]

    def seam_anchor(self, before: Sequence[Any]) -> NativeContent:
        """A user message item."""
        return {"type": "message", "role": "user", "content": "."}

    def places_breakpoints_for(self, caching: CachePolicy | None) -> bool:
        """Only with an enabled :class:`~hydrangea.providers.openai.explicit_caching.
        OpenAIExplicitCaching` (GPT-5.6 explicit prompt caching); without one, requests are
        built as ever, with no prefix tracking."""
        super().places_breakpoints_for(caching)
        return isinstance(caching, OpenAIExplicitCaching) and caching.enabled

    def breakpoint_request(
        self,
        items: Sequence[NativeContent],
        *,
        caching: CachePolicy | None = None,
        **plan: Any,
    ) -> dict[str, Any]:
        """The request with explicit cache breakpoints placed where the stable history ends
        (:func:`~hydrangea.providers.openai.explicit_caching.explicit_request`), or the plain
        request without an enabled policy."""
        if not self.places_breakpoints_for(caching):
            return self.build_request(items)
        assert isinstance(caching, OpenAIExplicitCaching)
        return explicit_request(
            self.build_request, items, caching, stable_items=plan.get("stable_items"),
            cut_items=plan.get("cut_items", ()), built=plan.get("built"),
            shared_of=plan.get("shared_of"), memo=plan.get("memo"),
        )

    def open_after(self, item: NativeContent) -> bool:
        """A reasoning item is sent only with the item it led to."""
        return item.get("type") == "reasoning"

    # -- Message -> items ----------------------------------------------------------------------

    def from_message(self, message: Message) -> list[NativeContent]:
        """Convert ``message`` into input items (several for tool calls and results)."""
        match message.role:
            case Role.system:
                return [{"type": "message", "role": "system", "content": message.text}]
            case Role.user if isinstance(message.content, str):  # plain text: no parts to make
                return [{"type": "message", "role": "user", "content": message.content}]
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
        """Read an input item dict, a list of them, or a ``Response`` (dict or SDK object,
        ``ParsedResponse`` included).

        Every output item is kept, built-in tool items and item types the library does not know
        included; null fields are dropped (:meth:`canonical`), reasoning state is kept as it is.
        """
        return self._read_body(output_body(output, self.gateway))

    def from_pushed(self, output: list[Any] | dict[str, Any]) -> list[NativeContent]:
        """:meth:`from_output` of checked JSON (its items are canonical already: a second
        :meth:`canonical` changes nothing)."""
        return self._read_body(output_body(output, self.gateway, checked=True))

    def _read_body(self, body: object) -> list[NativeContent]:
        if isinstance(body, list):
            return [self.canonical(entry) for entry in output_entries(body)]
        if not isinstance(body, dict):
            raise InvalidItemError(f"cannot read {type(body).__name__} as Responses output")
        if body.get("object") in ("response", "response.compaction"):
            return _response_items(body)
        return [self.canonical(body)]

    def compaction_start(self, item: NativeContent) -> NativeContent | None:
        """A ``compaction`` item: it carries the compacted context, so later requests start
        at it (the item, sent as it came). OpenAI's compaction guide: items that came before
        the most recent compaction item can be dropped; it carries what the next window needs."""
        return item if item.get("type") == "compaction" else None

    def native_compaction(self, threshold_tokens: int) -> RequestFeature | None:
        """Server compaction (``context_management`` ``compact_threshold``) at
        ``threshold_tokens``."""
        return ResponsesCompaction(threshold=threshold_tokens)

    def swapped_head(self, output: object) -> list[NativeContent] | None:
        """A ``response.compaction`` window (the reply to ``/responses/compact``): its output
        items replace what the compact request sent."""
        if not _is_compacted_window(output):
            return None
        return self.from_output(output)

    def check_push(self, history: Sequence[NativeContent], output: object) -> None:
        """Refuse a ``/responses/compact`` result after a conversation (see the module
        docstring, "Compaction")."""
        if not _is_compacted_window(output):
            return
        started = next(
            (
                position
                for position, item in enumerate(history)
                if not (item.get("type", "message") == "message"
                        and item.get("role") in ("system", "developer"))
            ),
            None,
        )
        if started is not None:
            raise CompactionPlacementError(
                "a /responses/compact result replaces the conversation it compacted, and this "
                f"Context already holds one (item {started} onward); a Context is append-only: "
                "push it into a new Context, Context(GatewayType.openai_responses)"
                ".push_back(compacted), and continue there (system or developer messages may "
                "come first); this Context keeps the full history"
            )

    def canonical(self, item: NativeContent) -> NativeContent:
        """``item`` without null-valued keys, at every depth (as the SDK's dumps leave them)."""
        cleaned = _without_nulls(item)
        assert isinstance(cleaned, dict)
        return cleaned

    # -- validation ----------------------------------------------------------------------------

    def validate(self, item: NativeContent) -> None:
        """Raise InvalidItemError unless ``item`` is an input item the Responses API accepts."""
        validate_responses_item(item)

    def check_output(self, item: NativeContent) -> None:
        """Check only what the library relies on; unknown item types are kept."""
        check_responses_output(item)

    # -- tool exchanges ------------------------------------------------------------------------

    def tool_sites(self, item: NativeContent) -> tuple[list[CallSite], list[ResultSite]]:
        """A ``function_call`` / ``custom_tool_call`` is one call, its ``*_output`` one result
        (the two kinds keep their ids apart). Built-in tool items are not described."""
        kind = item.get("type")
        if kind in CALL_OUTPUT_TYPES:
            return [CallSite(0, item["call_id"], item["name"], kind=kind)], []
        if kind in _OUTPUT_TYPES:
            return [], [ResultSite(0, item["call_id"], kind=kind.removesuffix("_output"))]
        return [], []

    def opens_exchange(self, item: NativeContent) -> bool:
        """True for any ``*_call`` item, an MCP approval request, and a ``reasoning`` item (it
        needs its next item)."""
        kind = item.get("type")
        return isinstance(kind, str) and (
            kind.endswith("_call") or kind in ("reasoning", "mcp_approval_request")
        )

    def closes_exchange(self, item: NativeContent) -> bool:
        """True for any ``*_output`` item and an MCP approval response (answers to a call)."""
        kind = item.get("type")
        return isinstance(kind, str) and (
            kind.endswith("_output") or kind == "mcp_approval_response"
        )

    # -- reading back --------------------------------------------------------------------------

    def to_messages(self, item: NativeContent, ids: CallIds | None = None) -> list[Message]:
        """Messages, function and custom tool calls and their outputs as Messages; reasoning
        and built-in tool items have no generic form and give ``[]``."""
        return read_responses_item(item)

    def binds_prefix(self, item: NativeContent) -> bool:
        """True for a ``reasoning`` item: after a change before it, it is dropped."""
        return item.get("type") == "reasoning"

    def for_other_model(self, item: NativeContent) -> NativeContent | None:
        """A ``reasoning`` item (its ``encrypted_content`` and id belong to the model that
        reasoned) is left out of a request for another model."""
        return None if item.get("type") == "reasoning" else item

    # -- request -------------------------------------------------------------------------------

    def build_request(self, items: Sequence[NativeContent]) -> dict[str, Any]:
        """``{"input": [...]}`` with every tool call answered and no stray tool output."""
        if _without_tools(items):  # nothing pairs: no notice, no stray output
            unanswered: set[int] = set()
            stray: set[int] = set()
        else:
            pairing = self.pairing(items)
            unanswered = {index for index, _ in pairing.unanswered}
            stray = {index for index, _ in pairing.orphans}
        result: list[dict[str, Any]] = []
        notices: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            if index in stray:
                result.append(_output_as_text(item))
            elif item.get("type") == "reasoning" and not _followed(items, index):
                _log.debug("left out reasoning item %s: nothing of its turn follows it", item["id"])
            elif item.get("type") == "file_search_call":
                result.append(_file_search_sent(item))
            elif "id" in item and item.get("role") in _INPUT_ROLES:
                result.append({k: clone_json(v) for k, v in item.items() if k != "id"})
            else:
                result.append(clone_json(item))
            if index in unanswered:
                notices.append(
                    {
                        "type": CALL_OUTPUT_TYPES[item["type"]],
                        "call_id": item["call_id"],
                        "output": ORPHAN_CALL_NOTICE,
                    }
                )
            if notices and (
                index + 1 == len(items)
                or not (is_model_side(item) and is_model_side(items[index + 1]))
            ):
                result.extend(notices)
                notices = []
        return {"input": result}


def _without_tools(items: Sequence[NativeContent]) -> bool:
    """True if no item is a client tool call or its output (what ``tool_sites`` describes)."""
    return not any(
        item.get("type") in CALL_OUTPUT_TYPES or item.get("type") in _OUTPUT_TYPES
        for item in items
    )


_INPUT_ROLES = frozenset({"user", "system", "developer"})
"""Roles of input messages: their Responses input type has no ``id`` (a compacted window's user
messages carry one in the output)."""


def _is_compacted_window(output: object) -> bool:
    """Whether ``output`` is a ``/responses/compact`` result (the dict or the SDK's object)."""
    if isinstance(output, dict):
        return output.get("object") == "response.compaction"
    return getattr(output, "object", None) == "response.compaction"


_FILE_SEARCH_RESULT_KEYS = frozenset({"attributes", "file_id", "filename", "score", "text"})
"""The fields of a ``file_search_call`` result the Responses input takes (the SDK's
``ResponseFileSearchToolCallParam.Result``)."""


def _file_search_sent(item: NativeContent) -> dict[str, Any]:
    """A copy of the ``file_search_call`` ``item`` whose results hold only input fields."""
    sent = clone_json(item)
    results = sent.get("results")
    if isinstance(results, list):
        sent["results"] = [
            {k: v for k, v in entry.items() if k in _FILE_SEARCH_RESULT_KEYS}
            if isinstance(entry, dict)
            else entry
            for entry in results
        ]
    return sent


def _followed(items: Sequence[NativeContent], index: int) -> bool:
    """True if the reasoning item at ``index`` is directly followed by the item it led to."""
    if index + 1 == len(items):
        return False
    following = items[index + 1]
    return is_model_side(following) and following.get("type") != "reasoning"


def _output_as_text(item: NativeContent) -> dict[str, Any]:
    text = orphan_result_text(item["call_id"], item.get("output"))
    return {"type": "message", "role": "user", "content": text}


def _without_nulls(value: Any) -> Any:
    """``value`` with every null-valued key removed from every nested object."""
    # Loops, not comprehensions (a second frame per level on 3.11): an item nested to
    # MAX_DEPTH must stay clear of the recursion limit.
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            if inner is not None:
                out[key] = _without_nulls(inner)
        return out
    if isinstance(value, list):
        items = []
        for inner in value:
            items.append(_without_nulls(inner))
        return items
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
