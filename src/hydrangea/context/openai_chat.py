"""Placeholder: the openai adapter is being written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hydrangea.context.adapter import Adapter
from hydrangea.context.native import NativeContent
from hydrangea.gateway import GatewayType
from hydrangea.message import Message


class OpenAIChatAdapter(Adapter):
    gateway = GatewayType.openai

    def from_message(self, message: Message) -> list[NativeContent]:
        raise NotImplementedError

    def from_output(self, output: object) -> list[NativeContent]:
        raise NotImplementedError

    def validate(self, item: NativeContent) -> None:
        raise NotImplementedError

    def build_request(self, items: Sequence[NativeContent]) -> dict[str, Any]:
        raise NotImplementedError
