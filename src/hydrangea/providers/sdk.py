"""Official SDK response objects, recognised by type (subclasses included), read back as JSON.

:func:`read_sdk_response` tells which gateway an SDK object belongs to and returns the provider
JSON it stands for: ``openai`` ``ChatCompletion`` and ``ParsedChatCompletion``
(``client.chat.completions.parse``), ``Response`` and ``ParsedResponse``
(``client.responses.parse``), ``CompactedResponse`` (``client.responses.compact``),
``anthropic`` ``Message``, ``ParsedMessage`` and ``BetaMessage``,
``google-genai`` ``GenerateContentResponse``. The stream helpers' final objects
(``get_final_completion()``, ``get_final_response()``, ``get_final_message()``) are instances of
these classes, so they are read the same way. :func:`stream_event_gateway` recognises one event or
chunk of a stream (an SDK object or its raw dict), so that an adapter can refuse it with a hint;
Gemini chunks cannot be told from responses reliably (:func:`looks_like_gemini_chunk`).

Nothing here imports an SDK at module import. An object can only be of an SDK's class once that
SDK's module was imported, so each check first looks in :data:`sys.modules` and imports nothing
when the module is absent: with an SDK not installed (or never used), its types simply never match.

The JSON is the one the API sent. For ``openai`` and ``anthropic`` objects it is
``model_dump(mode="json", by_alias=True, exclude_unset=True)``: the SDKs build response objects
from the HTTP body without dropping keys, so the fields that are "set" are exactly the keys the API
sent, explicit ``null`` values included (``exclude_none`` would lose those, and the SDK form and the
raw dict of one response would then differ). The fields that ``parse()`` adds (``parsed``,
``parsed_arguments``, a ``tool_calls: null`` the API did not send, and the ``index`` that the
chat stream helper leaves on each tool call) are removed. For
``google-genai`` objects it is the same dump in Python mode, with bytes written as standard base64
(the API's alphabet; the SDK's JSON mode writes URL-safe base64, which would change every thought
signature) and the SDK's own additions (``sdkHttpResponse``, ``automaticFunctionCallingHistory``)
left out. The genai SDK drops response fields it does not know when it builds the object, so a
field newer than the installed SDK survives only in the raw dict form; tests/test_real_traffic.py
checks that the candidate content, which is what a Context stores, is identical in both forms.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any, get_args, get_origin

from hydrangea.errors import GatewayMismatchError, StreamEventError
from hydrangea.gateway import GatewayType

__all__ = [
    "ANTHROPIC_STREAM_EVENT_TYPES",
    "SdkResponse",
    "is_azure_filter_chunk",
    "looks_like_gemini_chunk",
    "native_output",
    "read_sdk_response",
    "stream_event_gateway",
    "stream_event_hint",
]

ANTHROPIC_STREAM_EVENT_TYPES = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    }
)
"""The ``type`` values of the Anthropic server-sent events (``ping`` included)."""

_PARSE_ADDED_KEYS = frozenset({"parsed", "parsed_arguments"})
_GENAI_SDK_KEYS = frozenset({"sdk_http_response", "automatic_function_calling_history"})


@dataclass(frozen=True, slots=True)
class SdkResponse:
    """An SDK response object read back: the gateway it belongs to and the JSON the API sent."""

    gateway: GatewayType
    body: dict[str, Any]
    """The response as provider JSON, equal to the raw HTTP body's fields the SDK kept."""
    kind: str
    """The SDK class's qualified name, for messages (``openai.types.responses.Response``)."""


# -- lazily imported SDK classes --------------------------------------------------------------


def _loaded(module: str) -> bool:
    return module in sys.modules


def _union_members(annotation: object) -> tuple[type, ...]:
    """The classes of a (possibly ``Annotated``) union type alias, flattened."""
    members: list[type] = []
    pending = [annotation]
    while pending:
        current = pending.pop()
        if isinstance(current, type):
            members.append(current)
            continue
        args = get_args(current)
        # Annotated[Union[...], info]: only the first argument is a type
        pending.extend(args[:1] if get_origin(current) is Annotated else args)
    return tuple(members)


def _openai_responses() -> tuple[type, ...]:
    """(``ChatCompletion``, then the Responses classes: ``Response`` and, in SDKs that have
    ``client.responses.compact``, its ``CompactedResponse``)."""
    if not _loaded("openai"):
        return ()
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

    try:
        from openai.types.responses import CompactedResponse
    except ImportError:  # an SDK older than the compact endpoint
        return (ChatCompletion, Response)
    return (ChatCompletion, Response, CompactedResponse)


def _anthropic_messages() -> tuple[type, ...]:
    if not _loaded("anthropic"):
        return ()
    from anthropic.types import Message
    from anthropic.types.beta import BetaMessage

    return (Message, BetaMessage)


def _genai_responses() -> tuple[type, ...]:
    if not _loaded("google.genai"):
        return ()
    from google.genai.types import GenerateContentResponse

    return (GenerateContentResponse,)


def _openai_events() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """(Chat Completions chunk and helper event classes, Responses event classes)."""
    if not _loaded("openai"):
        return (), ()
    from openai.types.chat import ChatCompletionChunk
    from openai.types.responses import ResponseStreamEvent

    chat: list[type] = [ChatCompletionChunk]
    if _loaded("openai.lib.streaming.chat"):
        from openai.lib.streaming.chat import ChatCompletionStreamEvent

        chat.extend(_union_members(ChatCompletionStreamEvent))
    return tuple(chat), _union_members(ResponseStreamEvent)


def _anthropic_events() -> tuple[type, ...]:
    if not _loaded("anthropic"):
        return ()
    from anthropic.types import RawMessageStreamEvent
    from anthropic.types.beta import BetaRawMessageStreamEvent

    members = [*_union_members(RawMessageStreamEvent), *_union_members(BetaRawMessageStreamEvent)]
    if _loaded("anthropic.lib.streaming"):
        from anthropic.lib.streaming import BetaMessageStreamEvent, MessageStreamEvent

        members.extend(_union_members(MessageStreamEvent))
        members.extend(_union_members(BetaMessageStreamEvent))
    return tuple(members)


# -- reading responses ------------------------------------------------------------------------


def read_sdk_response(output: object) -> SdkResponse | None:
    """The gateway and provider JSON of an official SDK response object, or ``None``.

    ``None`` means ``output`` is not an instance (or subclass instance) of any response class
    listed in the module docstring; stream events are not responses (see
    :func:`stream_event_gateway`).
    """
    kind = f"{type(output).__module__}.{type(output).__qualname__}"
    openai_types = _openai_responses()
    if openai_types and isinstance(output, openai_types):
        chat, *responses = openai_types
        body = _dump_pydantic(output)
        if isinstance(output, chat):
            if _is_parsed(output):
                _strip_chat_parse_fields(body)
            return SdkResponse(GatewayType.openai, body, kind)
        assert isinstance(output, tuple(responses))
        if _is_parsed(output):
            _strip_parse_fields(body.get("output"))
        return SdkResponse(GatewayType.openai_responses, body, kind)
    anthropic_types = _anthropic_messages()
    if anthropic_types and isinstance(output, anthropic_types):
        body = _dump_pydantic(output)
        _strip_parse_fields(body.get("content"))
        return SdkResponse(GatewayType.anthropic, body, kind)
    genai_types = _genai_responses()
    if genai_types and isinstance(output, genai_types):
        return SdkResponse(GatewayType.gemini, _dump_genai(output), kind)
    return None


def _is_parsed(output: object) -> bool:
    """True for the ``Parsed*`` subclasses that ``parse()`` and the stream helpers return."""
    return any(cls.__name__.startswith("Parsed") for cls in type(output).__mro__)


def _dump_pydantic(output: object) -> dict[str, Any]:
    dump = output.model_dump  # type: ignore[attr-defined]
    body = dump(mode="json", by_alias=True, exclude_unset=True, warnings=False)
    assert isinstance(body, dict)
    return body


def _strip_chat_parse_fields(body: dict[str, Any]) -> None:
    for choice in body.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        message.pop("parsed", None)
        if "tool_calls" in message and message["tool_calls"] is None:
            # parse() always sets it; the API leaves the key out when there are no calls
            del message["tool_calls"]
        _strip_parse_fields(message.get("tool_calls"))
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                # the stream helper keeps each chunk's delta index; the API's calls have none
                call.pop("index", None)


def _strip_parse_fields(value: object) -> None:
    """Remove ``parsed`` and ``parsed_arguments`` keys, at any depth, in place."""
    for node in _dicts(value):
        for key in _PARSE_ADDED_KEYS & node.keys():
            del node[key]


def _dicts(value: object) -> Iterator[dict[str, Any]]:
    pending = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, dict):
            yield current
            pending.extend(current.values())
        elif isinstance(current, list):
            pending.extend(current)


def _dump_genai(output: object) -> dict[str, Any]:
    dump = output.model_dump  # type: ignore[attr-defined]
    raw = dump(mode="python", by_alias=True, exclude_unset=True, exclude=set(_GENAI_SDK_KEYS))
    body = _json_values(raw)
    assert isinstance(body, dict)
    return body


def _json_values(value: object) -> object:
    """A genai Python dump as JSON values: bytes as standard base64, enums as their values."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {key: _json_values(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [_json_values(inner) for inner in value]
    return value


# -- stream events ----------------------------------------------------------------------------


def stream_event_gateway(output: object) -> GatewayType | None:
    """The gateway whose stream event or chunk ``output`` is (SDK object or raw dict), or ``None``.

    - ``openai``: a ``ChatCompletionChunk`` (or the chat stream helper's events), or a dict with
      ``"object": "chat.completion.chunk"`` or Azure's prompt-filter chunk
      (:func:`is_azure_filter_chunk`).
    - ``openai_responses``: any Responses stream event class, or a dict whose ``type`` starts with
      ``"response."``.
    - ``anthropic``: a raw message stream event (``message_start`` ... ``message_stop``, beta
      included), the stream helper's events (``text``, ``input_json``, ...), or their dicts.
    - ``gemini``: never. A streamed chunk is a ``GenerateContentResponse`` like a whole
      response, and a hand-built response often has no ``finishReason``, so a chunk cannot be
      told from a response reliably; :func:`looks_like_gemini_chunk` applies the API's rule
      (only the last chunk of a stream carries a finish reason) for callers who want it. Push a
      Gemini stream whole (:meth:`Context.push_stream`) rather than chunk by chunk.
    """
    if isinstance(output, dict):
        return _dict_event_gateway(output)
    chat_events, responses_events = _openai_events()
    if chat_events and isinstance(output, chat_events):
        return GatewayType.openai
    if responses_events and isinstance(output, responses_events):
        return GatewayType.openai_responses
    anthropic_events = _anthropic_events()
    if anthropic_events and isinstance(output, anthropic_events):
        return GatewayType.anthropic
    return None


def looks_like_gemini_chunk(output: object) -> bool:
    """True for a Gemini response (SDK object or dict) that has candidates, none of which carries
    a finish reason: by the API's rule, a chunk of a stream other than the last one."""
    if isinstance(output, dict):
        candidates = output.get("candidates")
        return (
            isinstance(candidates, list)
            and bool(candidates)
            and not any(
                isinstance(c, dict) and ("finishReason" in c or "finish_reason" in c)
                for c in candidates
            )
        )
    genai_types = _genai_responses()
    if genai_types and isinstance(output, genai_types):
        found = getattr(output, "candidates", None) or []
        return bool(found) and all(getattr(c, "finish_reason", None) is None for c in found)
    return False


def is_azure_filter_chunk(chunk: dict[str, Any]) -> bool:
    """Azure OpenAI's prompt-filter chunk, sent before a completion's own chunks: ``id ""``,
    ``object ""``, ``choices []`` and the ``prompt_filter_results`` that Azure's non-streamed
    response carries at its top level."""
    return (
        chunk.get("object") == ""
        and chunk.get("id") == ""
        and chunk.get("choices") == []
        and isinstance(chunk.get("prompt_filter_results"), list)
    )


def _dict_event_gateway(output: dict[str, Any]) -> GatewayType | None:
    if output.get("object") == "chat.completion.chunk" or is_azure_filter_chunk(output):
        return GatewayType.openai
    kind = output.get("type")
    if isinstance(kind, str):
        if kind.startswith("response."):
            return GatewayType.openai_responses
        if kind in ANTHROPIC_STREAM_EVENT_TYPES:
            return GatewayType.anthropic
    return None


def stream_event_hint(gateway: GatewayType) -> str:
    """The sentence that tells how to push a stream of ``gateway`` instead of one event."""
    return (
        f"this is one event of a streamed {gateway.value} response, not a whole response: "
        "push the complete stream (all its events, in order) with Context.push_stream(events) "
        "(see the providers guide, section 'Streams')"
    )


def native_output(output: object, gateway: GatewayType) -> object:
    """What an adapter's ``from_output`` reads, with SDK objects turned into provider JSON.

    - a stream event or chunk (of any gateway): :class:`~hydrangea.errors.StreamEventError`
      with :func:`stream_event_hint`;
    - an SDK response of another gateway: :class:`~hydrangea.errors.GatewayMismatchError`
      naming both gateways and the class;
    - an SDK response of ``gateway``: its JSON body (see :func:`read_sdk_response`);
    - anything else: ``output`` itself, unchanged.
    """
    event_gateway = stream_event_gateway(output)
    if event_gateway is not None:
        raise StreamEventError(stream_event_hint(event_gateway))
    found = read_sdk_response(output)
    if found is None:
        return output
    if found.gateway is not gateway:
        raise GatewayMismatchError(
            f"a {found.kind} belongs to the {found.gateway.value} gateway, not to "
            f"{gateway.value}: push it into a Context(GatewayType.{found.gateway.name})"
        )
    return found.body
