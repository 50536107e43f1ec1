"""Classes and functions that ``module:qualname`` does not find by their own names, made at import
time the way real libraries make them (tests/codec/test_class_paths.py; a fresh process imports this
module to restore what a blob names in it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, create_model

from tests.codec.codec_samples import function_tool

T = TypeVar("T")


class Envelope(BaseModel, Generic[T]):
    """A pydantic generic: ``Envelope[Item]`` is a class pydantic makes on first subscription."""

    payload: T
    tag: str = ""


class Item(BaseModel):
    name: str
    qty: int = 1


#: create_model under another module attribute name than its class name
Schema = create_model("Weather", city=(str, ...), days=(int, 3))


@dataclass
class Tool:
    """``@tool``: the decorated function's name now names this object, which holds the function and
    a class generated from its signature (LangChain's ``StructuredTool.args_schema``)."""

    func: Callable[..., Any]
    args_schema: type[BaseModel]


def tool(func: Callable[..., Any]) -> Tool:
    return Tool(func, create_model(func.__name__, a=(int, ...)))


@tool
def double(a: int) -> int:
    return a * 2


def make_unfindable() -> type:
    """A class made inside a function and held by nothing at module level: still refused."""
    return create_model("Loose", x=(int, ...))


@function_tool
async def lookup(question: str) -> str:
    """The OpenAI Agents SDK's shape: the tool keeps this function two closures down."""
    return question.upper()
