"""Ports the Anthropic cookbook's orchestrator-workers pattern (anthropic-cookbook
``patterns/agents/orchestrator_workers.ipynb``: ``FlexibleOrchestrator(orchestrator_prompt,
worker_prompt)`` whose ``process(task, context)`` asks the orchestrator ``llm_call`` for an
``<analysis>`` and ``<tasks>`` in XML, parses them with ``extract_xml``/``parse_tasks``, runs one
worker ``llm_call`` per task with its ``type`` and ``description``, and returns the analysis and
the ``worker_results``), on its product-description example.

As written there (string prompts, XML parsing by ``find``, dicts of results) with
``client.messages.create`` returning the SDK's ``Message``; every ``llm_call`` is a suspension,
and the ``Message`` objects are kept in the results across the awaits.
"""

from __future__ import annotations

import re
from typing import Any

from anthropic.types import Message

from tests.realcode._driver import model, script
from tests.realcode._registry import port
from tests.realcode._sdk import anthropic_message, text

AGENT = "anthropic_orchestrator_workers"


async def llm_call(
    prompt: str, system_prompt: str = "", model_name: str = "claude-3-5-sonnet-20241022"
) -> Message:
    """The cookbook's ``llm_call`` (it returns ``response.content[0].text``; the ``Message`` is kept here)."""
    messages = [{"role": "user", "content": prompt}]
    return await model(
        AGENT, model=model_name, max_tokens=4096, system=system_prompt, messages=messages, temperature=0.1
    )


def extract_xml(text: str, tag: str) -> str:
    match = re.search(f"<{tag}>(.*?)</{tag}>", text, re.DOTALL)
    return match.group(1) if match else ""


def parse_tasks(tasks_xml: str) -> list[dict[str, str]]:
    tasks = []
    current_task: dict[str, str] = {}
    for line in tasks_xml.split("\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith("<task>"):
            current_task = {}
        elif line.startswith("<type>"):
            current_task["type"] = line[6:-7].strip()
        elif line.startswith("<description>"):
            current_task["description"] = line[12:-13].strip()
        elif line.startswith("</task>"):  # noqa: SIM102 - the cookbook's nesting, kept
            if "description" in current_task:
                if "type" not in current_task:
                    current_task["type"] = "default"
                tasks.append(current_task)
    return tasks


class FlexibleOrchestrator:
    """Break down tasks and run them in parallel using worker LLMs."""

    def __init__(self, orchestrator_prompt: str, worker_prompt: str) -> None:
        self.orchestrator_prompt = orchestrator_prompt
        self.worker_prompt = worker_prompt

    def _format_prompt(self, template: str, **kwargs: Any) -> str:
        try:
            return template.format(**kwargs)
        except KeyError as e:
            raise ValueError(f"Missing required prompt variable: {e}") from e

    async def process(self, task: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
        context = context or {}
        orchestrator_input = self._format_prompt(self.orchestrator_prompt, task=task, **context)
        orchestrator_response = await llm_call(orchestrator_input)
        analysis = extract_xml(orchestrator_response.content[0].text, "analysis")  # type: ignore[union-attr]
        tasks_xml = extract_xml(orchestrator_response.content[0].text, "tasks")  # type: ignore[union-attr]
        tasks = parse_tasks(tasks_xml)
        worker_results = []
        for task_info in tasks:
            worker_input = self._format_prompt(
                self.worker_prompt,
                original_task=task,
                task_type=task_info["type"],
                task_description=task_info["description"],
                **context,
            )
            worker_response = await llm_call(worker_input)
            result = extract_xml(worker_response.content[0].text, "response")  # type: ignore[union-attr]
            worker_results.append(
                {
                    "type": task_info["type"],
                    "description": task_info["description"],
                    "result": result,
                    "message": worker_response,
                }
            )
        return {"analysis": analysis, "worker_results": worker_results, "orchestrator": orchestrator_response}


ORCHESTRATOR_PROMPT = """
Analyze this task and break it down into 2-3 distinct approaches:

Task: {task}

Return your response in this format:

<analysis>
Explain your understanding of the task and which variations would be valuable.
</analysis>

<tasks>
    <task>
    <type>formal</type>
    <description>Write a precise, technical version that emphasizes specifications</description>
    </task>
</tasks>
"""

WORKER_PROMPT = """
Generate content based on:
Task: {original_task}
Style: {task_type}
Guidelines: {task_description}

Return your response in this format:

<response>
Your content here, maintaining the specified style and fully addressing requirements.
</response>
"""


@port(
    "Write a product description for a new eco-friendly water bottle",
    example="Anthropic cookbook: patterns/agents orchestrator_workers (FlexibleOrchestrator, XML tasks)",
    answer="Two audiences: engineers want specs, shoppers want a story.",
)
async def main(task: str) -> tuple[Any, ...]:
    orchestrator = FlexibleOrchestrator(orchestrator_prompt=ORCHESTRATOR_PROMPT, worker_prompt=WORKER_PROMPT)
    results = await orchestrator.process(
        task=task,
        context={
            "target_audience": "environmentally conscious millennials",
            "key_features": ["plastic-free", "insulated", "lifetime warranty"],
        },
    )
    return (
        results["analysis"].strip(),
        [(r["type"], r["result"].strip()) for r in results["worker_results"]],
        results,
    )


@script(AGENT)
def _script(kind: str, request: Any) -> Any:
    prompt = request["messages"][0]["content"]
    if prompt.lstrip().startswith("Analyze"):
        body = (
            "<analysis>\nTwo audiences: engineers want specs, shoppers want a story.\n</analysis>\n\n"
            "<tasks>\n    <task>\n    <type>formal</type>\n"
            "    <description>Write a precise, technical version that emphasizes specifications"
            "</description>\n"
            "    </task>\n    <task>\n    <type>conversational</type>\n"
            "    <description>Write an engaging, friendly version that connects with readers</description>\n"
            "    </task>\n"
            "</tasks>"
        )
        return anthropic_message(1, [text(body)])
    style = prompt.split("Style: ")[1].split("\n")[0]
    content = {
        "formal": "The bottle: 750 ml, double-wall 18/8 steel, 24 h cold, plastic-free.",
        "conversational": "Meet the bottle that keeps your coffee hot and your conscience clear.",
    }[style]
    return anthropic_message(2 if style == "formal" else 3, [text(f"<response>\n{content}\n</response>")])
