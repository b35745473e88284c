"""The system prompt: an infrastructure-as-code specialist, told where it works and the project's own rules."""

from __future__ import annotations

import os
import platform
from datetime import date
from pathlib import Path

from iac_code.agent.policy import Mode
from iac_code.agent.workspace import Workspace
from iac_code.skills.discovery import SkillCatalog

# Instruction file names, first match wins in each directory. Read from the user's config dir, then
# every directory from the repository root down to the workspace (nearest last, so it wins a conflict);
# capped as a whole so huge files cannot crowd out the work, the nearest files keeping their share first.
INSTRUCTION_FILES = ("AGENTS.md", "IAC-CODE.md")
MAX_INSTRUCTION_CHARS = 20_000
TRUNCATED = "\n[… truncated]"
# The skills' names and descriptions (their bodies are loaded with the skill tool), nearest first, capped so
# that many skills cannot crowd the prompt; the same for every turn of a session (it is part of a cached prefix).
MAX_SKILL_LIST_CHARS = 2_000
SKILLS_HEADING = """\
Skills (know-how kept in files): when a skill's description applies to the task, call the `skill` tool with
its name before you start, and follow its instructions; it also lists the skill's reference files, which
skill(name, reference) reads. Users may also run a skill as the slash command /<name>."""

ROLE = """\
You are iac-code, an expert infrastructure-as-code engineer. You write, fix, review and explain
Terraform/OpenTofu, Alibaba Cloud ROS templates, AWS CloudFormation, Kubernetes manifests, Helm charts
and the scripts around them.

How you work:
- Read the relevant files before changing them; keep to the project's existing layout, naming, provider
  versions and module structure.
- Prefer small, reviewable edits (edit_file) over rewriting whole files.
- Before writing a Terraform/OpenTofu resource or data source, or changing its arguments, look its
  schema up with provider_schema (the provider version the lock file pins) instead of recalling it.
- Never put secrets (access keys, passwords, tokens) in code: use variables, secret stores or
  environment variables, and mark sensitive variables as such.
- Make resources safe by default: least-privilege IAM/RAM policies, no 0.0.0.0/0 ingress unless asked,
  encryption at rest, deletion protection for stateful resources, tags.
- Validate your work when the tools exist (terraform fmt/validate, tflint, ros/cfn-lint, kubectl
  --dry-run=client, kubeconform); say clearly when you could not validate.
- Never run commands that change real infrastructure (terraform apply/destroy, kubectl apply/delete,
  cloud CLIs that create or delete resources) unless the user explicitly asks for it. Before proposing a
  Terraform/OpenTofu apply, run iac_plan and tell the user its counts and what it would destroy or replace.
- Writing files and running commands need the user's approval; if a tool call is denied, do not retry it
  the same way: explain what you wanted to do and continue without it.
- For work with several steps, keep a plan with update_plan: the whole list at the start, then mark
  each step in_progress when you start it and completed when it is done. Skip it for one-step requests.
- Be concise. Show file paths relative to the workspace.
"""


PLAN_MODE = """\
The session is in plan mode: investigate and propose, change nothing. write_file and edit_file are
refused, and so are commands that change real infrastructure; read, search, run read-only commands,
iac_check and iac_plan to learn the current state and what is wrong with it. For each Terraform/OpenTofu
root module the work touches, run iac_plan (refresh_only for drift) and put its counts line ("2 to add,
1 to change, 1 to replace, 1 to destroy") into the plan, naming every resource it would destroy or
replace and why. End your answer with a concrete plan under a "Plan" heading: numbered steps naming
each file to change and how, the commands to validate the change (fmt, validate, iac_check, iac_plan)
and to apply it, the risks (what could be replaced, destroyed or interrupted) and how to roll back, and
what you need the user to decide. The user switches to another mode to carry it out.
"""


def mode_instructions(mode: Mode) -> str:
    """What the system prompt adds for the session's mode ("" for the modes that need nothing)."""
    return PLAN_MODE if mode == "plan" else ""


def build_system_prompt(workspace: Workspace, *, today: date | None = None, config_dir: Path | None = None) -> str:
    """The role, the environment, the instruction files (the user's in `config_dir`, the project's) and the
    workspace's skills."""
    parts = [
        ROLE,
        "Environment:\n"
        f"- Workspace (all file paths are relative to it; you cannot leave it): {workspace.root}\n"
        f"{_additional_roots(workspace)}"
        f"- Platform: {platform.system()} {platform.machine()}\n"
        f"- Date: {(today or date.today()).isoformat()}",
    ]
    instructions = _project_instructions(workspace, config_dir)
    if instructions:
        parts.append(instructions)
    if workspace.skills.skills:
        parts.append(skill_list(workspace.skills))
    return "\n\n".join(parts)


def skill_list(skills: SkillCatalog) -> str:
    """The heading, then one line per skill, nearest first, then how many were left out: MAX_SKILL_LIST_CHARS
    in all."""
    lines = [SKILLS_HEADING]
    size = len(SKILLS_HEADING)
    for index, skill in enumerate(skills.skills):
        line = f"- {skill.name}: {skill.description}"
        room = MAX_SKILL_LIST_CHARS - (0 if index == len(skills.skills) - 1 else len(_left_out(len(skills.skills))))
        if size + 1 + len(line) > room:
            lines.append(_left_out(len(skills.skills) - index))
            break
        lines.append(line)
        size += 1 + len(line)
    return "\n".join(lines)


def _left_out(count: int) -> str:
    return f"({count} more skill{'s' if count > 1 else ''} left out of this list for space.)"


def instruction_files(workspace: Workspace, config_dir: Path | None = None) -> list[Path]:
    """The instruction files that apply, most general first: the user's, then the repository root's
    down to the workspace's. Outside a repository only the workspace's own is read. The additional directories'
    come before the cwd's: the cwd's are nearer, and win."""
    directories = [*([config_dir] if config_dir else []), *workspace.additional_project_dirs[::-1]]
    directories += workspace.project_dirs[::-1]
    found = [_first_file(directory) for directory in directories]
    return [path for path in found if path is not None]


def _first_file(directory: Path) -> Path | None:
    return next((directory / name for name in INSTRUCTION_FILES if (directory / name).is_file()), None)


def _project_instructions(workspace: Workspace, config_dir: Path | None) -> str:
    budget = MAX_INSTRUCTION_CHARS
    sections: list[str] = []
    for path in reversed(instruction_files(workspace, config_dir)):  # nearest first: it keeps its share
        if budget <= 0:
            break
        try:
            with path.open(encoding="utf-8", errors="replace") as file:
                text = file.read(budget + 1)
        except OSError:
            continue
        if len(text) > budget:
            text = text[:budget] + TRUNCATED
        budget -= len(text)
        sections.append(f"Instructions from {_shown(path, workspace, config_dir)}:\n{text}")
    if not sections:
        return ""
    heading = "Project instructions (follow them; when they conflict, the later ones, nearer the workspace, win):"
    return "\n\n".join([heading, *reversed(sections)])


def _shown(path: Path, workspace: Workspace, config_dir: Path | None) -> str:
    if config_dir is not None and path.parent == config_dir:
        return f"{path} (your own, for every project)"
    if path.parent in workspace.additional_project_dirs:  # an additional directory's: by its own path
        return str(path)
    return os.path.relpath(path, workspace.root.resolve())


def _additional_roots(workspace: Workspace) -> str:
    """The additional directories, named by absolute path (the only way a path reaches them)."""
    if not workspace.additional:
        return ""
    listed = ", ".join(str(root) for root in workspace.additional)
    return f"- Additional directories (part of the workspace too; name their files by absolute path): {listed}\n"
