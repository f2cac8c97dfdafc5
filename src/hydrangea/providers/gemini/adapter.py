"""The Google Gemini gateway (google-genai, ``client.models.generate_content``).

A stored item is one Gemini ``Content`` as JSON with the SDK's snake_case field names,
``{"role": "user" | "model", "parts": [...]}``. Bytes are base64 strings: ``inline_data.data``
and ``thought_signature``. A system message is stored as the pseudo-item
``{"role": "system", "parts": [{"text": ...}]}`` (:class:`GeminiSystemItem`);
:meth:`GeminiAdapter.build_request` places it (see :mod:`._gemini_request`).

Reasoning state: a part carrying ``thought_signature`` is kept whole, the signature as the
base64 text the API sent (the SDK hands it over as bytes; it is stored in standard base64 with
padding, which is how the API encodes bytes in JSON). ``thought`` parts are kept as they came.

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import islice
from typing import Any, Literal, TypedDict, assert_never

from hydrangea.errors import InvalidItemError
from hydrangea.gateway import GatewayType
from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart
from hydrangea.providers._intake import output_body
from hydrangea.providers._output import dict_entries
from hydrangea.providers.adapter import Adapter, CallIds, ToolSpec, UniqueNames
from hydrangea.providers.gemini._checks import canonical, check_output, validate_strict
from hydrangea.providers.gemini._read import OTHER_MODEL_SIGNATURE, read_content, without_signatures
from hydrangea.providers.gemini._request import (
    LEADING_USER_PLACEHOLDER,
    SYSTEM_NOTICE_PREFIX,
    build_gemini_request,
    merge_config,
    response_text,
)
from hydrangea.providers.gemini.tools import declarations, with_declarations
from hydrangea.providers.native import NativeContent, copy_json
from hydrangea.providers.pairing import CallSite, Pairing, ResultSite

__all__ = [
    "LEADING_USER_PLACEHOLDER",
    "NAME_LOOKBACK",
    "OTHER_MODEL_SIGNATURE",
    "SYSTEM_NOTICE_PREFIX",
    "GeminiAdapter",
    "GeminiContentItem",
    "GeminiSystemItem",
]

NAME_LOOKBACK = 64
"""How many items before a tool result :meth:`GeminiAdapter.name_results` looks at for its
call (a call is nearly always among the last few; the bound keeps an unmatched id O(1))."""


class GeminiSystemItem(TypedDict):
    """A system message; the leading run becomes ``config.system_instruction``."""

    role: Literal["system"]
    parts: list[dict[str, Any]]


class GeminiContentItem(TypedDict):
    """One Gemini ``Content`` (``google.genai.types.Content`` as snake_case JSON)."""

    role: Literal["user", "model"]
    parts: list[dict[str, Any]]


class GeminiAdapter(Adapter):
    """Adapter for Gemini through the google-genai SDK. Stateless."""

    gateway = GatewayType.gemini
    history_key = "contents"
    pairs_by_name = True
    merges_turns = True
    gen_ai_system = "gcp.gemini"

    # -- the request cache's and the Context's hooks -----------------------------------------

    def seam_anchor(self, before: Sequence[Any]) -> NativeContent:
        """A ``"."`` turn of the role of the cached last turn (so the new items' first turn
        merges into it exactly as in a whole build)."""
        return {"role": before[-1]["role"], "parts": [{"text": "."}]}

    def build_counted(
        self,
        items: Sequence[NativeContent],
        pairing_of: Callable[[Sequence[NativeContent]], Pairing],
    ) -> dict[str, Any]:
        """The builder of :meth:`build_request` with the prefix's id-less call counts."""
        return build_gemini_request(items, pairing_of)

    def closes_turn(self, last: Any, following: NativeContent) -> bool:
        """Whether ``following`` cannot merge into the built turn ``last``: another role, and
        ``following`` has parts (an empty turn is left out)."""
        if last is None or not following.get("parts"):
            return False
        return bool(last["role"] != _turn_role(following))

    def merges_with(self, item: NativeContent, following: NativeContent) -> bool:
        """Both have parts and go in turns of one role."""
        if not item.get("parts") or not following.get("parts"):
            return False
        return _turn_role(item) == _turn_role(following)

    def tool_declarations(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        """One tool entry of ``function_declarations`` (for ``config["tools"]``)."""
        return declarations(tools)

    def add_tools(
        self, kwargs: dict[str, Any], definitions: list[dict[str, Any]], unique: UniqueNames
    ) -> None:
        """The declarations go into ``config["tools"]``."""
        kwargs["config"] = with_declarations(kwargs.get("config"), definitions, unique)

    def merge_option(self, built: Mapping[str, Any], key: str, value: object) -> object:
        """A ``config`` gets the Context's system parts in its ``system_instruction``."""
        if key != "config":
            return value
        ours = built.get("config")
        system = ours["system_instruction"]["parts"] if isinstance(ours, dict) else []
        return merge_config(value, system)

    def from_message(self, message: Message) -> list[NativeContent]:
        """One Content per message (role ``model`` for the assistant)."""
        match message.role:
            case Role.system:
                return [{"role": "system", "parts": [_part_from(p) for p in message.parts]}]
            case Role.user if isinstance(message.content, str):  # plain text: no parts to make
                return [{"role": "user", "parts": [{"text": message.content}]}]
            case Role.user:
                return [{"role": "user", "parts": [_part_from(p) for p in message.parts]}]
            case Role.assistant:
                return [{"role": "model", "parts": [_part_from(p) for p in message.parts]}]
            case _:
                assert_never(message.role)

    def name_results(
        self, items: list[NativeContent], newest_first: Iterable[NativeContent]
    ) -> None:
        """A ``function_response`` without a ``name`` takes its call's (found by id among the
        last :data:`NAME_LOOKBACK` items): stored with it, the request sends it as stored
        instead of a copy with the name added. One whose call is not found is left as it is
        (the request still names it after the call it is paired with)."""
        wanted = {
            response["id"]: response
            for item in items
            for part in item["parts"]
            if (response := part.get("function_response")) is not None and "name" not in response
        }
        if not wanted:
            return
        for item in islice(newest_first, NAME_LOOKBACK):
            for call in self.tool_sites(item)[0]:
                if call.id in wanted:
                    wanted.pop(call.id)["name"] = call.name
            if not wanted:
                return

    def from_output(self, output: object) -> list[NativeContent]:
        """Read a ``GenerateContentResponse`` (first candidate), a ``Content``, or JSON.

        JSON may be a Content dict, a list of them, or a REST response body with
        ``candidates``; camelCase keys of the REST form become snake_case (:meth:`canonical`).
        Every part is kept, known kind or not (``tool_call``/``tool_response`` included).
        """
        return _read_body(output_body(output, self.gateway))

    def from_pushed(self, output: list[Any] | dict[str, Any]) -> list[NativeContent]:
        """:meth:`from_output` of checked JSON, then :meth:`canonical` (applied twice, as
        ``push_back`` always has: the renaming is not idempotent for every key)."""
        body = output_body(output, self.gateway, checked=True)
        return [canonical(item) for item in _read_body(body)]

    def canonical(self, item: NativeContent) -> NativeContent:
        """The snake_case form of a Content (REST camelCase keys renamed; payloads untouched)."""
        return canonical(item)

    def validate(self, item: NativeContent) -> None:
        """Check role and every part against what the Gemini API accepts."""
        validate_strict(item)

    def check_output(self, item: NativeContent) -> None:
        """Check only what the library relies on; unknown part kinds are kept."""
        check_output(item)

    def tool_sites(self, item: NativeContent) -> tuple[list[CallSite], list[ResultSite]]:
        """``function_call`` parts of a model turn, ``function_response`` parts of a user turn.

        A call without an id pairs by name (see :mod:`hydrangea.providers.pairing`); server-side
        ``tool_call`` / ``tool_response`` parts are not described.
        """
        calls: list[CallSite] = []
        results: list[ResultSite] = []
        role = item.get("role")
        for slot, part in enumerate(item.get("parts", [])):
            if role == "model" and isinstance(part.get("function_call"), dict):
                call = part["function_call"]
                ident = call.get("id")
                ident = ident if isinstance(ident, str) and ident else None
                calls.append(CallSite(slot, ident, call["name"]))
            elif role == "user" and isinstance(part.get("function_response"), dict):
                response = part["function_response"]
                ident, name = response.get("id"), response.get("name")
                results.append(
                    ResultSite(
                        slot,
                        ident if isinstance(ident, str) and ident else None,
                        name if isinstance(name, str) else None,
                    )
                )
        return calls, results

    def opens_exchange(self, item: NativeContent) -> bool:
        """True for a Content holding a ``function_call`` part, or a server-side ``tool_call``
        whose ``tool_response`` is not in the same Content."""
        if _has_part(item, "function_call"):
            return True
        open_ids: set[object] = set()
        for part in item.get("parts", []):
            if isinstance(part.get("tool_call"), dict):
                open_ids.add(part["tool_call"].get("id"))
            elif isinstance(part.get("tool_response"), dict):
                open_ids.discard(part["tool_response"].get("id"))
        return bool(open_ids)

    def closes_exchange(self, item: NativeContent) -> bool:
        """True for a Content holding a ``function_response`` part."""
        return _has_part(item, "function_response")

    def to_messages(self, item: NativeContent, ids: CallIds | None = None) -> list[Message]:
        """Text, images, function calls and responses as a Message (``model`` reads as the
        assistant). An id-less call gets its stable id (``ids``, else numbered in the item)."""
        return read_content(item, ids)

    def for_other_model(self, item: NativeContent) -> NativeContent | None:
        """Thought signatures belong to the model that made them: they are removed, ``thought``
        parts are left out, and the turn's first ``function_call`` gets Google's documented
        placeholder signature instead (:data:`OTHER_MODEL_SIGNATURE`), which Gemini 3 accepts
        for calls it did not make. A Content left with no part is left out."""
        return without_signatures(item)

    def build_request(self, items: Sequence[NativeContent]) -> dict[str, Any]:
        """``{"contents": [...], "config"?: {"system_instruction": ...}}``.

        To pass a config of your own, give it to ``Context.request(config=...)``: the system
        instruction is merged into it, so there is one ``config`` keyword (see
        "Composing request keywords" in the providers guide).
        """
        return build_gemini_request(items, self.pairing)

    def item_text(self, item: NativeContent) -> str:
        """Text, call arguments (JSON) and function responses; no signatures or bytes."""
        chunks: list[str] = []
        for part in item.get("parts", []):
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                chunks.append(part["text"])
            elif isinstance(part.get("function_call"), dict):
                chunks.append(json.dumps(part["function_call"].get("args", {}), sort_keys=True))
            elif isinstance(part.get("function_response"), dict):
                chunks.append(response_text(part["function_response"].get("response", {})))
        return "\n".join(chunks)


def _part_from(part: TextPart | ImagePart | ToolCallPart | ToolResultPart) -> dict[str, Any]:
    match part:
        case TextPart():
            return {"text": part.text}
        case ImagePart():
            if part.url is not None:
                file_data = {"file_uri": part.url}
                if part.media_type is not None:
                    file_data["mime_type"] = part.media_type
                return {"file_data": file_data}
            assert part.data is not None and part.media_type is not None
            encoded = base64.b64encode(part.data).decode("ascii")
            return {"inline_data": {"mime_type": part.media_type, "data": encoded}}
        case ToolCallPart():
            call = {"id": part.id, "name": part.name, "args": copy_json(part.arguments)}
            return {"function_call": call}
        case ToolResultPart():
            response: dict[str, Any] = {"id": part.call_id}
            if part.name is not None:
                response["name"] = part.name
            response["response"] = {"error" if part.is_error else "output": part.content}
            return {"function_response": response}
        case _:
            assert_never(part)


def _has_part(item: NativeContent, key: str) -> bool:
    parts = item.get("parts")
    return isinstance(parts, list) and any(isinstance(part, dict) and key in part for part in parts)


def _read_body(body: object) -> list[NativeContent]:
    if isinstance(body, list):
        entries = dict_entries(body, "expected a Gemini Content dict")
        return [canonical(entry) for entry in entries]
    if not isinstance(body, dict):
        raise InvalidItemError(f"cannot read {type(body).__name__} as Gemini output")
    if "candidates" in body or "prompt_feedback" in body or "promptFeedback" in body:
        return [canonical(_first_candidate_json(body))]
    return [canonical(body)]


def _first_candidate_json(body: dict[str, Any]) -> dict[str, Any]:
    candidates = body.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        raise InvalidItemError("the Gemini response has no candidates")
    content = candidates[0].get("content") if isinstance(candidates[0], dict) else None
    if not isinstance(content, dict):
        raise InvalidItemError("the first Gemini candidate has no content")
    return content


def _turn_role(item: NativeContent) -> str:
    """The role of the turn ``item`` is sent in (a system item goes in a user turn)."""
    return "model" if item.get("role") == "model" else "user"
