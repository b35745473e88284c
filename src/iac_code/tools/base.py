"""The tool contract: what a tool declares, what it receives, and what it returns.

A call's `access()` (most often the tool's category) is what the permission policy judges
(agent/policy.py). Kind is the ACP ToolKind a client uses for icons. What a result shows is neutral data
(messages.py's blocks, a terminal id); acp/presenter.py alone turns it into ACP content.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from iac_code.messages import Block, Image, Message, Shown, ToolCall, tool_result
from iac_code.messages import Diff as Diff  # tools build their results with these
from iac_code.messages import Location as Location
from iac_code.tools.common import MAX_OUTPUT_CHARS as MAX_OUTPUT_CHARS  # every tool imports these from here
from iac_code.tools.common import ToolError as ToolError
from iac_code.tools.questions import Elicit
from iac_code.tools.workspace import roots_of

if TYPE_CHECKING:  # no cycle (backends builds on common.py, not here): only the cost of loading it, see _local_io
    from iac_code.tools.backends import WorkspaceIO

Category = Literal["read", "write", "execute"]
# How one call is judged by the permission policy: its tool's category, or something stricter decided
# from its arguments ("infra_change": a command, or an MCP tool, that changes real infrastructure) or from
# where the tool comes from (an MCP tool: "read" only when a server the user trusts marks it read-only;
# "claimed_read" when an untrusted server does, a claim nobody vouches for; "external" otherwise), or asked
# for in the middle of a call ("workspace_code": a read-only tool about to start code the repository ships,
# e.g. provider plugins). "infra_plan": a Terraform/OpenTofu apply the bash tool binds to a reviewed plan
# (tools/bound_apply.py): it may run to make the plan, then asks "infra_change" itself, the plan shown.
# "unguarded_execute": a command on a machine where the guard cannot hide the cloud credential files from
# it (no mount namespaces) while there are some: never run unasked, even when permissions are bypassed.
Access = Literal[
    "read",
    "claimed_read",
    "write",
    "execute",
    "unguarded_execute",
    "external",
    "infra_change",
    "infra_plan",
    "workspace_code",
]
Kind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]

# Runs a sub-agent on a self-contained task and returns its final answer.
RunSubagent = Callable[[str], Awaitable[str]]


@dataclass(frozen=True)
class AccessDetails:
    """What a question shows beside its title: a text (a plan's summary, why a change is not bound to a
    plan) and, for a reviewed plan, its contract (iac/plans/README.md), JSON-ready."""

    text: str = ""
    plan: dict[str, Any] | None = None
    # a guard's question: the command about to run (shell-quoted), which permission rules judge instead of
    # the call's own line (a script the line runs may run it)
    command: str = ""


class RequestAccess(Protocol):
    """Asks, in the middle of a call, for an access its tool's own did not cover: `subject` is what is judged
    and remembered ("iac_check:terraform-validate"), `question` the title the user reads, `details` what the
    question shows beside it. None: go ahead; otherwise the reason it may not (for the tool's result). A
    user who cancels stops the whole turn."""

    def __call__(
        self, subject: str, access: Access, question: str, details: AccessDetails | None = None
    ) -> Awaitable[str | None]: ...


# Shows what a running call is doing now: the client terminal its command runs in.
ReportProgress = Callable[["Terminal"], Awaitable[None]]


def required_text(args: dict[str, Any], name: str, *, blank_ok: bool = True) -> str:
    """The string argument `name`, or a ToolError the model can act on when it is missing or empty
    (or only whitespace, unless `blank_ok`: a grep pattern may be a single space, a command may not)."""
    value = args.get(name)
    if not isinstance(value, str) or not value or (not blank_ok and not value.strip()):
        raise ToolError(f"'{name}' is required")
    return value


def integer_arg(
    args: dict[str, Any], name: str, default: int, *, low: int, high: int | None = None, clamp: bool = False
) -> int:
    """The integer argument `name`, `default` when missing or null. Below `low` it is an error the model can
    act on, or with `clamp` it is raised to `low`; above `high` it is lowered to `high`. A float is
    truncated (models often send 10.0)."""
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"'{name}' must be an integer")
    number = int(value)
    if number < low:
        if not clamp:
            raise ToolError(f"'{name}' must be at least {low}")
        number = low
    return number if high is None else min(number, high)


@dataclass(frozen=True)
class Terminal:
    """A client terminal a command runs in: the client shows its output itself."""

    terminal_id: str


@dataclass
class ToolResult:
    text: str  # what the model receives
    is_error: bool = False
    diff: Diff | None = None  # for edits: shown to the client instead of the text
    raw_output: Any = None  # structured result for the client (JSON-serialisable, it is stored); None: the text
    locations: list[Location] = field(default_factory=list)  # what the result points at (e.g. findings)
    content: list[Block] = field(default_factory=list)  # what the client is shown after the text
    terminal_id: str | None = None  # the client terminal the command ran in (it shows the output)
    # Images for the model, beside `text` (checked by image_data.checked_image); a model that does not
    # read images gets a marker instead (providers/images.py). The client sees images through `content`.
    images: list[Image] = field(default_factory=list)
    exit_code: int | None = None  # a command's exit status, for the audit trail; None: not a command, or killed
    # Secret values only this call knows (name → value: the guard's token of a bash call), redacted from the
    # result with the session's own (agent/secrets.py) before anyone sees it; never recorded.
    secrets: dict[str, str] = field(default_factory=dict, repr=False)
    # The user was asked in plain text (a client without forms): the turn ends after this step, and their
    # answer is their next prompt.
    ends_turn: bool = False

    def record(self, call: ToolCall, *, title: str = "", kind: str = "") -> Message:
        """The result as the history keeps it: what the model reads, and what the client is shown (title
        and kind as the call was announced)."""
        shown = Shown(self.raw_output, self.diff, list(self.locations), list(self.content), self.terminal_id)
        return tool_result(
            call, self.text, is_error=self.is_error, images=self.images, title=title, kind=kind, shown=shown
        )


class ToolContext:
    """What a running tool may use. `workspace` is the session's cwd; no path may leave its roots (`roots`)."""

    def __init__(
        self,
        workspace: Path,
        run_subagent: RunSubagent | None = None,
        io: WorkspaceIO | None = None,
        progress: ReportProgress | None = None,
        request_access: RequestAccess | None = None,
        judged_path: Path | None = None,
        elicit: Elicit | None = None,
    ) -> None:
        self.workspace = workspace
        self.run_subagent = run_subagent  # set by the loop for the `agent` tool, not inside a sub-agent
        # Where files are read and written and commands run: the editor's (client_io.py) or, by default, the
        # local disk and processes. Paths are confined to the workspace by either.
        self.io: WorkspaceIO = io if io is not None else _local_io(workspace)
        self.progress = progress  # set by the loop for each call
        # set by the loop for each call; without it (a tool run outside a turn) every such request is refused
        self.request_access = request_access
        # A file tool's `path` as the permission rules judged it: resolved once, before the judge, by the loop.
        # The tool opens this path (without following links: confined_io.py), never a fresh resolution of
        # the argument, which a link flipped since the judgement would send elsewhere.
        self.judged_path = judged_path
        # set by the loop for each call: asks the user a structured question (tools/questions.py); without
        # it (a tool run outside a turn) there is no one to ask
        self.elicit = elicit

    @property
    def roots(self) -> tuple[Path, ...]:
        """Where paths may lead, resolved: the cwd, then the session's additional directories (its io's: the
        backend that opens them confines them to the same)."""
        return roots_of(self.io.workspace)


def _local_io(workspace: Path) -> WorkspaceIO:
    # Loaded with the first context made without an io: what the local disk and processes need (threads,
    # system/processes) stays off the path of the early answers on stdio, which import this module.
    from iac_code.tools.backends import LocalIO

    return LocalIO(workspace)


class Tool(Protocol):
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema the model sees
    category: Category
    kind: Kind

    def title(self, args: dict[str, Any]) -> str:
        """A short human title for the client, e.g. "Write main.tf", "Run terraform validate"."""
        ...

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        """Absolute paths the call touches (for the client's follow-along), may be empty."""
        ...

    def access(self, args: dict[str, Any]) -> Access:
        """How this call is judged by the permission policy (agent/policy.py): most tools return their
        category; a tool may judge a call stricter from its arguments (e.g. "infra_change")."""
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Do the work. Raise ToolError for failures the model should see; cancellable."""
        ...
