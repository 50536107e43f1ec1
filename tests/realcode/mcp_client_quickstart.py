"""Ports the Model Context Protocol's "Build an MCP client" quickstart (modelcontextprotocol.io,
Python: ``MCPClient`` with a ``ClientSession`` over stdio, ``process_query`` that lists the
server's tools with ``session.list_tools()``, calls ``self.anthropic.messages.create(...,
tools=available_tools)``, and for each ``tool_use`` block ``await self.session.call_tool(name,
args)``, appending the tool result and asking Claude again; ``final_text`` collected), against the
quickstart's weather server (``get_alerts``, ``get_forecast``).

As written there, with ``anthropic.AsyncAnthropic`` on the client (reopened on restore; it never
sends a request) and the SDK's ``Message``; the MCP session is a stand-in dataclass whose
``list_tools``/``call_tool`` round trips are tool suspensions, its results pydantic models in the
``mcp.types`` style.  The model calls are the other suspensions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from anthropic import AsyncAnthropic
from anthropic.types import Message
from pydantic import BaseModel

from tests.realcode._driver import model, script, tool
from tests.realcode._registry import port
from tests.realcode._sdk import anthropic_message, text, tool_use

AGENT = "mcp_client_quickstart"


class Tool(BaseModel):
    name: str
    description: str
    inputSchema: dict[str, Any]


class ListToolsResult(BaseModel):
    tools: list[Tool]


class TextContent(BaseModel):
    type: str = "text"
    text: str


class CallToolResult(BaseModel):
    content: list[TextContent]
    isError: bool = False


@dataclass
class ClientSession:
    """``mcp.ClientSession`` over the stdio transport: each request is a round trip to the server."""

    server_command: str

    async def initialize(self) -> None:
        await tool(AGENT, "initialize", server=self.server_command)

    async def list_tools(self) -> ListToolsResult:
        return ListToolsResult.model_validate(await tool(AGENT, "tools/list", server=self.server_command))

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        return CallToolResult.model_validate(await tool(AGENT, "tools/call", name=name, arguments=arguments))


class MCPClient:
    def __init__(self) -> None:
        self.session: ClientSession | None = None
        self.anthropic = AsyncAnthropic(base_url="http://127.0.0.1:9", max_retries=0)

    async def connect_to_server(self, server_script_path: str) -> list[str]:
        self.session = ClientSession(f"python {server_script_path}")
        await self.session.initialize()
        response = await self.session.list_tools()
        return [t.name for t in response.tools]

    async def process_query(self, query: str) -> str:
        assert self.session is not None
        messages: list[dict[str, Any]] = [{"role": "user", "content": query}]
        response = await self.session.list_tools()
        available_tools = [
            {"name": t.name, "description": t.description, "input_schema": t.inputSchema}
            for t in response.tools
        ]
        reply: Message = await model(
            AGENT,
            model="claude-3-5-sonnet-20241022",
            max_tokens=1000,
            messages=messages,
            tools=available_tools,
        )
        final_text = []
        assistant_message_content: list[Any] = []
        for content in reply.content:
            if content.type == "text":
                final_text.append(content.text)
                assistant_message_content.append(content)
            elif content.type == "tool_use":
                tool_name, tool_args = content.name, content.input
                result = await self.session.call_tool(tool_name, tool_args)  # type: ignore[arg-type]
                final_text.append(f"[Calling tool {tool_name} with args {tool_args}]")
                assistant_message_content.append(content)
                messages.append({"role": "assistant", "content": assistant_message_content})
                messages.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": content.id, "content": result.content}
                        ],
                    }
                )
                reply = await model(
                    AGENT,
                    model="claude-3-5-sonnet-20241022",
                    max_tokens=1000,
                    messages=messages,
                    tools=available_tools,
                )
                final_text.append(reply.content[0].text)  # type: ignore[union-attr]
        return "\n".join(final_text)


@port(
    "What are the weather alerts in California?",
    example="MCP docs: Build an MCP client quickstart (process_query with Claude and session.call_tool)",
    answer=(
        "I'll check the alerts for California.\n[Calling tool get_alerts with args {'state': 'CA'}]\n"
        "There is one active alert: a Red Flag Warning for the Sacramento Valley."
    ),
)
async def main(query: str) -> tuple[Any, ...]:
    client = MCPClient()
    tools = await client.connect_to_server("weather.py")
    response = await client.process_query(query)
    return (
        response,
        tools,
        client.session,
        (type(client.anthropic).__name__, str(client.anthropic.base_url)),
    )


@script(AGENT)
def _script(kind: str, *request: Any) -> Any:
    if kind == "tool":
        method, _arguments = request
        if method == "initialize":
            return {"protocolVersion": "2024-11-05"}
        if method == "tools/list":
            return {
                "tools": [
                    {
                        "name": "get_alerts",
                        "description": "Get weather alerts for a US state.",
                        "inputSchema": {"type": "object", "properties": {"state": {"type": "string"}}},
                    },
                    {
                        "name": "get_forecast",
                        "description": "Get weather forecast for a location.",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}},
                        },
                    },
                ]
            }
        return {
            "content": [
                {"type": "text", "text": "Event: Red Flag Warning\nArea: Sacramento Valley\nSeverity: Severe"}
            ]
        }
    messages = request[0]["messages"]
    if len(messages) == 1:
        return anthropic_message(
            1, [text("I'll check the alerts for California."), tool_use(1, 0, "get_alerts", {"state": "CA"})]
        )
    return anthropic_message(
        3, [text("There is one active alert: a Red Flag Warning for the Sacramento Valley.")]
    )
