"""The README's agent loop runs through the real Anthropic SDK against a local server."""

from __future__ import annotations

import re
from pathlib import Path

import anthropic

from tests.support.capture_server import capture_server
from tests.support.unmarked import unmarked

README = Path(__file__).resolve().parent.parent / "README.md"


def _reply(text: str) -> dict[str, object]:
    return {"id": f"msg_{len(text)}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-5-5", "stop_reason": "end_turn", "stop_sequence": None,
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 20, "output_tokens": 5}}



def test_the_readme_agent_loop_runs_and_keeps_its_prefix() -> None:
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"),
                        re.DOTALL | re.MULTILINE)
    (source,) = [b for b in blocks if "def agent_loop" in b]
    namespace: dict[str, object] = {}
    exec(compile(source, "README.md", "exec"), namespace)
    loop = namespace["agent_loop"]
    assert callable(loop)
    with capture_server([(200, _reply("Yes, HW-2291 is closed.")),
                         (200, _reply("You are welcome."))]) as server:
        client = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        answers = loop(client, ["Is ticket HW-2291 closed?", "Thanks!"])
    assert answers == ["Yes, HW-2291 is closed.", "You are welcome."]
    first, second = (c.body for c in server.captured)
    # the reminder ends both requests; the first request, then the reply, begin the second
    assert "Answer in one short paragraph." in str(first["messages"][-1])
    assert "Answer in one short paragraph." in str(second["messages"][-1])
    sent = len(first["messages"])
    assert unmarked(second["messages"][:sent]) == unmarked(first["messages"])
    assert second["messages"][sent]["content"][0]["text"] == "Yes, HW-2291 is closed."
    assert any("cache_control" in str(message) for message in second["messages"])


def test_the_readme_agent_loop_passes_the_preserved_thinking_prefix_check() -> None:
    """Ten questions through the README's loop against the emulator of Anthropic's rules (every
    reply carries a thinking block): no request is rejected, no block dropped."""
    from tests.support.emulators import AnthropicEmulator, text

    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"),
                        re.DOTALL | re.MULTILINE)
    (source,) = [b for b in blocks if "def agent_loop" in b]
    namespace: dict[str, object] = {}
    exec(compile(source, "README.md", "exec"), namespace)
    loop = namespace["agent_loop"]
    assert callable(loop)
    with AnthropicEmulator(default=text("Yes.")) as emu:
        answers = loop(emu.client(), [f"Is ticket HW-{n} closed?" for n in range(10)])
        assert answers == ["Yes."] * 10
        assert len(emu.requests) == 10
        assert emu.rejections == [] and emu.drops == [] and emu.errors == []
