"""Ports DSPy's ``dspy.ReAct`` module (dspy ``predict/react.py``: ``ReAct(signature, tools,
max_iters)`` whose ``forward`` grows a ``trajectory`` dict of ``thought_i``/``tool_name_i``/
``tool_args_i``/``observation_i``, calls the ``react`` predictor each iteration, runs the chosen
``Tool``, stops at the ``finish`` tool, then lets the ``extract`` ``ChainOfThought`` predictor turn
the trajectory into the signature's outputs, returned as a ``Prediction``), on the DSPy tutorial's
"question -> answer" agent with ``evaluate_math`` and ``search_wikipedia`` tools.

DSPy is not installed: ``Signature`` (parsed from ``"question -> answer"``), ``Tool``,
``Predict``, ``Prediction`` and ``ReAct`` keep its shape as plain classes.  The LM calls (one per
``Predict``) and the tools are the suspensions; the module, its predictors and the trajectory
cross every await.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "dspy_react"


class Signature:
    def __init__(self, spec: str, instructions: str = "") -> None:
        inputs, _, outputs = spec.partition("->")
        self.input_fields = [f.strip() for f in inputs.split(",") if f.strip()]
        self.output_fields = [f.strip() for f in outputs.split(",") if f.strip()]
        self.instructions = instructions

    def append(self, name: str, prefix: str = "input") -> Signature:
        new = Signature("", self.instructions)
        new.input_fields = self.input_fields + ([name] if prefix == "input" else [])
        new.output_fields = self.output_fields + ([name] if prefix == "output" else [])
        return new


class Prediction:
    def __init__(self, **kwargs: Any) -> None:
        self._store = dict(kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_store"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Prediction) and self._store == other._store

    def __repr__(self) -> str:
        return f"Prediction({', '.join(f'{k}={v!r}' for k, v in self._store.items())})"


class Tool:
    def __init__(self, func: Callable[..., Any], name: str | None = None, desc: str | None = None) -> None:
        self.func = func
        self.name = name or func.__name__
        self.desc = desc or (func.__doc__ or "").strip()
        self.args = {p: {"type": "string"} for p in inspect.signature(func).parameters}

    async def acall(self, **kwargs: Any) -> Any:
        result = self.func(**kwargs)
        return await result if inspect.isawaitable(result) else result


class Predict:
    def __init__(self, signature: Signature, name: str) -> None:
        self.signature = signature
        self.name = name

    async def acall(self, **kwargs: Any) -> Prediction:
        fields = await model(
            AGENT,
            predictor=self.name,
            instructions=self.signature.instructions,
            inputs={k: kwargs[k] for k in self.signature.input_fields},
            outputs=self.signature.output_fields,
        )
        return Prediction(**fields)


class ReAct:
    def __init__(self, signature: str, tools: list[Callable[..., Any]], max_iters: int = 10) -> None:
        self.signature = Signature(
            signature, "You are an Agent. In each episode, you will be given the fields as input."
        )
        tools_ = [t if isinstance(t, Tool) else Tool(t) for t in tools]
        self.tools = {t.name: t for t in tools_}
        self.tools["finish"] = Tool(
            func=lambda: "Completed.", name="finish", desc="Marks the task as complete."
        )
        self.max_iters = max_iters
        react_signature = (
            self.signature.append("trajectory")
            .append("next_thought", "output")
            .append("next_tool_name", "output")
            .append("next_tool_args", "output")
        )
        self.react = Predict(react_signature, "react")
        self.extract = Predict(self.signature.append("trajectory"), "extract.predict")

    async def aforward(self, **input_args: Any) -> Prediction:
        trajectory: dict[str, Any] = {}
        for idx in range(self.max_iters):
            pred = await self.react.acall(**input_args, trajectory=trajectory)
            trajectory[f"thought_{idx}"] = pred.next_thought
            trajectory[f"tool_name_{idx}"] = pred.next_tool_name
            trajectory[f"tool_args_{idx}"] = pred.next_tool_args
            try:
                trajectory[f"observation_{idx}"] = await self.tools[pred.next_tool_name].acall(
                    **pred.next_tool_args
                )
            except Exception as err:
                trajectory[f"observation_{idx}"] = f"Execution error in {pred.next_tool_name}: {err}"
            if pred.next_tool_name == "finish":
                break
        extract = await self.extract.acall(**input_args, trajectory=trajectory)
        return Prediction(trajectory=trajectory, **extract._store)


def evaluate_math(expression: str) -> Any:
    """Evaluate a mathematical expression."""
    return tool(AGENT, "evaluate_math", expression=expression)


def search_wikipedia(query: str) -> Any:
    """Search Wikipedia for the top 3 abstracts."""
    return tool(AGENT, "search_wikipedia", query=query)


@port(
    "What is 9362158 divided by the year of birth of David Gregory of Kinnairdy castle?",
    example="DSPy tutorial: dspy.ReAct('question -> answer', tools=[evaluate_math, search_wikipedia])",
    answer="5761.328",
)
async def main(question: str) -> tuple[Any, ...]:
    react = ReAct("question -> answer: float", tools=[evaluate_math, search_wikipedia])
    pred = await react.aforward(question=question)
    return (pred.answer, pred.trajectory, sorted(react.tools))


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        name, _arguments = request
        if name == "search_wikipedia":
            return [
                "David Gregory (physician) | David Gregory (20 December 1625 - 1720) "
                "was a Scottish physician and inventor."
            ]
        return 5761.328
    req = request[0]
    trajectory = req["inputs"]["trajectory"]
    if req["predictor"] == "extract.predict":
        return {"reasoning": "9362158 / 1625 = 5761.328", "answer": str(trajectory["observation_1"])}
    step = len(trajectory) // 4
    if step == 0:
        return {
            "next_thought": "Find his year of birth.",
            "next_tool_name": "search_wikipedia",
            "next_tool_args": {"query": "David Gregory of Kinnairdy castle"},
        }
    if step == 1:
        return {
            "next_thought": "Born 1625; divide.",
            "next_tool_name": "evaluate_math",
            "next_tool_args": {"expression": "9362158 / 1625"},
        }
    return {"next_thought": "I have the answer.", "next_tool_name": "finish", "next_tool_args": {}}
