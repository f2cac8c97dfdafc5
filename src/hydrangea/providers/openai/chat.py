"""The OpenAI Chat Completions adapter (:attr:`GatewayType.openai`).

A stored item is one chat message exactly as ``client.chat.completions.create(messages=...)``
takes it. Conversion from a :class:`~hydrangea.message.Message`:

* system -> ``{"role": "system", "content": text}``, kept in place (Chat Completions accepts a
  system message anywhere, so a mid-conversation system message is not moved);
* user -> each tool result becomes its own ``{"role": "tool"}`` message, first (a tool message
  must directly follow the assistant message that made the call), then one user message with the
  text and images in their order (a lone text is sent as a plain string);
* assistant -> one message with the text and the ``tool_calls`` (arguments as a JSON string).

Images are ``image_url`` parts; bytes become a base64 ``data:`` URL. A failed tool result is
marked by the prefix :data:`~hydrangea.providers.openai._common.TOOL_ERROR_PREFIX`.

Pairing rule of the request builder (deterministic, stored items untouched): Chat Completions
wants the answers to an assistant message's ``tool_calls`` in the run of tool messages right after
it. Which tool message answers which call is the pairing engine's decision
(:mod:`hydrangea.providers.pairing`); the answer is moved into that run if it sits further down
(after a user message, say), as the Anthropic and Gemini builders do. The run holds the answers
in their stored order, then, for each call with no answer anywhere after it, a tool message reading
:data:`~hydrangea.providers.adapter.ORPHAN_CALL_NOTICE`. Every other message keeps its order; a tool
message that answers no earlier call (a second answer, one whose call is missing or comes later)
stays where it is as a user message ``"[tool result <id>] <content>"``.

Tool calls without an id: Gemini's OpenAI-compatible endpoint sends ``"id": ""`` on its tool
calls. The stored message keeps the empty id byte for byte; to the pairing engine such a call is
id-less, so it gets the stable id ``"<function name>#<n>"`` (:func:`~hydrangea.providers.pairing.
stable_call_id`) and a result naming that id, or the function name, answers it. On the wire the
request carries that stable id twice, as the call's ``id`` and as its tool message's
``tool_call_id``: the endpoint finds a tool result's function by the ``tool_call_id`` among the
assistant message's call ids (a result whose id matches none is refused with ``400
function_response.name: Name cannot be empty``), and several empty ids in one message could not
be told apart. The stable id is the only byte of the model's turn that differs from what was
stored. A tool message that answers a call through the name fallback is sent with that call's id
as well.

Markers are plain text, not a trust boundary: the ``"[tool result <id>] "`` and
``"[tool error] "`` prefixes this adapter writes look exactly like user or tool text that happens
to start the same way, and such text is sent unchanged (rewriting it would change the caller's
bytes and the cached prefix). That is sound because messages put into a Context are trusted,
caller-authored text; untrusted outside text belongs in a :mod:`hydrangea.asof` fence, which it
cannot forge or close. See "Text markers" in docs/en/providers.md.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict, assert_never

from hydrangea.errors import InvalidItemError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart
from hydrangea.providers._intake import output_body
from hydrangea.providers.adapter import ORPHAN_CALL_NOTICE, Adapter, CallIds, ToolSpec
from hydrangea.providers.native import NativeContent, clone_json
from hydrangea.providers.openai._chat_checks import (
    ASSISTANT_KEYS,
    check_chat_output,
    validate_chat_message,
)
from hydrangea.providers.openai._common import (
    arguments_json,
    image_url,
    orphan_result_text,
    output_entries,
    split_assistant_parts,
    split_user_parts,
    tool_result_text,
)
from hydrangea.providers.openai._read import read_chat_message
from hydrangea.providers.pairing import CallSite, Pairing, ResultSite

__all__ = ["ChatMessage", "ChatToolCall", "OpenAIChatAdapter"]

_log = logging.getLogger(__name__)


class ChatToolCall(TypedDict):
    """One entry of an assistant message's ``tool_calls`` (function kind)."""

    id: str
    type: Literal["function"]
    function: dict[str, str]
    """``{"name": ..., "arguments": <JSON string>}``."""


class ChatMessage(TypedDict):
    """The stored item: one Chat Completions input message.

    ``content`` is a string or a list of parts (``text``, ``image_url``, ``input_audio``,
    ``file`` for users; ``text``/``refusal`` for the assistant). ``tool_call_id`` is present on
    ``tool`` messages only, ``tool_calls`` on assistant messages only.
    """

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: NotRequired[str | list[dict[str, Any]] | None]
    name: NotRequired[str]
    tool_calls: NotRequired[list[ChatToolCall]]
    tool_call_id: NotRequired[str]


class OpenAIChatAdapter(Adapter):
    """Chat Completions: items are chat message dicts; see the module docstring."""

    gateway = GatewayType.openai
    history_key = "messages"
    has_idless_calls = True
    gen_ai_system = "openai"

    def tool_declarations(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        """``{"type": "function", "function": {name, description, parameters}}``."""
        return [
            {
                "type": "function",
                "function": {"name": name, "description": text, "parameters": schema},
            }
            for name, text, schema in tools
        ]

    def tool_name(self, definition: Mapping[str, Any]) -> str | None:
        """The name of ``{"function": {"name": ...}}`` (or a top-level one)."""
        function = definition.get("function")
        name = function.get("name") if isinstance(function, Mapping) else definition.get("name")
        return name if isinstance(name, str) else None

    # -- Message -> items ----------------------------------------------------------------------

    def from_message(self, message: Message) -> list[NativeContent]:
        """Convert ``message`` into chat messages (several when it carries tool results)."""
        match message.role:
            case Role.system:
                return [{"role": "system", "content": message.text}]
            case Role.user if isinstance(message.content, str):  # plain text: no parts to make
                return [{"role": "user", "content": message.content}]
            case Role.user:
                return self._user_items(message)
            case Role.assistant:
                return [self._assistant_item(message)]
            case _:
                assert_never(message.role)

    def _user_items(self, message: Message) -> list[NativeContent]:
        results, parts = split_user_parts(message)
        items: list[NativeContent] = [
            {"role": "tool", "tool_call_id": part.call_id, "content": tool_result_text(part)}
            for part in results
        ]
        if not parts:
            return items
        content: str | list[dict[str, Any]]
        if len(parts) == 1 and isinstance(parts[0], TextPart):
            content = parts[0].text  # a lone text goes as a plain string
        else:
            content = [
                {"type": "text", "text": part.text}
                if isinstance(part, TextPart)
                else {"type": "image_url", "image_url": {"url": image_url(part)}}
                for part in parts
            ]
        items.append({"role": "user", "content": content})
        return items

    def _assistant_item(self, message: Message) -> NativeContent:
        texts, calls = split_assistant_parts(message, "Chat Completions")
        item: NativeContent = {"role": "assistant"}
        if len(texts) == 1:
            item["content"] = texts[0]
        elif texts:
            item["content"] = [{"type": "text", "text": text} for text in texts]
        if calls:
            item["tool_calls"] = [
                {
                    "id": part.id,
                    "type": "function",
                    "function": {"name": part.name, "arguments": arguments_json(part)},
                }
                for part in calls
            ]
        return item

    # -- model output -> items -----------------------------------------------------------------

    def from_output(self, output: object) -> list[NativeContent]:
        """Read a chat message dict, a list of them, a ``ChatCompletion`` (dict or SDK object,
        ``ParsedChatCompletion`` included) or a ``ChatCompletionMessage``.

        An assistant message is put in its canonical form (:meth:`canonical`).
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
            raise InvalidItemError(f"cannot read {type(body).__name__} as Chat Completions output")
        if body.get("object") == "chat.completion":
            return [self.canonical(_first_choice(body))]
        return [self.canonical(body)]

    def canonical(self, item: NativeContent) -> NativeContent:
        """An assistant message keeps what Chat Completions takes back as input: null values,
        ``annotations``, the SDK's ``parsed`` and any other output-only key are dropped, and the
        audio payload is reduced to its ``id``. Other messages are kept as they are."""
        if item.get("role") == "assistant":
            return _clean_output_message(item)
        return item

    # -- validation ----------------------------------------------------------------------------

    def validate(self, item: NativeContent) -> None:
        """Raise InvalidItemError unless ``item`` is a chat message Chat Completions accepts."""
        validate_chat_message(item)

    def check_output(self, item: NativeContent) -> None:
        """Check only what the library relies on (roles, tool calls and their ids)."""
        check_chat_output(item)

    # -- tool exchanges ------------------------------------------------------------------------

    def tool_sites(self, item: NativeContent) -> tuple[list[CallSite], list[ResultSite]]:
        """The ``tool_calls`` of an assistant message; a ``tool`` message is one result."""
        role = item.get("role")
        if role == "tool":
            return [], [ResultSite(0, item["tool_call_id"])]
        if role != "assistant" or not isinstance(item.get("tool_calls"), list):
            return [], []
        calls = [
            CallSite(slot, call["id"] or None, _call_name(call))  # "" is id-less
            for slot, call in enumerate(item["tool_calls"])
        ]
        return calls, []

    def opens_exchange(self, item: NativeContent) -> bool:
        """True for an assistant message with ``tool_calls``: its tool messages follow it."""
        return item.get("role") == "assistant" and bool(item.get("tool_calls"))

    def closes_exchange(self, item: NativeContent) -> bool:
        """True for a ``tool`` (or legacy ``function``) message answering a call."""
        return item.get("role") in ("tool", "function")

    # -- reading back --------------------------------------------------------------------------

    def to_messages(self, item: NativeContent, ids: CallIds | None = None) -> list[Message]:
        """System/developer, user (text, images), assistant (text, refusals, tool calls) and
        tool messages (a user Message holding one tool result) as Messages. A call with the
        empty id reads with its stable id (``ids``, by slot; see the module docstring)."""
        return read_chat_message(item, ids)

    # -- request -------------------------------------------------------------------------------

    def build_request(self, items: Sequence[NativeContent]) -> dict[str, Any]:
        """``{"messages": [...]}`` with every tool call answered and no stray tool message."""
        if _without_tools(items):  # nothing to pair: each message is sent as a copy
            return {"messages": [clone_json(item) for item in items]}
        pairing = self.pairing(items)
        answers, claimed = _pair_calls(items, pairing)
        stable = pairing.stable_ids()  # of the calls sent with "id": ""
        messages: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            if index in claimed:
                continue  # sent in the run after its call
            if index in answers:
                messages.append(_with_ids(item, stable.get(index)))
                messages.extend(answers[index])
            elif item.get("role") == "tool":
                messages.append(_tool_as_text(item))
            else:
                messages.append(clone_json(item))
        return {"messages": messages}


# -- helpers -------------------------------------------------------------------------------------


def _without_tools(items: Sequence[NativeContent]) -> bool:
    """True if no item is a ``tool`` message or carries ``tool_calls`` (so nothing pairs)."""
    return not any(item.get("role") == "tool" or "tool_calls" in item for item in items)


def _first_choice(completion: dict[str, Any]) -> dict[str, Any]:
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices:
        raise InvalidItemError("the ChatCompletion has no choices to read")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise InvalidItemError("the ChatCompletion's first choice has no message")
    return message


def _clean_output_message(message: dict[str, Any]) -> NativeContent:
    """Drop what an assistant input message does not take: null values, ``annotations``, any
    other output-only key, and the audio payload (only its ``id`` goes back)."""
    cleaned = {
        key: value
        for key, value in message.items()
        if value is not None and key in ASSISTANT_KEYS
    }
    dropped = sorted(set(message) - set(cleaned))
    if dropped:
        _log.debug("dropped output-only keys %s from a chat completion message", dropped)
    audio = cleaned.get("audio")
    if isinstance(audio, dict) and "id" in audio:
        cleaned["audio"] = {"id": audio["id"]}
    return cleaned


def _tool_as_text(tool: NativeContent) -> dict[str, Any]:
    text = orphan_result_text(tool["tool_call_id"], tool.get("content"))
    return {"role": "user", "content": text}


def _call_name(call: dict[str, Any]) -> str:
    body = call.get(call.get("type", "function"))
    return str(body.get("name", "")) if isinstance(body, dict) else ""


def _pair_calls(
    items: Sequence[NativeContent], pairing: Pairing
) -> tuple[dict[int, list[dict[str, Any]]], set[int]]:
    """The tool run to send after each assistant message with calls, and the claimed indices.

    The pairing engine decides who answers whom; a run holds the claimed tool messages in
    stored order, then a notice for each call left unanswered.
    """
    answers: dict[int, list[dict[str, Any]]] = {}
    claimed: set[int] = set()
    for index, (found, missing) in pairing.by_call_item().items():
        positions = sorted((site[0], ident) for site, ident in found)
        claimed.update(position for position, _ in positions)
        run = [_answering(items[position], ident) for position, ident in positions]
        run.extend(
            {"role": "tool", "tool_call_id": call_id, "content": ORPHAN_CALL_NOTICE}
            for call_id in missing
        )
        answers[index] = run
    return answers, claimed


def _with_ids(item: NativeContent, stable: dict[int, str] | None) -> dict[str, Any]:
    """A copy of the assistant message ``item`` whose id-less calls carry their stable ids."""
    sent = clone_json(item)
    for slot, ident in (stable or {}).items():
        sent["tool_calls"][slot]["id"] = ident
    return sent


def _answering(tool: NativeContent, ident: str) -> dict[str, Any]:
    """A copy of the tool message ``tool``, sent under the id of the call it answers."""
    sent = clone_json(tool)
    sent["tool_call_id"] = ident
    return sent
