"""The stand-in for a real model, shared by every variant in this folder (docs/adapters-compared.md).

It asks for the tool ``step`` N times (N is the prompt, ``"10"``), one call per turn, then answers
``"done after N steps"``: a pure function of the conversation, as a replaying integration needs.
``HOOKS`` are the benchmark's (benchmarks/adapters.py): each is called with the index of every
model request that is really made (a journaled one, answered from the journal, is not made).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

HOOKS: list[Callable[[int], None]] = []


def _made(k: int) -> None:
    for hook in HOOKS:
        hook(k)


# --------------------------------------------------------------------------- pydantic-ai


def _pai_respond(messages: list[Any], info: Any) -> Any:
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    done = sum(isinstance(m, ModelResponse) for m in messages)
    _made(done)
    n = int(messages[0].parts[-1].content)
    if done < n:
        return ModelResponse(parts=[ToolCallPart("step", {"i": done}, tool_call_id=f"c{done}")])
    return ModelResponse(parts=[TextPart(f"done after {done} steps")])


def pai_model() -> Any:
    from pydantic_ai.models.function import FunctionModel

    return FunctionModel(_pai_respond, model_name="scripted")


# --------------------------------------------------------------------------- OpenAI Agents SDK


def _oai_items(input: Any) -> list[Any]:
    return [{"type": "message", "role": "user", "content": input}] if isinstance(input, str) else list(input)


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def oai_model() -> Any:
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    class Scripted(Model):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            items = _oai_items(input)
            done = sum(_field(i, "type") == "function_call_output" for i in items)
            _made(done)
            n = int(_field(items[0], "content"))
            if done < n:
                out: Any = ResponseFunctionToolCall(
                    id=f"fc_c{done}",
                    call_id=f"c{done}",
                    name="step",
                    arguments=json.dumps({"i": done}),
                    type="function_call",
                    status="completed",
                )
            else:
                text = ResponseOutputText(text=f"done after {done} steps", type="output_text", annotations=[])
                out = ResponseOutputMessage(
                    id="msg", content=[text], role="assistant", status="completed", type="message"
                )
            return ModelResponse(output=[out], usage=Usage(requests=1), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return Scripted()


def oai_provider() -> Any:
    """A ModelProvider whose every model name is the scripted model (the stand-in for OpenAI's)."""
    from agents.models.interface import ModelProvider

    class Provider(ModelProvider):
        def get_model(self, model_name: str | None) -> Any:
            return oai_model()

    return Provider()
