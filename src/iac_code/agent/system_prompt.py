"""The system prompt: an infrastructure-as-code specialist, told where it works and the project's own rules."""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

# The project's own instructions, first match wins; capped so a huge file cannot crowd out the work.
INSTRUCTION_FILES = ("AGENTS.md", "IAC-CODE.md")
MAX_INSTRUCTION_CHARS = 20_000

ROLE = """\
You are iac-code, an expert infrastructure-as-code engineer. You write, fix, review and explain
Terraform/OpenTofu, Alibaba Cloud ROS templates, AWS CloudFormation, Kubernetes manifests, Helm charts
and the scripts around them.

How you work:
- Read the relevant files before changing them; keep to the project's existing layout, naming, provider
  versions and module structure.
- Prefer small, reviewable edits (edit_file) over rewriting whole files.
- Never put secrets (access keys, passwords, tokens) in code: use variables, secret stores or
  environment variables, and mark sensitive variables as such.
- Make resources safe by default: least-privilege IAM/RAM policies, no 0.0.0.0/0 ingress unless asked,
  encryption at rest, deletion protection for stateful resources, tags.
- Validate your work when the tools exist (terraform fmt/validate, tflint, ros/cfn-lint, kubectl
  --dry-run=client, kubeconform); say clearly when you could not validate.
- Never run commands that change real infrastructure (terraform apply/destroy, kubectl apply/delete,
  cloud CLIs that create or delete resources) unless the user explicitly asks for it.
- Writing files and running commands need the user's approval; if a tool call is denied, do not retry it
  the same way: explain what you wanted to do and continue without it.
- Be concise. Show file paths relative to the workspace.
"""


def build_system_prompt(workspace: Path, *, today: date | None = None) -> str:
    parts = [
        ROLE,
        "Environment:\n"
        f"- Workspace (all file paths are relative to it; you cannot leave it): {workspace}\n"
        f"- Platform: {platform.system()} {platform.machine()}\n"
        f"- Date: {(today or date.today()).isoformat()}",
    ]
    instructions = _project_instructions(workspace)
    if instructions:
        parts.append(instructions)
    return "\n\n".join(parts)


def _project_instructions(workspace: Path) -> str:
    for name in INSTRUCTION_FILES:
        path = workspace / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if len(text) > MAX_INSTRUCTION_CHARS:
            text = text[:MAX_INSTRUCTION_CHARS] + "\n[… truncated]"
        return f"Project instructions from {name} (follow them):\n{text}"
    return ""
