"""Ports Instructor's validation-retry loop (instructor ``retry.py``: ``retry_async`` keeps calling
the model with ``max_retries``; a ``ValidationError`` from ``process_response`` appends the
assistant's reply and a "Recall the function correctly, fix the errors" reask message to
``kwargs["messages"]`` and tries again; ``InstructorRetryException`` when the attempts run out), on
its "Validation and reasking" docs example: ``UserDetail`` whose ``name`` must be uppercase
(``field_validator``) -- the first completion answers "jason", the reask gets "JASON".

As written there, with the OpenAI SDK's ``ChatCompletion`` and tool calls carrying the JSON; the
completions are the suspensions.  The pydantic ``ValidationError`` of the failed attempt is kept
(``last_exception``, as tenacity's attempt state keeps it) across the retry's await.
"""

from __future__ import annotations

from typing import Any

from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError, field_validator

from tests.realcode._driver import model, script
from tests.realcode._registry import port
from tests.realcode._sdk import chat_completion

AGENT = "instructor_retry"


class UserDetail(BaseModel):
    name: str
    age: int

    @field_validator("name")
    @classmethod
    def validate_name(cls, v: str) -> str:
        if v.upper() != v:
            raise ValueError("Name must be in uppercase.")
        return v


class InstructorRetryException(Exception):
    def __init__(self, msg: str, *, n_attempts: int, last_completion: Any, messages: list[Any]) -> None:
        super().__init__(msg)
        self.n_attempts = n_attempts
        self.last_completion = last_completion
        self.messages = messages


def openai_schema(model_cls: type[BaseModel]) -> dict[str, Any]:
    return {
        "name": model_cls.__name__,
        "description": "Correctly extracted `UserDetail`",
        "parameters": model_cls.model_json_schema(),
    }


def process_response(response: ChatCompletion, response_model: type[BaseModel]) -> BaseModel:
    message = response.choices[0].message
    assert message.tool_calls, "Instructor does not support multiple tool calls, use List[Model] instead"
    return response_model.model_validate_json(message.tool_calls[0].function.arguments)


def reask_messages(response: ChatCompletion, exception: Exception) -> list[dict[str, Any]]:
    message = response.choices[0].message
    return [
        message.model_dump(exclude_none=True),
        *(
            {
                "role": "tool",
                "tool_call_id": tool_call.id,
                "name": tool_call.function.name,
                "content": (
                    f"Validation Error found:\n{exception}\nRecall the function correctly, fix the errors"
                ),
            }
            for tool_call in message.tool_calls or []
        ),
    ]


async def retry_async(
    response_model: type[BaseModel], max_retries: int, **kwargs: Any
) -> tuple[BaseModel, int, Any]:
    attempt = 0
    last_exception: ValidationError | None = None
    response = None
    while attempt < max_retries:
        attempt += 1
        response = await model(AGENT, **kwargs)
        try:
            return process_response(response, response_model), attempt, last_exception
        except ValidationError as e:
            last_exception = e
            kwargs["messages"].extend(reask_messages(response, e))
    raise InstructorRetryException(
        str(last_exception), n_attempts=attempt, last_completion=response, messages=kwargs["messages"]
    )


@port(
    "Extract jason is 25 years old",
    example="Instructor docs: validation and reasking (UserDetail uppercase name, retry_async reask loop)",
    answer="JASON",
)
async def extract(text: str) -> tuple[Any, ...]:
    schema = openai_schema(UserDetail)
    user, attempts, last_error = await retry_async(
        UserDetail,
        max_retries=3,
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": text}],
        tools=[{"type": "function", "function": schema}],
        tool_choice={"type": "function", "function": {"name": schema["name"]}},
    )
    return (user.name, user, attempts, last_error.errors(include_url=False) if last_error else None)  # type: ignore[union-attr]


@script(AGENT)
def _script(kind: str, request: Any) -> Any:
    messages = request["messages"]
    fixed = any("Recall the function correctly" in str(m.get("content")) for m in messages)
    arguments = {"name": "JASON" if fixed else "jason", "age": 25}
    return chat_completion(
        len(messages), tool_calls=[("UserDetail", arguments)], model="gpt-4o-mini-2024-07-18"
    )
