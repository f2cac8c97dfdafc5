"""Complete streams: the events or chunks of one streamed response, assembled into that response.

:func:`assemble` takes the raw events of one stream, in the order they arrived (SDK event objects
or their JSON dicts, mixed freely), and returns the response body the same call would have
returned without streaming. ``Context.push_stream`` pushes that body, so a streamed turn stores
exactly the item a non-streamed one would. A stream
that is partial or out of order raises :class:`~hydrangea.errors.IncompleteStreamError` and
nothing is appended.

Per gateway:

- ``openai`` (Chat Completions chunks): content, refusal and every other string delta are
  concatenated per choice; ``tool_calls`` deltas are joined by their ``index`` (the first delta of
  an index carries the call's id and name). Complete means every choice has a ``finish_reason``
  and, when the chunks carry a ``usage`` key (``stream_options={"include_usage": True}``), the
  usage-only final chunk arrived. Azure OpenAI opens a stream with a prompt-filter chunk
  (``id ""``, ``object ""``, ``choices []``): its ``prompt_filter_results`` go to the top level of
  the completion, where Azure's non-streamed response has them; pushed alone it is a
  :class:`~hydrangea.errors.StreamEventError` like any other chunk.
- ``openai_responses``: the ``response.completed`` (or ``response.incomplete``) event carries the
  final response, which is returned as it is. The items of the ``response.output_item.done``
  events are checked against it (same items in the same order: type and id); the final event's
  fields are the ones kept, since the API encrypts some afresh for it (a reasoning item's
  ``encrypted_content``, a ``program`` item's ``fingerprint``). They fill in its ``output`` when
  the final event carries none.
- ``anthropic``: ``message_start``, then ``content_block_start`` / ``_delta`` / ``_stop`` per
  block (text, ``thinking_delta`` and ``signature_delta``, ``input_json_delta`` for tool inputs,
  ``citations_delta``; a server-side ``fallback`` block makes the model it hands over to the
  message's ``model``, as in the non-streamed message), ``message_delta`` (stop reason,
  ``container`` and the event's own ``context_management`` and ``input_transformations``;
  ``usage`` totals replace the counts they name, a null count leaves the ``message_start`` one)
  and ``message_stop``. A delta of an unknown type sets the block's keys it names (strings are
  appended), so a new delta type still yields its data.
- ``gemini``: each chunk is a ``GenerateContentResponse``. Parts of the first candidate are
  concatenated: adjacent text parts of the same kind (thought or not) join into one that keeps
  the ``thought_signature`` one of them carried (real streams put it on the first fragment of
  the answer, or on an empty final fragment; the non-streamed response has it on the one joined
  part); a second signature starts a new part, an empty text fragment carrying nothing else (the
  closing chunk after a function call) is no part of the response, and other parts
  (function calls, code, images) are kept whole. A function call streamed with Vertex's
  ``streamFunctionCallArguments`` (a first fragment with its ``name`` and ``willContinue``, then
  ``partialArgs`` pieces, each a ``jsonPath`` and a value, string pieces of one path joined while
  the piece says ``willContinue``, and a last fragment without ``willContinue``) becomes the one
  part ``{"functionCall": {"name", "args"}}`` with the signature its fragments carried.
  Complete means the last chunk carries a ``finishReason`` and no streamed call is left open.
  Gemini chunks have no sequence numbers, so reordering is detected only when it moves the final
  chunk, mixes two responses (``responseId``) or breaks a streamed call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import assert_never

from hydrangea.errors import IncompleteStreamError
from hydrangea.gateway import GatewayType
from hydrangea.providers._streaming import Json
from hydrangea.providers.anthropic.stream import assemble_anthropic
from hydrangea.providers.gemini.stream import assemble_gemini
from hydrangea.providers.openai.chat_stream import assemble_chat
from hydrangea.providers.openai.responses_stream import assemble_responses

__all__ = ["assemble", "event_dict"]


def assemble(gateway: GatewayType, events: Iterable[object]) -> Json:
    """The response body that the stream ``events`` of ``gateway`` stand for.

    Raises :class:`~hydrangea.errors.IncompleteStreamError` for a stream that is empty, cut
    short, out of order, or holds an event of another gateway.
    """
    items = [event_dict(event) for event in events]
    if not items:
        raise IncompleteStreamError(f"an empty {gateway.value} stream has no response")
    assembler: Callable[[list[Json]], Json]
    match gateway:
        case GatewayType.openai:
            assembler = assemble_chat
        case GatewayType.openai_responses:
            assembler = assemble_responses
        case GatewayType.anthropic:
            assembler = assemble_anthropic
        case GatewayType.gemini:
            assembler = assemble_gemini
        case _:
            assert_never(gateway)
    return assembler(items)


def event_dict(event: object) -> Json:
    """One stream event as its JSON dict (SDK objects are dumped as the API sent them)."""
    if isinstance(event, dict):
        return event
    from hydrangea.providers.sdk import _dump_genai, _dump_pydantic

    module = type(event).__module__
    if module.startswith("google.genai"):
        return _dump_genai(event)
    if hasattr(event, "model_dump"):
        return _dump_pydantic(event)
    raise IncompleteStreamError(
        f"a stream event must be an SDK event object or a dict, got {type(event).__name__}"
    )
