"""One type's schema for a module directory: from the store when it holds it, else from terraform.

What a schema depends on is the key of its document: the lock file's digest (the pinned providers) with
the tool and its version. The built-in provider (`terraform_data`, `terraform_remote_state`) has no lock
entry and depends on the binary alone: its document is made in a private directory that uses it, keyed by
the tool and its version, so it is there whether or not the module uses it yet, and a module without a lock
file still gets it. A warm call reads the lock file, stats the binary and reads one row: terraform does not
run (the binary's version is stored by its identity too).

Not initialized: a lock file without `.terraform/` (asked only when the document must be made), a lock file
terraform finds stale, or no lock file and a type the built-in provider lacks.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import os
import shutil
import tempfile
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from iac_code.iac.checker import is_initialized
from iac_code.iac.handed_dirs import terraform_dir_problems
from iac_code.iac.plans.runner import PlanFailed, choose_tool, configuration_files
from iac_code.iac.safe_read import UnsafeFile
from iac_code.iac.schemas.command import CommandFailed, binary_version, schema_document
from iac_code.iac.schemas.document import DocumentError, document_rows
from iac_code.iac.schemas.lock import LOCK_FILE, LockFile, read_lock_file
from iac_code.iac.schemas.shape import type_schema
from iac_code.iac.schemas.store import CLOSEST, SchemaStore
from iac_code.system.processes import command_environment
from iac_code.system.threads import DaemonPool

FORMAT = "1"  # what the store holds per type; a change makes new keys
BUILTIN_MODULE = 'resource "terraform_data" "schema" {}\n'  # enough for terraform to list the built-in provider
KINDS = {"resource": "resource type", "data": "data source"}
T = TypeVar("T")

# Called before terraform would start the provider plugins a directory's `.terraform/` holds: None to go on,
# else why not (the tool asks the user, like iac_plan).
BeforePlugins = Callable[[Path], Awaitable[str | None]]

_POOL = DaemonPool(2, "provider-schemas")  # SQLite and JSON work off the event loop, never on its executor
# One making of a document at a time per key: sessions asking at once share one terraform run and one parse.
_MAKING: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


class SchemaUnavailable(Exception):
    """No schema: the message says why and what to do, for the model and the user."""


@dataclass(frozen=True)
class SchemaQuery:
    workspace: Path
    directory: Path  # the module directory, absolute and inside the workspace
    kind: str  # "resource" | "data"
    name: str


@dataclass(frozen=True)
class _Binary:
    tool: str  # "terraform" | "tofu"
    version: str


class ProviderSchemas:
    def __init__(self, store: SchemaStore, base_environment: Mapping[str, str] | None = None) -> None:
        self.store = store
        self._base = base_environment

    async def find(self, query: SchemaQuery, before_plugins: BeforePlugins) -> dict[str, Any]:
        """The type's rawOutput (shape.type_schema); SchemaUnavailable otherwise."""
        directory = query.directory
        tool, real_program = await _off_loop(self._tool_for, directory)  # it reads the module's files
        lock, identity, version = await _off_loop(self._local_facts, query, real_program)
        binary = _Binary(tool, version or await self._version(tool, identity, directory))
        keys = [_key(binary, "lock", lock.sha256)] if lock is not None else []
        if lock is not None and (found := await self._look_in(keys[0], query)) is None:
            async with _making(keys[0]):
                await self._make_locked(keys[0], query, binary, lock, before_plugins)
            found = await self._look_in(keys[0], query)
        if lock is not None and found is not None:
            return found
        keys.append(_key(binary, "builtin"))
        if (found := await self._look_in(keys[-1], query)) is None:
            async with _making(keys[-1]):
                if await self._stored(keys[-1]) is None:
                    await self._make_builtin(keys[-1], binary)
            found = await self._look_in(keys[-1], query)
        if found is not None:
            return found
        raise SchemaUnavailable(await self._missing(query, keys, binary, lock))

    def _tool_for(self, directory: Path) -> tuple[str, str]:
        """terraform or tofu for the module, and the real program's path; SchemaUnavailable when there is none."""
        if not configuration_files(directory):
            raise SchemaUnavailable(f"No Terraform configuration (.tf files) in {directory}: give a module directory.")
        unguarded = dict(os.environ if self._base is None else self._base)
        try:
            return choose_tool(directory, unguarded)
        except PlanFailed:
            raise SchemaUnavailable(
                "Neither terraform nor tofu is on PATH: provider_schema asks it for the schemas (`terraform "
                "providers schema -json`). Install Terraform or OpenTofu, or put it on PATH."
            ) from None

    async def _version(self, tool: str, identity: str, directory: Path) -> str:
        """The binary's version from `version -json`, stored under its identity: asked once per binary."""
        program, name, environment = self._runnable(tool)
        try:
            version = await binary_version(program, name, directory, environment)
        except CommandFailed as exc:
            raise SchemaUnavailable(str(exc)) from None
        await _off_loop(self.store.remember_binary, identity, version)
        return version

    def _local_facts(self, query: SchemaQuery, program: str) -> tuple[LockFile | None, str, str | None]:
        relative = query.directory.relative_to(query.workspace.resolve()).as_posix()
        try:
            lock = read_lock_file(query.workspace, relative)
        except UnsafeFile as exc:
            raise SchemaUnavailable(f"{LOCK_FILE} in {query.directory} is not read: {exc.reason}.") from None
        identity = _identity(program)
        return lock, identity, self.store.binary_version(identity)

    async def _look_in(self, key: str, query: SchemaQuery) -> dict[str, Any] | None:
        def look() -> dict[str, Any] | None:
            stored = self.store.type_schema(key, query.kind, query.name)
            if stored is None:
                return None
            version = (self.store.providers(key) or {}).get(stored.provider)
            return type_schema(stored.provider, version, query.kind, query.name, stored.block)

        return await _off_loop(look)

    def _listed(self, key: str) -> dict[str, str | None]:
        return self.store.providers(key) or {}

    async def _stored(self, key: str) -> dict[str, str | None] | None:
        return await _off_loop(self.store.providers, key)

    async def _make_locked(
        self, key: str, query: SchemaQuery, binary: _Binary, lock: LockFile, before_plugins: BeforePlugins
    ) -> None:
        if await self._stored(key) is not None:
            return
        directory = query.directory
        if not is_initialized(directory):
            raise SchemaUnavailable(_init_advice(binary.tool, directory, f"it has {LOCK_FILE} but no .terraform/"))
        if problems := await _off_loop(terraform_dir_problems, directory):  # a FIFO would hang terraform
            listed = "; ".join(f"{name} ({why})" for name, why in problems[:10])
            raise SchemaUnavailable(f"Not run: {directory} holds files terraform must not be handed: {listed}.")
        if (refusal := await before_plugins(directory)) is not None:
            raise SchemaUnavailable(f"No schema: {refusal.rstrip('.')} (terraform would start the provider plugins).")
        try:
            program, tool, environment = self._runnable(binary.tool)
            document = await schema_document(program, tool, directory, environment)
        except CommandFailed as exc:
            raise SchemaUnavailable(
                _init_advice(binary.tool, directory, str(exc)) if exc.not_initialized else str(exc)
            ) from None
        await self._keep(key, document, lock.versions, binary)

    async def _make_builtin(self, key: str, binary: _Binary) -> None:
        with tempfile.TemporaryDirectory(prefix="iac-code-builtin-schema-") as private:
            module = Path(private)
            (module / "main.tf").write_text(BUILTIN_MODULE)
            try:
                program, tool, environment = self._runnable(binary.tool)
                document = await schema_document(program, tool, module, environment)
            except CommandFailed as exc:
                raise SchemaUnavailable(str(exc)) from None
        await self._keep(key, document, {}, binary)

    async def _keep(self, key: str, document: bytes, pinned: dict[str, str], binary: _Binary) -> None:
        def keep() -> None:
            try:
                providers, rows = document_rows(document, pinned, binary.version)
            except DocumentError as exc:
                said = f"{binary.tool} providers schema -json gave no schema document: {exc}."
                raise SchemaUnavailable(said) from None
            self.store.store(key, providers, rows)

        await _off_loop(keep)

    async def _missing(self, query: SchemaQuery, keys: list[str], binary: _Binary, lock: LockFile | None) -> str:
        def names() -> tuple[list[str], bool, list[str]]:
            close: list[str] = []
            for key in keys:
                close += self.store.closest(key, query.kind, query.name)
            other = "data" if query.kind == "resource" else "resource"
            elsewhere = any(self.store.type_schema(key, other, query.name) is not None for key in keys)
            providers = sorted({f"{p} {v or '(version unknown)'}" for k in keys for p, v in self._listed(k).items()})
            return close, elsewhere, providers

        close, elsewhere, providers = await _off_loop(names)
        what = KINDS[query.kind]
        if elsewhere:
            other = "data" if query.kind == "resource" else "resource"
            return f'"{query.name}" is a {KINDS[other]}, not a {what}: ask again with kind "{other}".'
        if lock is None and query.name.split("_", 1)[0] != "terraform":
            return _init_advice(
                binary.tool, query.directory, f'it has no {LOCK_FILE}, and "{query.name}" is not a built-in type'
            )
        message = f'No {what} "{query.name}" in the providers of {query.directory} ({", ".join(providers)}).'
        if close:
            best = difflib.get_close_matches(query.name, set(close), n=CLOSEST, cutoff=0)  # both documents' ranked
            return f"{message} Closest {what}s: {', '.join(best)}."
        return message + " Is its provider in required_providers, and was init run since?"

    def _runnable(self, tool: str) -> tuple[str, str, dict[str, str]]:
        """(the program, the tool's name, the environment): the tool as the command environment finds it
        (the guard's shim first on PATH, when the guard is on)."""
        environment = command_environment(self._base)
        program = shutil.which(tool, path=environment.get("PATH", os.defpath))
        if program is None:
            raise SchemaUnavailable(f"{tool} is no longer on PATH.")
        return program, tool, environment


def _making(key: str) -> asyncio.Lock:
    lock = _MAKING.get(key)
    if lock is None:
        lock = _MAKING[key] = asyncio.Lock()
    return lock


def _key(binary: _Binary, *parts: str) -> str:
    return hashlib.sha256("\0".join((FORMAT, binary.tool, binary.version, *parts)).encode()).hexdigest()


def _identity(program: str) -> str:
    """The binary as the store remembers its version: a new build at the same path is another binary."""
    real = os.path.realpath(program)
    info = os.stat(real)
    return f"{real}\0{info.st_dev}\0{info.st_ino}\0{info.st_size}\0{info.st_mtime_ns}"


def _init_advice(tool: str, directory: Path, why: str) -> str:
    return (
        f"{directory} is not initialized ({why}): run `{tool} init` there (it downloads the providers the "
        "lock file pins, so it is a command the user approves), then ask again."
    )


async def _off_loop(call: Callable[..., T], *args: Any) -> T:
    return await asyncio.wrap_future(_POOL.submit(lambda: call(*args)))
