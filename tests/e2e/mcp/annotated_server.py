"""An MCP server whose tools cover the ways a tool is judged (mcp/access.py), for the trust and mode tests.

Run as `python -m tests.e2e.mcp.annotated_server NAME`; every call appends "NAME TOOL" to the file named by
ANNOTATED_CALLS, so a test sees what actually ran. It offers one prompt, so the agent announces the server
when it is ready.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

NAME = sys.argv[1] if len(sys.argv) > 1 else "annotated"
server = MCPServer(NAME)

READ_ONLY = ToolAnnotations(read_only_hint=True)
DESTRUCTIVE = ToolAnnotations(destructive_hint=True)
# tool name → its annotations (None: none at all)
TOOLS: dict[str, ToolAnnotations | None] = {
    "read_state": READ_ONLY,  # says it only reads
    "annotate": None,  # says nothing
    "rotate_keys": DESTRUCTIVE,  # says it destroys, its name does not
    "terraform_apply": None,  # its name says it applies infrastructure
    "kubectl_delete": READ_ONLY,  # says it only reads, its name says it deletes
}


def _recorder(tool: str) -> Callable[[], str]:
    def record() -> str:
        with open(os.environ["ANNOTATED_CALLS"], "a", encoding="utf-8") as calls:
            calls.write(f"{NAME} {tool}\n")
        return f"{NAME} {tool} ran"

    return record


for _tool, _hints in TOOLS.items():
    server.add_tool(
        _recorder(_tool), name=_tool, description=f"The {_tool} tool.", annotations=_hints, structured_output=False
    )


@server.prompt(description="A prompt, so the agent announces the server once it is ready.")
def hello() -> str:
    return "hello"


if __name__ == "__main__":
    server.run("stdio")
