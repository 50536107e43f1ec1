"""Ports CrewAI's quickstart crew (crewAI docs "Quickstart" / the ``crewai create crew`` template:
a ``researcher`` and a ``reporting_analyst`` ``Agent`` with role, goal and backstory, a
``research_task`` and a ``reporting_task`` whose ``expected_output`` frames the answer,
``Crew(agents=..., tasks=..., process=Process.sequential)`` and ``crew.kickoff(inputs={"topic": ...})``
interpolating ``{topic}`` and passing each task's output to the next as context).

crewAI is not installed: ``Agent``, ``Task``, ``Crew``, ``TaskOutput`` and ``CrewOutput`` are
pydantic models in its style and ``Process`` its enum; an agent's ``execute_task`` runs its ReAct
turns (tool calls, then a ``Final Answer:``).  The LLM calls and the search tool are the
suspensions; the crew, its tasks and the outputs so far cross every await.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port

AGENT = "crewai_sequential"


class Process(str, Enum):  # noqa: UP042 - as the framework writes it
    sequential = "sequential"
    hierarchical = "hierarchical"


class Agent(BaseModel):
    role: str
    goal: str
    backstory: str
    tools: list[str] = Field(default_factory=list)
    verbose: bool = False
    max_iter: int = 5

    def interpolate_inputs(self, inputs: dict[str, str]) -> None:
        self.role = self.role.format(**inputs)
        self.goal = self.goal.format(**inputs)
        self.backstory = self.backstory.format(**inputs)

    async def execute_task(self, task: Task, context: str | None) -> str:
        prompt = f"{task.description}\n\nThis is the expected criteria for your final answer: "
        prompt += task.expected_output
        if context:
            prompt += f"\n\nThis is the context you're working with:\n{context}"
        messages = [
            {
                "role": "system",
                "content": f"You are {self.role}. {self.backstory}\nYour personal goal is: {self.goal}",
            },
            {"role": "user", "content": prompt},
        ]
        for _ in range(self.max_iter):
            answer: str = await model(AGENT, model="gpt-4o-mini", messages=messages, tools=self.tools)
            messages.append({"role": "assistant", "content": answer})
            if "Final Answer:" in answer:
                return answer.split("Final Answer:", 1)[1].strip()
            action_input = answer.split("Action Input:", 1)[1].strip()
            observation = await tool(AGENT, "search_the_internet", query=action_input)
            messages.append({"role": "user", "content": f"Observation: {observation}"})
        raise RuntimeError(f"{self.role} reached max_iter without a final answer")


class TaskOutput(BaseModel):
    description: str
    raw: str
    agent: str


class Task(BaseModel):
    description: str
    expected_output: str
    agent: Agent
    output: TaskOutput | None = None

    def interpolate_inputs(self, inputs: dict[str, str]) -> None:
        self.description = self.description.format(**inputs)
        self.expected_output = self.expected_output.format(**inputs)


class CrewOutput(BaseModel):
    raw: str
    tasks_output: list[TaskOutput]
    token_usage: dict[str, int]


class Crew(BaseModel):
    agents: list[Agent]
    tasks: list[Task]
    process: Process = Process.sequential

    async def kickoff(self, inputs: dict[str, str]) -> CrewOutput:
        for agent in self.agents:
            agent.interpolate_inputs(inputs)
        for task in self.tasks:
            task.interpolate_inputs(inputs)
        outputs: list[TaskOutput] = []
        for task in self.tasks:
            context = "\n\n".join(o.raw for o in outputs) or None
            raw = await task.agent.execute_task(task, context)
            task.output = TaskOutput(description=task.description, raw=raw, agent=task.agent.role)
            outputs.append(task.output)
        return CrewOutput(raw=outputs[-1].raw, tasks_output=outputs, token_usage={"total_tokens": 1234})


researcher = Agent(
    role="{topic} Senior Data Researcher",
    goal="Uncover cutting-edge developments in {topic}",
    backstory="You're a seasoned researcher with a knack for uncovering the latest developments in {topic}.",
    tools=["search_the_internet"],
)
reporting_analyst = Agent(
    role="{topic} Reporting Analyst",
    goal="Create detailed reports based on {topic} data analysis and research findings",
    backstory="You're a meticulous analyst with a keen eye for detail.",
)


@port(
    {"topic": "AI LLMs"},
    example="crewAI quickstart: researcher and reporting analyst crew, Process.sequential kickoff",
    answer="# AI LLMs in 2025\n- Open-weight models caught up\n- Agents went to production",
)
async def run_crew(inputs: dict[str, str]) -> tuple[Any, ...]:
    research_task = Task(
        description=(
            "Conduct a thorough research about {topic}. "
            "Make sure you find any interesting and relevant information."
        ),
        expected_output="A list with 2 bullet points of the most relevant information about {topic}",
        agent=researcher.model_copy(deep=True),
    )
    reporting_task = Task(
        description="Review the context you got and expand each topic into a full section for a report.",
        expected_output="A fully fledged report with the main topics, formatted as markdown.",
        agent=reporting_analyst.model_copy(deep=True),
    )
    crew = Crew(agents=[research_task.agent, reporting_task.agent], tasks=[research_task, reporting_task])
    result = await crew.kickoff(inputs=inputs)
    return (result.raw, result, crew.process)


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        return (
            "2025: open-weight models match closed ones on benchmarks; agent frameworks ship to production."
        )
    messages = request[0]["messages"]
    researcher_turn = "Researcher" in messages[0]["content"]
    if researcher_turn and len(messages) == 2:
        return (
            "Thought: I should search.\nAction: search_the_internet\nAction Input: AI LLMs 2025 developments"
        )
    if researcher_turn:
        final = "- Open-weight models caught up\n- Agents went to production"
        return f"Thought: I know enough.\nFinal Answer: {final}"
    bullets = messages[1]["content"].split("working with:\n", 1)[1]
    return f"Thought: I can write the report.\nFinal Answer: # AI LLMs in 2025\n{bullets}"
