"""Making a saved plan: `<tool> plan -input=false -out=<file>` in a root module, then `<tool> show -json <file>`.

`make_plan` is the one way to make one (the iac_plan tool; later, bash's bound apply), `apply_argv` the one
way to apply it (given the store's `applied_copy`: the bytes whose sha256 was shown, in a place of their
own). Never `init`: it downloads providers and modules (network, and code to run), which is a command the
user approves, not a side effect of a read-only look. The child runs like every command the agent starts
(`system.processes`: its own process group, under the reaper so provider plugins die with it, the
command environment without the agent's keys).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iac_code.iac.handed_dirs import Problem, terraform_dir_problems
from iac_code.iac.plans.diagnostics import diagnostics_text, redacted, unredacted_text
from iac_code.iac.plans.store import PlanStore
from iac_code.iac.plans.summary import PlanDocumentError, plan_contract, summary_text
from iac_code.iac.plans.variables import unset_variables
from iac_code.iac.safe_read import file_problem, read_beneath
from iac_code.system.processes import command_environment, communicate_within, contained, spawn, wait_for_exit

PLAN_TIMEOUT = 900.0  # seconds: a large module against a slow cloud API
SHOW_TIMEOUT = 120.0
ERROR_CHARS = 2_000  # of terraform's own error text in a failed call
CONFIGURATION_SUFFIXES = (".tf", ".tf.json", ".tofu", ".tofu.json")
# Keep terraform from asking, colouring, or phoning home for version checks.
PLAN_ENVIRONMENT = {"TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1", "TF_INPUT": "0"}


class PlanFailed(Exception):
    """No plan: the message is terraform's own error text (trimmed) and what to do, for the model and user;
    `unset`: the input variables terraform said have no value (variables.py)."""

    def __init__(self, message: str, unset: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.unset = tuple(unset)


@dataclass(frozen=True)
class PlanRequest:
    directory: Path  # the root module, absolute
    destroy: bool = False
    refresh_only: bool = False
    refresh: bool = True  # False: -refresh=false (the state as recorded, the real objects not read)
    targets: Sequence[str] = ()
    replace: Sequence[str] = ()
    var_files: Sequence[str] = ()  # as given (relative to the directory, like terraform's own -var-file)
    variables: Mapping[str, str] = field(default_factory=dict)

    def flags(self) -> list[str]:
        flags = []
        if self.destroy:
            flags.append("-destroy")
        if self.refresh_only:
            flags.append("-refresh-only")
        if not self.refresh:
            flags.append("-refresh=false")
        flags += [f"-target={address}" for address in self.targets]
        flags += [f"-replace={address}" for address in self.replace]
        flags += [f"-var-file={path}" for path in self.var_files]
        flags += [f"-var={name}={value}" for name, value in self.variables.items()]
        return flags


@dataclass(frozen=True)
class Plan:
    contract: dict[str, Any]  # the plan contract (README.md), JSON-ready
    text: str  # the summary the model reads: counts line, then one line per changed resource

    @property
    def plan_file(self) -> Path:
        return Path(self.contract["planFile"])

    @property
    def changes_nothing(self) -> bool:
        return not any(self.contract["counts"].values())


def configuration_files(directory: Path) -> list[str]:
    """The root module's own configuration files (names), sorted."""
    try:
        with os.scandir(directory) as entries:
            return sorted(e.name for e in entries if e.name.endswith(CONFIGURATION_SUFFIXES) and e.is_file())
    except OSError:
        return []


def choose_tool(directory: Path, environment: Mapping[str, str]) -> tuple[str, str]:
    """(tool name, program path): `tofu` when the directory says so (`.tofu` files, a lock file from the
    OpenTofu registry) and it is installed, or when it is the only one installed; else `terraform`."""
    path = environment.get("PATH", os.defpath)
    found = {name: shutil.which(name, path=path) for name in ("terraform", "tofu")}
    wants_tofu = _says_tofu(directory)
    for name in ("tofu", "terraform") if wants_tofu else ("terraform", "tofu"):
        program = found[name]
        if program is not None:
            return name, program
    raise PlanFailed(
        "Neither terraform nor tofu is on PATH. Install Terraform or OpenTofu (or put it on PATH) and plan again."
    )


def _says_tofu(directory: Path) -> bool:
    if any(name.endswith((".tofu", ".tofu.json")) for name in configuration_files(directory)):
        return True
    try:  # beneath the directory, a regular file only: a FIFO the repository ships must not block the caller
        lock = read_beneath(directory, ".terraform.lock.hcl", 1 << 20)
    except OSError:  # UnsafeFile too: a lock file too big, a symlink or a FIFO says nothing of OpenTofu
        return False
    return b"registry.opentofu.org" in lock


async def make_plan(request: PlanRequest, store: PlanStore, base_environment: Mapping[str, str] | None = None) -> Plan:
    """Plan `request` into a new private file of `store` and summarise it. PlanFailed with terraform's error."""
    directory = request.directory
    if not configuration_files(directory):
        raise PlanFailed(f"No Terraform configuration (.tf files) in {directory}: plan a root module directory.")
    if problems := handed_problems(request):
        listed = "; ".join(f"{name} ({why})" for name, why in problems[:10])
        raise PlanFailed(f"Not planned: {directory} holds files terraform must not be handed: {listed}.")
    plan_file = store.new_plan_file()
    # terraform runs where the agent's state is out of reach (the guard's namespace), but for the file it writes
    environment = command_environment(base_environment, kept=[str(plan_file)])
    environment.update(PLAN_ENVIRONMENT)
    try:
        tool, program = choose_tool(directory, environment)
        code, messages, errors = await _run(
            [
                program,
                "plan",
                "-input=false",
                "-no-color",
                "-lock=false",
                "-json",
                f"-out={plan_file}",
                *request.flags(),
            ],
            directory,
            environment,
            PLAN_TIMEOUT,
        )
        if code != 0:
            raise PlanFailed(_failure(tool, "plan", directory, messages, errors), unset_variables(messages))
        code, shown, errors = await _run(
            [program, "show", "-json", "-no-color", str(plan_file)], directory, environment, SHOW_TIMEOUT
        )
        if code != 0:
            raise PlanFailed(_failure(tool, "show", directory, "", errors))
        try:
            document = json.loads(shown)
            contract = plan_contract(
                document,
                tool=tool,
                directory=str(directory),
                plan_file=str(plan_file),
                sha256=file_sha256(plan_file),
                refresh_only=request.refresh_only,
            )
        except (ValueError, PlanDocumentError) as exc:
            raise PlanFailed(f"{tool} show -json gave no plan document ({exc}).") from None
    except BaseException:
        store.discard(plan_file)
        raise
    store.remember(contract)
    return Plan(contract, summary_text(contract))


def handed_problems(request: PlanRequest) -> list[Problem]:
    """The files terraform would open for this plan that must not be handed to it (a FIFO would hang it for
    the whole timeout, a symlink to /dev/zero exhaust its memory): what iac_check refuses too, plus the local
    state and the var files (a large state is fine: no size cap there)."""
    problems = terraform_dir_problems(request.directory)
    for name in ("terraform.tfstate", *request.var_files):
        path = request.directory / name
        known = any(name == listed for listed, _ in problems)
        if not known and os.path.lexists(path) and (why := file_problem(path)) is not None:
            problems.append((name, why))
    return problems


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def apply_argv(
    contract: Mapping[str, Any], plan_file: Path, program: str | None = None, options: Sequence[str] = ()
) -> list[str]:
    """The command that applies `plan_file`, the reviewed plan's private copy (PlanStore.applied_copy), run in
    contract["directory"]. `program`: the binary's path (default: the tool's name, looked up on PATH);
    `options`: apply's own that change nothing of what is applied (`-lock-timeout=…`, `-parallelism=…`,
    `-no-color`)."""
    return [program or str(contract["tool"]), "apply", "-input=false", *options, str(plan_file)]


async def _run(argv: list[str], cwd: Path, environment: Mapping[str, str], timeout: float) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `argv`; PlanFailed on a timeout. Cancelling kills its whole group."""
    process = await spawn(
        *contained(*argv),
        cwd=str(cwd),
        env=dict(environment),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await communicate_within(process, timeout)
    except TimeoutError:
        raise PlanFailed(f"{Path(argv[0]).name} {argv[1]} did not finish within {timeout:g} s.") from None
    await wait_for_exit(process, 1.0)
    return process.returncode or 0, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")


def _failure(tool: str, step: str, directory: Path, messages: str, errors: str) -> str:
    """What the model reads of a failed step: terraform's diagnostics (`messages`: its -json output), else its
    error text, quoted values redacted either way (diagnostics.py), and what to do."""
    text = diagnostics_text(messages) or redacted(trimmed_error(errors))
    text = text or f"{tool} {step} failed without saying why."
    advice = f"Fix the configuration in {directory} and plan again."
    if says_not_initialized(f"{unredacted_text(messages)}\n{errors}"):
        advice = (
            f"The directory is not initialized: run `{tool} init` in {directory} (it downloads providers and "
            "modules, so it is a command the user approves), then plan again."
        )
    return f"{tool} {step} failed in {directory}:\n{text}\n{advice}"


def says_not_initialized(error: str) -> bool:
    """Whether terraform's (or tofu's) error asks for `init` to be run first."""
    lowered = error.lower()
    return "init" in lowered and ("terraform init" in lowered or "tofu init" in lowered or "initializ" in lowered)


def trimmed_error(errors: str) -> str:
    """terraform's diagnostics without the box drawing, blank runs and the CLI-config warning, capped."""
    lines: list[str] = []
    for raw in errors.splitlines():
        line = raw.lstrip("╷╵│ ").rstrip() if raw[:1] in "╷╵│" else raw.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    text = "\n".join(lines).strip()
    if len(text) > ERROR_CHARS:
        text = text[: ERROR_CHARS - 1] + "…"
    return text
