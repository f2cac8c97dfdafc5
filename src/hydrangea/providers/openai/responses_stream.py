"""Responses stream events assembled into the response of their final event."""

from __future__ import annotations

from hydrangea.errors import IncompleteStreamError, InvalidItemError
from hydrangea.providers._streaming import Json, fail, kind

NAME = "openai_responses"


def assemble_responses(events: list[Json]) -> Json:
    """The response the ``response.completed`` (or ``response.incomplete``) event carries, its
    output checked against the ``output_item.done`` items (filled in from them when empty)."""
    added: dict[int, Json] = {}
    done: dict[int, Json] = {}
    final: Json | None = None
    last_sequence: int | None = None
    for position, event in enumerate(events):
        named = event.get("type")
        if not isinstance(named, str) or not named.startswith("response."):
            raise fail(NAME, position, f"not a Responses stream event ({kind(event)})")
        if final is not None:
            raise fail(NAME, position, f"{named} after the stream's final event")
        sequence = event.get("sequence_number")
        if isinstance(sequence, int):
            if last_sequence is not None and sequence <= last_sequence:
                raise fail(NAME, position, f"sequence_number {sequence} after {last_sequence}")
            last_sequence = sequence
        index = event.get("output_index")
        if named == "response.output_item.added":
            if index != len(added):
                raise fail(NAME, position, f"output item {index} added before {len(added)}")
            added[index] = event.get("item") or {}
        elif named == "response.output_item.done":
            if not isinstance(index, int) or index not in added or index in done:
                raise fail(NAME, position, f"output item {index} done but never added")
            done[index] = event.get("item") or {}
        elif isinstance(index, int) and (index not in added or index in done):
            raise fail(NAME, position, f"{named} for output item {index}, which is not open")
        elif named in {"response.completed", "response.incomplete"}:
            response = event.get("response")
            if not isinstance(response, dict):
                raise fail(NAME, position, f"{named} carries no response")
            final = response
        elif named == "response.failed":
            raise InvalidItemError(f"the {NAME} stream ended with {named}: nothing to push")
    if final is None:
        raise fail(NAME, len(events), "no response.completed event: the stream was cut short")
    if len(done) != len(added):
        missing = sorted(set(added) - set(done))
        raise fail(NAME, len(events), f"output items {missing} were never done")
    items = [done[i] for i in range(len(done))]
    body = dict(final)
    output = body.get("output")
    if not output:
        body["output"] = items
    elif [_identity(item) for item in output] != [_identity(item) for item in items]:
        raise IncompleteStreamError(
            f"{NAME} stream: the final response's output items {_identities(output)} are not "
            f"the items the output_item.done events carried {_identities(items)}: push the "
            "events of one response"
        )
    return body


def _identity(item: object) -> tuple[object, object]:
    """Which item ``item`` is: its type and id. The other fields are the final event's: the API
    encrypts some afresh for it (a reasoning item's ``encrypted_content``, a ``program`` item's
    ``fingerprint``), so they differ from the ``output_item.done`` item's in real streams."""
    if isinstance(item, dict):
        return item.get("type"), item.get("id")
    return item, None


def _identities(items: list[Json]) -> str:
    return "[" + ", ".join(f"{t} {i}" for t, i in map(_identity, items)) + "]"
