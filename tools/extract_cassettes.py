# ruff: noqa: E501  (the SPECS table keeps one fixture per line)
"""Extract recorded provider responses from public VCR cassettes into tests/fixtures/real/.

Run with the project's venv (needs PyYAML) after fetching the source repositories::

    .venv/bin/python tools/extract_cassettes.py /work/.mirror [NAME ...]

Names (``openai_tool_call_without_id`` ...) extract only those fixtures.

Each fixture file holds one recorded response body (or one recorded stream of events), unchanged,
with the cassette it came from, and the tool results the recording client really sent next
(when the cassette holds the next request). Big base64 payloads are shortened in place, keeping
the structure; such files say so in ``trimmed``.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "real"
PAI = "pydantic/pydantic-ai"
MIR = "Mirascope/mirascope"
PAI_DIR = "tests/models/cassettes/"
MIR_DIR = "python/tests/e2e/output/cassettes/"
BIG = 4000
"""Strings longer than this under base64 keys are shortened."""
BASE64_KEYS = {"data", "result", "image_url", "b64_json", "thoughtSignature"}

# name, gateway, repo, path (under the cassette folder), interaction, categories
SPECS: list[tuple[str, str, str, str, int, list[str]]] = [
    # -- anthropic ---------------------------------------------------------------------------
    ("anthropic_thinking_signature", "anthropic", PAI, "test_anthropic/test_anthropic_model_thinking_part.yaml", 0, ["reasoning"]),
    ("anthropic_redacted_thinking_followup", "anthropic", PAI, "test_anthropic/test_anthropic_model_thinking_part_redacted.yaml", 1, ["reasoning", "redacted"]),
    ("anthropic_thinking_tool_use", "anthropic", PAI, "test_anthropic/test_anthropic_tool_with_thinking.yaml", 0, ["reasoning", "tool_calls"]),
    ("anthropic_parallel_tool_use", "anthropic", PAI, "test_anthropic/test_multiple_parallel_tool_calls.yaml", 0, ["tool_calls", "parallel"]),
    ("anthropic_web_search_citations", "anthropic", PAI, "test_anthropic/test_anthropic_web_search_tool.yaml", 1, ["reasoning", "server_tools", "citations"]),
    ("anthropic_web_fetch", "anthropic", PAI, "test_anthropic/test_anthropic_web_fetch_tool.yaml", 0, ["reasoning", "server_tools"]),
    ("anthropic_bash_code_execution", "anthropic", PAI, "test_anthropic/test_anthropic_code_execution_tool.yaml", 1, ["reasoning", "server_tools"]),
    ("anthropic_text_editor_code_execution", "anthropic", PAI, "test_anthropic/test_anthropic_text_editor_code_execution_tool.yaml", 0, ["server_tools"]),
    ("anthropic_mcp_tool_use", "anthropic", PAI, "test_anthropic/test_anthropic_mcp_servers.yaml", 1, ["reasoning", "server_tools", "mcp", "beta"]),
    ("anthropic_compaction", "anthropic", PAI, "test_anthropic/test_anthropic_compaction_usage_with_cache.yaml", 0, ["beta", "compaction"]),
    ("anthropic_advisor_redacted", "anthropic", PAI, "test_anthropic/test_anthropic_advisor_tool_redacted.yaml", 0, ["reasoning", "server_tools", "beta"]),
    ("anthropic_text_ahead_of_web_search", "anthropic", PAI, "test_anthropic/test_anthropic_text_parts_ahead_of_built_in_tool_call.yaml", 0, ["server_tools", "citations"]),
    ("anthropic_opus5_thinking", "anthropic", PAI, "test_anthropic/test_anthropic_opus_5_features.yaml", 0, ["reasoning"]),
    ("anthropic_text_tool_use", "anthropic", PAI, "test_anthropic/test_anthropic_deferred_capability_without_tool_search_across_models[claude-sonnet-4-6].yaml", 0, ["tool_calls"]),
    ("anthropic_memory_tool", "anthropic", PAI, "test_anthropic/test_anthropic_memory_tool.yaml", 0, ["tool_calls"]),
    ("anthropic_max_tokens", "anthropic", MIR, "test_max_tokens/anthropic_claude_sonnet_4_0/async.yaml", 0, ["max_tokens"]),
    ("anthropic_refusal_text", "anthropic", MIR, "test_refusal/anthropic_claude_sonnet_4_0/async.yaml", 0, ["refusal"]),
    ("anthropic_stream_thinking", "anthropic", PAI, "test_anthropic/test_anthropic_model_thinking_part_stream.yaml", 0, ["stream", "reasoning"]),
    ("anthropic_stream_redacted_thinking", "anthropic", PAI, "test_anthropic/test_anthropic_model_thinking_part_redacted_stream.yaml", 0, ["stream", "reasoning", "redacted"]),
    ("anthropic_stream_code_execution", "anthropic", PAI, "test_anthropic/test_anthropic_code_execution_tool_stream.yaml", 0, ["stream", "server_tools"]),
    ("anthropic_stream_parallel_tools", "anthropic", MIR, "test_call_with_tools/anthropic_claude_sonnet_4_0/stream.yaml", 0, ["stream", "tool_calls", "parallel"]),
    # -- openai chat -------------------------------------------------------------------------
    ("openai_tool_call_without_id", "openai", PAI, "test_openai/test_compatible_api_with_tool_calls_without_id.yaml", 0, ["tool_calls", "idless"]),
    ("openai_native_output_tool_call", "openai", PAI, "test_openai/test_openai_native_output.yaml", 0, ["tool_calls"]),
    ("openai_native_output_json", "openai", PAI, "test_openai/test_openai_native_output.yaml", 1, ["structured"]),
    ("openai_web_search_annotations", "openai", PAI, "test_openai/test_openai_web_search_tool.yaml", 0, ["server_tools", "citations"]),
    ("openai_web_search_user_location", "openai", PAI, "test_openai/test_openai_web_search_tool_with_user_location.yaml", 0, ["server_tools", "citations"]),
    ("openai_audio_input_text", "openai", PAI, "test_openai/test_audio_as_binary_content_input.yaml", 0, ["text"]),
    ("openai_gpt5_text", "openai", PAI, "test_openai/test_openai_model_settings_temperature_ignored_on_gpt_5.yaml", 0, ["text"]),
    ("openai_moderation_flagged", "openai", PAI, "test_openai/test_openai_moderation_flagged.yaml", 0, ["text"]),
    ("openai_o3_mini_text", "openai", PAI, "test_openai/test_max_completion_tokens[o3-mini].yaml", 0, ["text"]),
    ("openai_document_tool_call", "openai", PAI, "test_openai/test_document_as_binary_content_input_with_tool.yaml", 0, ["tool_calls"]),
    ("openai_refusal", "openai", MIR, "test_refusal/openai_gpt_4o_completions/async.yaml", 0, ["refusal"]),
    ("openai_parallel_tool_calls", "openai", MIR, "test_call_with_tools/openai_gpt_4o_completions/async.yaml", 0, ["tool_calls", "parallel"]),
    ("openai_max_tokens", "openai", MIR, "test_max_tokens/openai_gpt_4o_completions/sync.yaml", 0, ["max_tokens"]),
    ("openai_structured_strict", "openai", MIR, "test_structured_output/strict/openai_gpt_4o_completions/sync.yaml", 0, ["structured"]),
    ("openai_stream_parallel_tools", "openai", MIR, "test_call_with_tools/openai_gpt_4o_completions/stream.yaml", 0, ["stream", "tool_calls", "parallel"]),
    ("openai_stream_refusal", "openai", MIR, "test_refusal/openai_gpt_4o_completions/stream.yaml", 0, ["stream", "refusal"]),
    ("openai_stream_text_usage", "openai", PAI, "test_openai/test_run_stream_sync_streams_real_model.yaml", 0, ["stream", "usage_chunk"]),
    # -- openai responses --------------------------------------------------------------------
    ("responses_reasoning_encrypted", "openai_responses", PAI, "test_openai_responses/test_openai_responses_model_thinking_part.yaml", 1, ["reasoning"]),
    ("responses_reasoning_function_call", "openai_responses", PAI, "test_openai_responses/test_openai_responses_thinking_with_tool_calls.yaml", 0, ["reasoning", "tool_calls"]),
    ("responses_two_function_calls", "openai_responses", PAI, "test_openai_responses/test_openai_responses_model_retry.yaml", 0, ["tool_calls", "parallel"]),
    ("responses_mcp_connector", "openai_responses", PAI, "test_openai_responses/test_openai_responses_model_mcp_server_tool_with_connector.yaml", 0, ["reasoning", "server_tools", "mcp"]),
    ("responses_code_interpreter", "openai_responses", PAI, "test_openai_responses/test_openai_responses_thinking_with_code_execution_tool.yaml", 0, ["reasoning", "server_tools"]),
    ("responses_web_search_location", "openai_responses", PAI, "test_openai_responses/test_openai_responses_model_web_search_tool_with_user_location.yaml", 0, ["reasoning", "server_tools", "citations"]),
    ("responses_file_search_results", "openai_responses", PAI, "test_openai_responses/test_openai_responses_model_file_search_tool_with_results.yaml", 3, ["server_tools", "citations"]),
    ("responses_image_generation", "openai_responses", PAI, "test_openai_responses/test_openai_responses_image_generation_jpeg.yaml", 0, ["reasoning", "server_tools"]),
    ("responses_compaction", "openai_responses", PAI, "test_openai_responses/test_openai_responses_compact_with_instructions.yaml", 1, ["compaction"]),
    ("responses_phase_function_call", "openai_responses", PAI, "test_openai_responses/test_openai_responses_phase_live.yaml", 0, ["reasoning", "tool_calls"]),
    ("responses_no_item_ids", "openai_responses", PAI, "test_openai_responses/test_openai_responses_non_reasoning_model_no_item_ids.yaml", 0, ["tool_calls"]),
    ("responses_reasoning_summary", "openai_responses", PAI, "test_openai_responses/test_reasoning_summary_auto.yaml", 0, ["reasoning"]),
    ("responses_raw_annotations", "openai_responses", PAI, "test_openai_responses/test_openai_include_raw_annotations_non_streaming.yaml", 0, ["server_tools", "citations"]),
    ("responses_refusal", "openai_responses", MIR, "test_refusal/openai_gpt_4o_responses/sync.yaml", 0, ["refusal"]),
    ("responses_thinking_gpt5", "openai_responses", MIR, "test_call_with_thinking/openai_gpt_5_responses/async.yaml", 0, ["reasoning"]),
    ("responses_stream_text", "openai_responses", PAI, "test_openai_responses/test_openai_responses_stream.yaml", 0, ["stream"]),
    ("responses_stream_usage", "openai_responses", PAI, "test_openai_responses/test_openai_responses_streaming_usage.yaml", 0, ["stream"]),
    ("responses_stream_web_search", "openai_responses", PAI, "test_openai_responses/test_openai_responses_model_web_search_tool_stream.yaml", 0, ["stream", "reasoning", "server_tools"]),
    ("responses_stream_moderation", "openai_responses", PAI, "test_openai_responses/test_openai_responses_moderation_stream.yaml", 0, ["stream", "reasoning"]),
    # -- gemini ------------------------------------------------------------------------------
    ("gemini_thought_signature", "gemini", PAI, "test_google/test_google_model_thinking_part.yaml", 1, ["reasoning"]),
    ("gemini_parallel_same_name", "gemini", PAI, "test_google/test_google_instructions_only_with_tool_calls.yaml", 0, ["tool_calls", "parallel", "idless", "reasoning"]),
    ("gemini_call_signature_retry", "gemini", PAI, "test_google/test_google_model_retry.yaml", 1, ["tool_calls", "idless", "reasoning"]),
    ("gemini_call_plain", "gemini", PAI, "test_google/test_google_tool_output.yaml", 0, ["tool_calls", "idless"]),
    ("gemini_safety_blocked", "gemini", PAI, "test_google/test_google_model_safety_settings.yaml", 0, ["blocked"]),
    ("gemini_max_tokens_text", "gemini", PAI, "test_google/test_google_model_max_tokens.yaml", 0, ["max_tokens"]),
    ("gemini_max_tokens_empty", "gemini", PAI, "test_google/test_google_model_max_tokens_thinking_model_empty_response.yaml", 0, ["empty", "max_tokens"]),
    ("gemini_prompt_blocked", "gemini", PAI, "test_google/test_google_model_armor_prompt_template_text_gets_blocked.yaml", 1, ["blocked", "empty"]),
    ("gemini_server_tool_call", "gemini", PAI, "test_google/test_google_model_file_search_grounding_gemini_3[True].yaml", 4, ["server_tools", "reasoning"]),
    ("gemini_code_execution", "gemini", PAI, "test_anthropic/test_anthropic_server_tool_receive_history_from_another_provider.yaml", 0, ["server_tools"]),
    ("gemini_web_search_grounding", "gemini", PAI, "test_google/test_google_model_web_search_tool.yaml", 1, ["server_tools", "citations"]),
    ("gemini_image_with_text", "gemini", PAI, "test_google/test_google_image_generation_with_text.yaml", 0, ["reasoning", "image"]),
    ("gemini_text_signature", "gemini", PAI, "test_google/test_google_model_top_k.yaml", 0, ["reasoning"]),
    ("gemini_call_prompted_output", "gemini", PAI, "test_google/test_google_prompted_output_with_tools.yaml", 0, ["tool_calls", "idless", "reasoning"]),
    ("gemini_parallel_calls", "gemini", MIR, "test_call_with_tools/google_gemini_2_5_flash/async.yaml", 0, ["tool_calls", "parallel", "idless"]),
    ("gemini_thoughts", "gemini", MIR, "test_call_with_thinking/google_gemini_2_5_flash/async.yaml", 0, ["reasoning"]),
    ("gemini_stream_text", "gemini", PAI, "test_google/test_google_model_stream.yaml", 0, ["stream"]),
    ("gemini_stream_call_signature", "gemini", PAI, "test_google/test_google_streaming_tool_call_thought_signature.yaml", 0, ["stream", "tool_calls", "reasoning"]),
    ("gemini_stream_thinking", "gemini", PAI, "test_google/test_google_model_thinking_part_iter.yaml", 0, ["stream", "reasoning"]),
]

COMMITS: dict[str, str] = {}


def git_show(mirror: Path, repo: str, path: str) -> str:
    git_dir = mirror / repo.replace("/", "+") / "repo"
    if repo not in COMMITS:
        COMMITS[repo] = subprocess.run(
            ["git", "-C", str(git_dir), "rev-parse", "HEAD"], capture_output=True, text=True,
            check=True,
        ).stdout.strip()
    return subprocess.run(
        ["git", "-C", str(git_dir), "show", f"{COMMITS[repo]}:{path}"],
        capture_output=True, text=True, check=True,
    ).stdout


def body_text(response: dict[str, Any]) -> str | None:
    body = response.get("body") or {}
    raw = body.get("string") if isinstance(body, dict) else body
    if isinstance(raw, bytes):
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    return raw


def response_body(response: dict[str, Any]) -> Any:
    if "parsed_body" in response:
        return response["parsed_body"]
    return json.loads(body_text(response) or "null")


def request_body(request: dict[str, Any]) -> Any:
    if "parsed_body" in request:
        return request["parsed_body"]
    raw = request.get("body")
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8")
    return json.loads(raw) if raw else None


def sse_events(text: str) -> list[Any]:
    events: list[Any] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if not data:
            continue
        payload = "\n".join(data)
        if payload.strip() == "[DONE]":
            continue
        events.append(json.loads(payload))
    return events


def trim(value: Any, key: str | None, notes: list[str]) -> Any:
    if isinstance(value, str) and key in BASE64_KEYS and len(value) > BIG:
        notes.append(f"{key}: {len(value)} characters cut to 64")
        return value[:64]
    if isinstance(value, dict):
        return {k: trim(v, k, notes) for k, v in value.items()}
    if isinstance(value, list):
        return [trim(v, key, notes) for v in value]
    return value


def tool_results(gateway: str, next_request: Any) -> list[dict[str, Any]]:
    """The tool results the recording client sent in the next request, in order."""
    out: list[dict[str, Any]] = []
    if not isinstance(next_request, dict):
        return out
    if gateway == "anthropic":
        messages = next_request.get("messages") or []
        last = messages[-1] if messages else {}
        for block in last.get("content") or [] if isinstance(last.get("content"), list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, list):
                    content = "\n".join(str(p.get("text", "")) for p in content)
                out.append({"call_id": block["tool_use_id"], "content": str(content or ""),
                            "is_error": bool(block.get("is_error"))})
    elif gateway == "openai":
        for message in next_request.get("messages") or []:
            if message.get("role") == "tool":
                content = message.get("content")
                if isinstance(content, list):
                    content = "\n".join(str(p.get("text", "")) for p in content)
                out.append({"call_id": message.get("tool_call_id"), "content": str(content)})
    elif gateway == "openai_responses":
        items = next_request.get("input") or []
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                output = item.get("output")
                if not isinstance(output, str):
                    output = json.dumps(output)
                out.append({"call_id": item["call_id"], "content": output})
    elif gateway == "gemini":
        contents = next_request.get("contents") or []
        last = contents[-1] if contents else {}
        for part in last.get("parts") or []:
            response = part.get("functionResponse") or part.get("function_response")
            if response:
                out.append({"call_id": response.get("id") or response["name"],
                            "name": response["name"],
                            "content": json.dumps(response.get("response"), ensure_ascii=False)})
    # keep only the results of the newest exchange (the tail of the request)
    return out


def main() -> None:
    mirror = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/.mirror")
    only = set(sys.argv[2:])
    OUT.mkdir(parents=True, exist_ok=True)
    for name, gateway, repo, rel, index, categories in SPECS:
        if only and name not in only:
            continue
        base = PAI_DIR if repo == PAI else MIR_DIR
        path = base + rel
        cassette = yaml.safe_load(git_show(mirror, repo, path))
        interactions = cassette["interactions"]
        interaction = interactions[index]
        response = interaction["response"]
        notes: list[str] = []
        fixture: dict[str, Any] = {
            "source": f"{repo}@{COMMITS[repo]}:{path}#{index}",
            "gateway": gateway,
            "categories": categories,
            "uri": interaction["request"].get("uri"),
            "status": (response.get("status") or {}).get("code"),
        }
        request = request_body(interaction["request"])
        if isinstance(request, dict) and isinstance(request.get("model"), str):
            fixture["model"] = request["model"]
        if "stream" in categories:
            fixture["stream"] = trim(sse_events(body_text(response) or ""), None, notes)
        else:
            fixture["response"] = trim(response_body(response), None, notes)
        if index + 1 < len(interactions):
            results = tool_results(gateway, request_body(interactions[index + 1]["request"]))
            if results:
                fixture["tool_results"] = results
                fixture["tool_results_source"] = f"{path}#{index + 1} (request)"
        if notes:
            fixture["trimmed"] = notes
        target = OUT / f"{name}.json"
        target.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")
        print(f"{name}: {target.stat().st_size} bytes")


if __name__ == "__main__":
    main()
