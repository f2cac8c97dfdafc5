"""Loopback emulators of the providers' prefix-binding rules, for the real SDK clients.

Each emulator is an HTTP server on 127.0.0.1 (a free port, in a thread) that answers with a
scripted list of replies and enforces one provider's documented rules on what is sent back.
They are the oracle of issue 22: none of their rules comes from the library's code.

Use::

    from tests.support.emulators import AnthropicEmulator, text, tool_call

    with AnthropicEmulator(replies=[tool_call("lookup", q="x"), text("done")]) as emu:
        client = emu.client()  # anthropic.Anthropic(base_url=emu.url, api_key="x")
        reply = client.messages.create(model="claude-sonnet-5-5", max_tokens=100, messages=[...])
        ...
    emu.requests      # every request: index, method, path, headers, body, status
    emu.rejections    # every refused request: index, status, path in the request, rule, message
    emu.drops         # Anthropic: bound blocks dropped (request, "messages.i.content.j", reason)
    emu.errors        # the emulator's own problems (no scripted reply left, bad JSON, ...)

- :class:`AnthropicEmulator` (``/v1/messages``): thinking blocks bound to their prefix,
  ``mismatch="error" | "drop_block" | "allow"``, mid-conversation system placement.
  ``emu.client()`` or ``anthropic.Anthropic(base_url=emu.url, ...)``.
- :class:`ResponsesEmulator` (``/v1/responses``): reasoning items dropped after a prefix change;
  ``emu.reasoning_accepted``, ``emu.reasoning_dropped``, ``emu.dropped``. ``emu.client()`` or
  ``openai.OpenAI(base_url=emu.url + "/v1", ...)``.
- :class:`GeminiEmulator` (``:generateContent``): thought signatures back on their own part.
  ``emu.client()`` or ``genai.Client(http_options=HttpOptions(base_url=emu.url))``.

Provider context management, in their own modules: the Anthropic emulator also applies context
editing, threshold and on-demand compaction (:mod:`.anthropic_management`);
:class:`~tests.support.emulators.responses_management.CompactingResponsesEmulator` adds
Responses server-side compaction and ``/responses/compact``;
:class:`~tests.support.emulators.responses_caching.CachingResponsesEmulator` adds GPT-5.6
explicit prompt caching.

Replies: :func:`text`, :func:`tool_call`, or :class:`Reply` (text plus several
:class:`ToolCall`, Anthropic ``redacted_thinking``). When the script runs out, ``default``
answers, else the request gets HTTP 500 and is listed in ``errors``. ``"stream": true``
requests get a server-sent event stream of the same reply.

Pytest fixtures (``anthropic_emulator``, ``responses_emulator``, ``gemini_emulator``: an emulator
answering "ok" by default; script it with ``emu.add_replies``) are defined in
tests/test_emulators.py and tests/test_emulators_openai_gemini.py; copy the four lines where
needed. :mod:`tests.support.emulators.drive` has small session drivers that keep the wire
history as the SDK sent it, to replay or edit it.
"""

from tests.support.emulators._server import (
    Received,
    Rejection,
    Reply,
    ToolCall,
    text,
    tool_call,
)
from tests.support.emulators.anthropic import AnthropicEmulator, Dropped
from tests.support.emulators.gemini import GeminiEmulator
from tests.support.emulators.openai_responses import DroppedItem, ResponsesEmulator

__all__ = [
    "AnthropicEmulator",
    "Dropped",
    "DroppedItem",
    "GeminiEmulator",
    "Received",
    "Rejection",
    "Reply",
    "ResponsesEmulator",
    "ToolCall",
    "text",
    "tool_call",
]
