"""SDK response objects as the SDKs return them: the JSON a service sends, validated by the SDK's
own model classes (``ChatCompletion.model_validate``, ``Message.model_validate``), never built
field by field, so they carry exactly what a real response carries (nested pydantic models,
``Literal`` fields, extra fields kept by the SDK's ``extra="allow"``)."""

from __future__ import annotations

import json
from typing import Any

from anthropic.types import Message
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

CREATED = 1_733_100_000  # a fixed "now": responses must be the same in every process


def chat_completion(
    n: int,
    *,
    content: str | None = None,
    tool_calls: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
    model: str = "gpt-4o-2024-08-06",
    refusal: str | None = None,
) -> ChatCompletion:
    """The ``n``-th completion of a conversation: text, or calls of (function name, arguments)."""
    calls = [
        {
            "id": f"call_{n:02d}{i:02d}Xq7dLk",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        for i, (name, arguments) in enumerate(tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if calls:
        message["tool_calls"] = calls
    return ChatCompletion.model_validate(
        {
            "id": f"chatcmpl-AZ{n:04d}kq2",
            "object": "chat.completion",
            "created": CREATED + n,
            "model": model,
            "system_fingerprint": "fp_7f6be3efb0",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 80 + 17 * n,
                "completion_tokens": 12 + n,
                "total_tokens": 92 + 18 * n,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
            },
        }
    )


def anthropic_message(
    n: int,
    blocks: list[dict[str, Any]],
    *,
    model: str = "claude-3-5-sonnet-20241022",
) -> Message:
    """The ``n``-th ``Message`` of a conversation; ``blocks`` are content blocks as JSON
    (``{"type": "text", ...}``, ``{"type": "tool_use", ...}``, ``{"type": "thinking", ...}``)."""
    uses_tool = any(b["type"] == "tool_use" for b in blocks)
    return Message.model_validate(
        {
            "id": f"msg_01Aq{n:04d}vWnT",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": "tool_use" if uses_tool else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 300 + 40 * n,
                "output_tokens": 30 + n,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
    )


def tool_use(n: int, i: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_01{n:02d}{i:02d}Bd9", "name": name, "input": arguments}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def response(n: int, output: list[dict[str, Any]], *, model: str = "gpt-4.1-2025-04-14") -> Response:
    """The ``n``-th ``Response`` of the Responses API; ``output`` items as JSON."""
    return Response.model_validate(
        {
            "id": f"resp_67cb{n:04d}a1",
            "object": "response",
            "created_at": CREATED + n,
            "status": "completed",
            "model": model,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "temperature": 1.0,
            "top_p": 1.0,
            "usage": {
                "input_tokens": 120 + 20 * n,
                "output_tokens": 20 + n,
                "total_tokens": 140 + 21 * n,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
    )


def function_call(n: int, i: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_67cb{n:02d}{i:02d}",
        "call_id": f"call_{n:02d}{i:02d}Rk",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def output_message(n: int, value: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_67cb{n:04d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": value, "annotations": []}],
    }
