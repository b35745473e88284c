"""iac_plan: what a Terraform/OpenTofu apply would do, as a reviewed plan (read-only, in every mode).

It runs `terraform plan -input=false -out=<private file>` then `show -json` (iac_code.iac.plans) and answers
with the plan contract in rawOutput["plan"], the .tf lines declaring the changed resources as locations, and
for the model the counts and one line per change, destroys and replaces first. It never runs `init`. Before
terraform starts the provider plugins a directory's `.terraform/` holds (code the repository may ship), it
asks, the way iac_check does.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from iac_code.iac.plans.locations import address_locations
from iac_code.iac.plans.runner import Plan, PlanFailed, PlanRequest, make_plan
from iac_code.iac.plans.store import PlanStore
from iac_code.iac.plans.summary import TEXT_ORDER
from iac_code.messages import ToolCall
from iac_code.system.processes import unreadable_paths
from iac_code.tools.base import Access, Category, Kind, Location, ToolContext, ToolError, ToolResult
from iac_code.tools.plan_variables import values_for_unset
from iac_code.tools.workspace import (
    Roots,
    path_argument_locations,
    relative_to_workspace,
    resolve_in_workspace,
    root_of,
    shorten,
)

# The paths a session's Read rules deny, as they exist now (agent/read_denials.py)
Unreadable = Callable[[], list[str]]
MAX_LOCATIONS = 50
PLUGIN_FOLDERS = ("providers", "plugins")  # under .terraform/: where init installs providers (plugins: < 0.13)
NO_ONE_TO_ASK = "no one to ask"
# what an "allow always" remembers, under the asking tool's name; --allow-tools names it
PROVIDERS_SUBJECT = "{}:providers"
ADDRESS_LIST = {"type": "array", "items": {"type": "string"}}


class IacPlanTool:
    name = "iac_plan"
    category: Category = "read"
    kind: Kind = "read"
    description = (
        "Preview what applying a Terraform/OpenTofu root module would do: runs `terraform plan` (or tofu) into a "
        "saved plan file and returns the counts (to add, change, replace, destroy, forget, move) and every changed "
        "resource with its reason, destroys and replaces first. Read-only: nothing is applied, allowed in every "
        "mode. Use it before proposing or running an apply, and put its counts into plans. Does not run "
        "`terraform init`: an uninitialized directory fails with what to do. refresh_only: report drift instead."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Root module directory, or a file inside it, relative to the workspace (default: .).",
            },
            "destroy": {"type": "boolean", "description": "Plan destroying everything (-destroy)."},
            "refresh_only": {
                "type": "boolean",
                "description": "Only compare the state with the real infrastructure (-refresh-only): drift.",
            },
            "targets": {**ADDRESS_LIST, "description": "Resource addresses to limit the plan to (-target)."},
            "replace": {**ADDRESS_LIST, "description": "Resource addresses to force replacing (-replace)."},
            "var_files": {**ADDRESS_LIST, "description": "Variable files, relative to the module (-var-file)."},
            "vars": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Input variables (-var name=value).",
            },
        },
    }

    def __init__(self, plans_dir: Path | None = None, unreadable: Unreadable | None = None) -> None:
        """`plans_dir`: the session's private folder for plan files (store.session_plans_dir); None: a
        temporary one. `unreadable`: the paths the session's Read rules deny (terraform runs where it cannot
        read them)."""
        self.store = PlanStore(plans_dir)
        self.unreadable = unreadable

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        path = str(args.get("path") or ".")
        what = "Plan drift" if args.get("refresh_only") else ("Plan destroy" if args.get("destroy") else "Plan")
        return what if path in (".", "./") else f"{what} {shorten(path, 50)}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return path_argument_locations(ctx.roots, args)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        request = plan_request(args, ctx.roots)
        if (refusal := await ask_for_plugins(request.directory, ctx)) is not None:
            rel = relative_to_workspace(ctx.roots, request.directory)
            raise ToolError(f"Not planned: {refusal.rstrip('.')} (terraform plan would start {plugins_words(rel)}).")
        given: dict[str, str] = {}
        try:
            plan = await self._plan(request)
        except PlanFailed as failure:  # input variables without a value are asked for (plan_variables.py)
            shown_as = relative_to_workspace(ctx.roots, request.directory)
            given = await values_for_unset(failure, request.directory, shown_as, ctx)
            request = replace(request, variables={**request.variables, **given})
            try:
                plan = await self._plan(request)
            except PlanFailed as again:
                raise ToolError(f"{again}\n{given_text(given)}") from None
        root = root_of(ctx.roots, request.directory)
        changes = sorted(plan.contract["resources"], key=lambda entry: TEXT_ORDER.index(entry["action"]))
        places = address_locations(
            root, request.directory, ((e["address"], e["action"]) for e in changes), MAX_LOCATIONS
        )
        return ToolResult(
            text=f"{plan.text}\n\n{given_text(given)}" if given else plan.text,
            raw_output={"plan": plan.contract},
            locations=[Location(path=str(path), line=line) for path, line in places],
        )

    async def _plan(self, request: PlanRequest) -> Plan:
        with unreadable_paths(await denied_paths(self.unreadable)):
            return await make_plan(request, self.store)


def given_text(given: dict[str, str]) -> str:
    values = ", ".join(f"{name}={value}" for name, value in given.items())
    return f"Planned with the values the user gave for the variables that had none: {values} (pass them in `vars`)."


def plan_request(args: dict[str, Any], workspace: Roots) -> PlanRequest:
    """The arguments as a PlanRequest for a root module inside the workspace; ToolError the model can act on."""
    path = args.get("path") or "."
    if not isinstance(path, str):
        raise ToolError("'path' must be a string")
    target = resolve_in_workspace(workspace, path)
    if not target.exists():
        raise ToolError(f"path not found: {path}")
    directory = target if target.is_dir() else target.parent
    var_files = _strings(args, "var_files")
    confine_var_files(workspace, directory, var_files)
    variables = args.get("vars") or {}
    if not isinstance(variables, dict) or not all(isinstance(k, str) for k in variables):
        raise ToolError("'vars' must be an object of variable names to values")
    return PlanRequest(
        directory=directory,
        destroy=_flag(args, "destroy"),
        refresh_only=_flag(args, "refresh_only"),
        targets=_strings(args, "targets"),
        replace=_strings(args, "replace"),
        var_files=var_files,
        variables={name: value if isinstance(value, str) else json.dumps(value) for name, value in variables.items()},
    )


async def denied_paths(unreadable: Unreadable | None) -> list[str]:
    """The paths `unreadable` names now (a walk of the rules' globs: on a thread)."""
    return await asyncio.to_thread(unreadable) if unreadable is not None else []


def confine_var_files(workspace: Roots, directory: Path, var_files: list[str]) -> None:
    """ToolError unless each var file (relative to the root module `directory`, as terraform reads it) is in
    the workspace: terraform quotes a var file's lines in its errors."""
    for var_file in var_files:
        resolve_in_workspace(workspace, str(directory / var_file))


def preview_call(arguments: str) -> ToolCall:
    """The call /preview [dir] makes on the user's behalf."""
    path = arguments.strip() or "."
    return ToolCall(id=f"preview_{uuid.uuid4().hex[:16]}", name=IacPlanTool.name, arguments={"path": path})


async def ask_for_plugins(
    directory: Path, ctx: ToolContext, asker: str = "iac_plan", command: str = "terraform plan"
) -> str | None:
    """None to go ahead; else why not. `command` (run by the tool `asker`) starts every provider in
    `.terraform/`: ask first, like iac_check."""
    data = directory / ".terraform"
    if not any(_has_entries(data / folder) for folder in PLUGIN_FOLDERS):
        return None
    rel = relative_to_workspace(ctx.roots, directory)
    if ctx.request_access is None:
        return NO_ONE_TO_ASK
    question = f"{asker} wants to run {command}, which starts {plugins_words(rel)}"
    return await ctx.request_access(PROVIDERS_SUBJECT.format(asker), "workspace_code", question)


def plugins_words(rel: str) -> str:
    return f"the provider plugins in {PurePosixPath(rel, '.terraform')}"


def _has_entries(folder: Path) -> bool:
    try:
        return any(True for _ in folder.iterdir())
    except OSError:
        return False


def _flag(args: dict[str, Any], name: str) -> bool:
    value = args.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ToolError(f"'{name}' must be true or false")
    return value


def _strings(args: dict[str, Any], name: str) -> list[str]:
    value = args.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v and not v.startswith("-") for v in value):
        raise ToolError(f"'{name}' must be a list of non-empty strings")
    return list(value)
