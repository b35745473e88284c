"""The tool set a session starts with. Permissions follow each tool's `category`."""

from __future__ import annotations

from pathlib import Path

from iac_code.iac.checkers.terraform import TerraformValidateChecker
from iac_code.iac.checkers.tflint import TflintChecker
from iac_code.skills.discovery import SkillCatalog
from iac_code.tools.ask_user import AskUserTool
from iac_code.tools.base import Tool
from iac_code.tools.files import EditFileTool, ListFilesTool, ReadFileTool, WriteFileTool
from iac_code.tools.iac_check import IacCheckTool
from iac_code.tools.iac_plan import PROVIDERS_SUBJECT, IacPlanTool, Unreadable
from iac_code.tools.provider_schema import ProviderSchemaTool
from iac_code.tools.search import GlobTool, GrepTool
from iac_code.tools.shell import BashTool
from iac_code.tools.skill import SkillTool
from iac_code.tools.subagent import AgentTool
from iac_code.tools.update_plan import UpdatePlanTool
from iac_code.tools.web import WebFetchTool


def default_tools(
    iac_cache_path: Path | None = None,
    plans_dir: Path | None = None,
    schema_cache_path: Path | None = None,
    skills: SkillCatalog | None = None,
    unreadable: Unreadable | None = None,
) -> dict[str, Tool]:
    """Fresh instances of every built-in tool, keyed by the name the model calls. `iac_cache_path`:
    where iac_check keeps its results (Settings.iac_cache_path; None: in memory only); `plans_dir`: the
    session's private folder for iac_plan's plan files (None: a temporary one); `schema_cache_path`: where
    provider_schema keeps schemas (Settings.provider_schema_cache_path; None: in memory only); `skills`: the
    session's skills, which the `skill` tool loads (none: no such tool); `unreadable`: the paths the session's
    Read rules deny, which the programs iac_plan and iac_check start (and a bound apply's plan) cannot read."""
    plans = IacPlanTool(plans_dir, unreadable)
    tools: list[Tool] = [
        ReadFileTool(),
        ListFilesTool(),
        GlobTool(),
        GrepTool(),
        IacCheckTool(cache_path=iac_cache_path, unreadable=unreadable),
        plans,
        ProviderSchemaTool(schema_cache_path),
        WriteFileTool(),
        EditFileTool(),
        BashTool(plans.store, unreadable),  # an apply naming a plan iac_plan made reviews that plan
        WebFetchTool(),
        AgentTool(),
        UpdatePlanTool(),
        AskUserTool(),
    ]
    if skills is not None and skills.skills:
        tools.append(SkillTool(skills))
    return {tool.name: tool for tool in tools}


def permission_subjects() -> list[str]:
    """Every name a permission is remembered under, as `--allow-tools` takes them: the built-in tools, then
    what a running call asks for on its own (code the workspace ships). MCP tools come and go with their
    servers, so their names (`mcp__server__tool`) are not listed here."""
    tools = list(default_tools())
    checkers = [f"{IacCheckTool.name}:{c.name}" for c in (TerraformValidateChecker, TflintChecker)]
    plugins = [PROVIDERS_SUBJECT.format(tool) for tool in (IacPlanTool.name, ProviderSchemaTool.name)]
    return [*tools, *checkers, *plugins]
