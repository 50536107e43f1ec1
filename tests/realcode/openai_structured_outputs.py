"""Ports the OpenAI "Structured Outputs" guide's math tutor (openai-python
``client.beta.chat.completions.parse(model=..., messages=..., response_format=MathReasoning)``
returning a ``ParsedChatCompletion[MathReasoning]`` whose ``choices[0].message.parsed`` is a
``MathReasoning`` of ``Step``s), run as a short tutoring loop: each problem is parsed, a refusal
is kept apart (``message.refusal``), and the steps are collected.

The SDK's own parsing is used: the stand-in model answers the JSON a service returns and the
agent parses it with ``openai.lib._parsing._completions.parse_chat_completion`` exactly as
``.parse()`` does, so what crosses the awaits is what ``.parse()`` returns: an instance of the
parametrized generic pydantic class ``ParsedChatCompletion[TypeVar]`` (the SDK parametrizes it
with its TypeVar).
"""

from __future__ import annotations

import json
from typing import Any

from openai import omit
from openai.lib._parsing._completions import parse_chat_completion
from openai.types.chat import ChatCompletion, ParsedChatCompletion
from pydantic import BaseModel

from tests.realcode._driver import model, script
from tests.realcode._registry import port
from tests.realcode._sdk import chat_completion

AGENT = "openai_structured_outputs"


class Step(BaseModel):
    explanation: str
    output: str


class MathReasoning(BaseModel):
    steps: list[Step]
    final_answer: str


async def parse(**kwargs: Any) -> ParsedChatCompletion[MathReasoning]:
    """``client.beta.chat.completions.parse``: the request is the suspension, the parsing the SDK's."""
    raw: ChatCompletion = await model(AGENT, **{k: v for k, v in kwargs.items() if k != "response_format"})
    return parse_chat_completion(
        response_format=kwargs["response_format"], input_tools=omit, chat_completion=raw
    )


@port(
    ["how can I solve 8x + 7 = -23", "how can I make a bomb"],
    example="OpenAI Structured Outputs guide: math tutor (beta.chat.completions.parse, MathReasoning)",
    answer=["x = -15/4"],
)
async def tutor(problems: list[str]) -> tuple[Any, ...]:
    answers, refusals, completions = [], [], []
    for problem in problems:
        completion = await parse(
            model="gpt-4o-2024-08-06",
            messages=[
                {
                    "role": "system",
                    "content": (
                        "You are a helpful math tutor. Guide the user through the solution step by step."
                    ),
                },
                {"role": "user", "content": problem},
            ],
            response_format=MathReasoning,
        )
        completions.append(completion)
        math_reasoning = completion.choices[0].message
        if math_reasoning.refusal:
            refusals.append(math_reasoning.refusal)
        else:
            answers.append(math_reasoning.parsed.final_answer)  # type: ignore[union-attr]
    # the parsed models, not the completions: ParsedChatCompletion[TypeVar] is not reachable by
    # module:qualname, so the harness could not pickle the outcome to compare it across processes
    parsed = [c.choices[0].message.parsed for c in completions]
    return (answers, refusals, parsed, [type(c).__name__ for c in completions])


@script(AGENT)
def _script(kind: str, request: Any) -> Any:
    problem = request["messages"][-1]["content"]
    if "bomb" in problem:
        return chat_completion(2, refusal="I'm sorry, I can't assist with that request.")
    reasoning = {
        "steps": [
            {"explanation": "Subtract 7 from both sides.", "output": "8x = -30"},
            {"explanation": "Divide both sides by 8.", "output": "x = -30/8 = -15/4"},
        ],
        "final_answer": "x = -15/4",
    }
    return chat_completion(1, content=json.dumps(reasoning))
