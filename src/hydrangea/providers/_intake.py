"""Where model output enters: SDK objects to JSON, and refusals that name the right gateway.

Every adapter's ``from_output`` starts with :func:`output_body`. It turns an SDK response object
into the JSON the provider sent (through :func:`sdk_native`, the one place SDK objects are
recognised), refuses a stream event with :class:`~hydrangea.errors.StreamEventError` and a body
of another gateway with :class:`~hydrangea.errors.GatewayMismatchError` naming that gateway.

The canonical form (one rule, applied here for SDK objects): an SDK object becomes
``model_dump(mode="json", exclude_unset=True, by_alias=True)``. The SDKs build their objects
from the response JSON, so the fields set are exactly the keys the provider sent, explicit
``null`` values included: the SDK object and the raw dict of one response give the same JSON
(``page_age: null`` stays ``null`` in both). Gemini is dumped in Python mode with snake_case
names and bytes as standard base64, which is how the Gemini adapter stores Contents (its raw
REST camelCase form is renamed to the same snake_case, see ``GeminiAdapter.canonical``). The
OpenAI SDKs' own ``parsed`` field (structured outputs) is not API data and is left out.

Key order is the one thing an SDK object cannot give back (it dumps fields in its own order),
so every stored output item has its object keys sorted, at every depth (``Context.extend``
does it for all provider items). Values, signatures and encrypted reasoning included, are
never touched.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from enum import Enum
from typing import Any

from hydrangea.errors import GatewayMismatchError, InvalidItemError, StreamEventError
from hydrangea.gateway import GatewayType
from hydrangea.providers.native import without_key
from hydrangea.providers.sdk import read_sdk_response, stream_event_gateway, stream_event_hint

__all__ = ["body_gateway", "output_body", "sdk_native"]

_NAMES = {
    GatewayType.openai: "OpenAI Chat Completions (openai)",
    GatewayType.openai_responses: "OpenAI Responses (openai_responses)",
    GatewayType.anthropic: "Anthropic Messages (anthropic)",
    GatewayType.gemini: "Gemini (gemini, google-genai)",
}


def gateway_name(gateway: GatewayType) -> str:
    """A readable name of ``gateway`` with its enum value."""
    return _NAMES[gateway]


def _jsonable(value: object) -> object:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(key): _jsonable(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(inner) for inner in value]
    return value


def _dump(output: object, **options: Any) -> Any:
    dump = getattr(output, "model_dump", None)
    if dump is None:
        raise InvalidItemError(f"{type(output).__name__} is not an SDK model (no model_dump)")
    return dump(exclude_unset=True, **options)


def sdk_native(output: object) -> tuple[GatewayType, object] | None:
    """The gateway and the JSON of an SDK response object, or ``None`` if it is none.

    The single point where SDK objects are recognised: responses and stream events by type,
    subclasses included (:mod:`hydrangea.providers.sdk`); a stream event raises
    :class:`~hydrangea.errors.StreamEventError`. Other objects of an SDK's modules (a
    ``ChatCompletionMessage``, one Responses output item) are dumped the same way.
    """
    event_gateway = stream_event_gateway(output)
    if event_gateway is not None:
        raise StreamEventError(stream_event_hint(event_gateway))
    response = read_sdk_response(output)
    if response is not None:
        return response.gateway, response.body
    # the modules of the class and its bases: a parametrized generic (``ParsedResponse[T]``) or a
    # subclass lives wherever it was made, its SDK base class does not
    modules = [klass.__module__ for klass in type(output).__mro__]
    module = next((m for m in modules if m.startswith(("anthropic", "openai", "google."))), "")
    root = module.split(".", 1)[0]
    if root == "anthropic":
        return GatewayType.anthropic, _dump(output, mode="json", by_alias=True)
    if root == "openai":
        responses = any(m.startswith("openai.types.responses") for m in modules)
        gateway = GatewayType.openai_responses if responses else GatewayType.openai
        body = without_key(_dump(output, mode="json", by_alias=True), "parsed")
        return gateway, body
    if module.startswith("google.genai"):
        return GatewayType.gemini, _jsonable(_dump(output, mode="python"))
    return None


def body_gateway(body: dict[str, Any]) -> GatewayType | None:
    """The gateway whose whole response body ``body`` is, or ``None`` for anything else.

    Raises :class:`~hydrangea.errors.StreamEventError` for one event or chunk of a stream.
    """
    event_gateway = stream_event_gateway(body)
    if event_gateway is not None:
        raise StreamEventError(stream_event_hint(event_gateway))
    kind = body.get("type")
    obj = body.get("object")
    if obj == "chat.completion":
        return GatewayType.openai
    if obj in ("response", "response.compaction"):
        return GatewayType.openai_responses
    if kind == "message" and "content" in body and ("stop_reason" in body or "model" in body):
        return GatewayType.anthropic
    if "candidates" in body or "promptFeedback" in body or "prompt_feedback" in body:
        return GatewayType.gemini
    return None


def output_body(output: object, gateway: GatewayType, *, checked: bool = False) -> object:
    """``output`` as JSON (a dict, a list, or what it was), checked to belong to ``gateway``.

    ``checked``: ``output`` is JSON that :func:`~hydrangea.providers.native.copy_json_value`
    returned (so it serializes; the ``json.dumps`` trial is skipped).
    """
    if isinstance(output, dict):
        found = body_gateway(output)
        body: object = output
    elif isinstance(output, list):
        for entry in output:
            if isinstance(entry, dict):
                theirs = body_gateway(entry)
                if theirs is not None and theirs is not gateway:
                    _mismatch(theirs, gateway)
        return output
    elif isinstance(output, str | bytes | int | float | bool) or output is None:
        raise InvalidItemError(
            f"cannot read a {type(output).__name__} as {gateway_name(gateway)} output: pass the "
            "SDK's response object, its JSON body, a native item dict or a list of them"
        )
    else:
        native = sdk_native(output)
        if native is None:
            raise InvalidItemError(
                f"cannot read {type(output).__name__} as {gateway_name(gateway)} output: pass "
                "the SDK's response object, its JSON body, a native item dict or a list of them"
            )
        found, body = native
    if found is not None and found is not gateway:
        _mismatch(found, gateway)
    if checked:
        return body
    try:
        json.dumps(body, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidItemError(f"model output must be JSON-serializable: {exc}") from exc
    return body


def _mismatch(found: GatewayType, gateway: GatewayType) -> None:
    raise GatewayMismatchError(
        f"this is output of {gateway_name(found)}; it cannot be pushed into a Context of "
        f"{gateway_name(gateway)} (use Context({found.value!r}) for it)"
    )
