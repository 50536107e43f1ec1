"""Ports Simon Willison's "A simple Python implementation of the ReAct pattern for LLMs" (2023): a
``ChatBot`` class keeping ``self.messages``, a ``query(question, max_turns=5)`` loop that matches
``^Action: (\\w+): (.*)$`` in each reply, runs the known action and feeds ``Observation: ...``
back as the next prompt, and the ``wikipedia``/``calculate``/``simon_blog_search`` actions.

As written there, with the OpenAI SDK's ``ChatCompletion`` from ``__call__``/``execute``: only the
completion and the actions (HTTP searches, ``eval``) are suspensions.  The compiled regular
expression, the bot and its message list cross every await.
"""

from __future__ import annotations

import re
from typing import Any

from openai.types.chat import ChatCompletion

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port
from tests.realcode._sdk import chat_completion

AGENT = "react_classic"

PROMPT = """
You run in a loop of Thought, Action, PAUSE, Observation.
At the end of the loop you output an Answer
Your available actions are:
calculate:
e.g. calculate: 4 * 7 / 3
wikipedia:
e.g. wikipedia: Django
""".strip()

action_re = re.compile(r"^Action: (\w+): (.*)$")  # python regular expression to select action


class ChatBot:
    def __init__(self, system: str = "") -> None:
        self.system = system
        self.messages: list[dict[str, str]] = []
        if self.system:
            self.messages.append({"role": "system", "content": system})

    async def __call__(self, message: str) -> str:
        self.messages.append({"role": "user", "content": message})
        result = await self.execute()
        self.messages.append({"role": "assistant", "content": result})
        return result

    async def execute(self) -> str:
        completion: ChatCompletion = await model(AGENT, model="gpt-3.5-turbo", messages=self.messages)
        return completion.choices[0].message.content or ""


def wikipedia(q: str) -> Any:
    return tool(AGENT, "wikipedia", q=q)


def calculate(what: str) -> Any:
    return tool(AGENT, "calculate", what=what)


known_actions = {"wikipedia": wikipedia, "calculate": calculate}


@port(
    "What does England share borders with, and what is its population times two?",
    example="Simon Willison: a simple Python implementation of the ReAct pattern (ChatBot, query loop)",
    answer="England shares borders with Wales and Scotland; twice its population is 113,980,000.",
)
async def query(question: str, max_turns: int = 5) -> tuple[Any, ...]:
    i = 0
    bot = ChatBot(PROMPT)
    next_prompt = question
    observations = []
    while i < max_turns:
        i += 1
        result = await bot(next_prompt)
        actions = [action_re.match(a) for a in result.split("\n") if action_re.match(a)]
        if actions:
            # There is an action to run
            action, action_input = actions[0].groups()
            if action not in known_actions:
                raise Exception(f"Unknown action: {action}: {action_input}")
            observation = await known_actions[action](action_input)
            observations.append(observation)
            next_prompt = f"Observation: {observation}"
        else:
            answer = result.split("Answer: ", 1)[-1]
            return (answer, bot.messages, observations, i)
    return (None, bot.messages, observations, i)


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        name, arguments = request
        if name == "calculate":
            a, _, b = arguments["what"].partition(" * ")
            return str(int(a) * int(b))
        return (
            "England is a country that is part of the United Kingdom. "
            "It shares land borders with Wales and Scotland."
        )
    messages = request[0]["messages"]
    n = len(messages)
    last = messages[-1]["content"]
    if n == 2:
        return chat_completion(
            n, content="Thought: I should look up England on Wikipedia\nAction: wikipedia: England\nPAUSE"
        )
    if "Wales" in last:
        return chat_completion(
            n,
            content=(
                "Thought: Now the population, 56,990,000, times two\nAction: calculate: 56990000 * 2\nPAUSE"
            ),
        )
    return chat_completion(
        n,
        content=(
            "Answer: England shares borders with Wales and Scotland; twice its population is 113,980,000."
        ),
    )
