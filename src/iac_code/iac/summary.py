"""A short description of the workspace's infrastructure for the system prompt.

A bounded, .gitignore-respecting walk (iac_code.iac.walk) finds Terraform root modules (with their
required providers and versions, the versions pinned in .terraform.lock.hcl, the backend type),
CloudFormation and ROS templates, Kubernetes manifests, Helm charts, kustomizations and Dockerfiles.
Everything is read with regular expressions (no HCL parse): the summary must cost milliseconds. The
result is cached by the list of files and their content digests, which the per-file memo provides
without reading unchanged files.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from iac_code.iac.classify import FileKind
from iac_code.iac.sources import SourceFile, load_sources
from iac_code.iac.walk import list_candidate_files

MAX_CHARS = 2_000
MAX_FILES = 5_000
HEADER = "Infrastructure found in the workspace (quick scan, .gitignore respected):"

_BACKEND = re.compile(r'\bbackend\s+"([^"]+)"')
_CLOUD = re.compile(r"\bcloud\s*\{")
_REQUIRED_VERSION = re.compile(r'\brequired_version\s*=\s*"([^"]+)"')
_REQUIRED_PROVIDERS = re.compile(r"\brequired_providers\s*\{")
# Each pattern here takes linear time on any text (a file is up to 2 MB of whatever the repository holds):
# a name starts where a name can start, a block's body stops at the next brace.
_PROVIDER_ENTRY = re.compile(r'(?<![\w-])([\w-]+)\s*=\s*(?:\{([^{}]*)\}|"([^"]*)")')
_SOURCE = re.compile(r'\bsource\s*=\s*"([^"]+)"')
_VERSION = re.compile(r'\bversion\s*=\s*"([^"]+)"')
_LOCKED_BLOCK = re.compile(r'provider\s+"([^"]+)"\s*\{([^{}]*)')
_BRACE = re.compile(r"[{}]")
_LOCAL_MODULE = re.compile(r'\bsource\s*=\s*"(\.{1,2}/[^"]*)"')
_K8S_KIND = re.compile(r"""^["']?kind["']?\s*:\s*["']?(\w+)""", re.M)
_CHART_FIELD = re.compile(r"^(name|version):\s*['\"]?([^'\"\s]+)", re.M)

_cache: dict[Path, tuple[str, str]] = {}
_cache_lock = threading.Lock()


def summarize_workspace(
    path: Path | str, max_chars: int = MAX_CHARS, on_infrastructure: Callable[[], object] | None = None
) -> str:
    """At most `max_chars` characters describing the infrastructure under `path`; "" when there is none.
    `on_infrastructure` is called as soon as the files are classified, if some are infrastructure."""
    root = Path(path).resolve()
    try:
        sources = load_sources(root, list_candidate_files(root, limit=MAX_FILES))
    except Exception:  # a summary is a nicety: never let it break a session's start
        return ""
    if on_infrastructure is not None and any(s.kind is not FileKind.OTHER for s in sources):
        on_infrastructure()
    key = hashlib.blake2b(
        "\n".join(f"{s.rel}\0{s.kind}\0{s.digest}" for s in sources).encode() + str(max_chars).encode()
    ).hexdigest()
    with _cache_lock:
        cached = _cache.get(root)
        if cached is not None and cached[0] == key:
            return cached[1]
    text = _render(_sections(sources), max_chars)
    with _cache_lock:
        _cache[root] = (key, text)
    return text


def _sections(sources: list[SourceFile]) -> list[tuple[str, list[str]]]:
    by_kind: dict[FileKind, list[SourceFile]] = defaultdict(list)
    for source in sources:
        by_kind[source.kind].append(source)
    roots, modules = _terraform(by_kind[FileKind.TERRAFORM], {s.rel: s for s in by_kind[FileKind.HCL]})
    return [
        ("Terraform root modules", roots),
        ("Terraform modules", modules),
        ("CloudFormation templates", [s.rel for s in by_kind[FileKind.CLOUDFORMATION]]),
        ("ROS templates", [s.rel for s in by_kind[FileKind.ROS]]),
        ("Kubernetes manifests, by directory", _kubernetes(by_kind[FileKind.KUBERNETES])),
        ("Helm charts", [_chart(s) for s in by_kind[FileKind.HELM_CHART]]),
        ("Kustomizations", [_parent(s.rel) for s in by_kind[FileKind.KUSTOMIZATION]]),
        ("Dockerfiles", [s.rel for s in by_kind[FileKind.DOCKERFILE]]),
    ]


def _terraform(files: list[SourceFile], hcl: dict[str, SourceFile]) -> tuple[list[str], list[str]]:
    """(root module descriptions, module directories): a root is a directory no other one uses as a module."""
    by_dir: dict[str, list[SourceFile]] = defaultdict(list)
    for source in files:
        by_dir[_parent(source.rel)].append(source)
    used_as_module = set()
    for directory, sources in by_dir.items():
        for source in sources:
            for target in _text_facts(source, _LOCAL_MODULE):
                used_as_module.add(PurePosixPath(directory, target).as_posix())
    used_as_module = {_normalise(p) for p in used_as_module}
    roots, modules = [], []
    for directory in sorted(by_dir):
        texts = [_read(s) for s in by_dir[directory]]
        backend = _backend(texts)
        lock = hcl.get(PurePosixPath(directory, ".terraform.lock.hcl").as_posix())
        is_module = directory in used_as_module or ("modules" in PurePosixPath(directory).parts and not backend)
        if is_module and lock is None:
            modules.append(directory)
        else:
            roots.append(_describe_root(directory, texts, backend, lock))
    return roots, modules


def _describe_root(directory: str, texts: list[str], backend: str | None, lock: SourceFile | None) -> str:
    locked = _locked_versions(_read(lock)) if lock else {}
    providers = _required_providers(texts)
    parts = [f"backend {backend}" if backend else "local state"]
    required = next((m.group(1) for t in texts if (m := _REQUIRED_VERSION.search(t))), None)
    if required:
        parts.append(f"terraform {required}")
    entries = []
    for name, (source, constraint) in sorted(providers.items()):
        short = _short_provider(source or f"hashicorp/{name}")
        text = short + (f" {constraint}" if constraint else "")
        if short in locked:
            text += f" (locked {locked.pop(short)})"
        entries.append(text)
    entries.extend(f"{name} (locked {version})" for name, version in sorted(locked.items()))
    if entries:
        parts.append("providers " + ", ".join(entries))
    return f"{directory}: {'; '.join(parts)}"


def _required_providers(texts: list[str]) -> dict[str, tuple[str | None, str | None]]:
    providers: dict[str, tuple[str | None, str | None]] = {}
    for text in texts:
        position = 0
        while (match := _REQUIRED_PROVIDERS.search(text, position)) is not None:
            block, position = _braced(text, match.end() - 1)
            for name, body, old_style_version in _PROVIDER_ENTRY.findall(block):
                if body:
                    source, version = _SOURCE.search(body), _VERSION.search(body)
                    providers[name] = (source.group(1) if source else None, version.group(1) if version else None)
                else:
                    providers[name] = (None, old_style_version or None)
    return providers


def _backend(texts: list[str]) -> str | None:
    for text in texts:
        match = _BACKEND.search(text)
        if match:
            return match.group(1)
        if _CLOUD.search(text) and "terraform" in text:
            return "cloud (HCP Terraform)"
    return None


def _kubernetes(files: list[SourceFile]) -> list[str]:
    by_dir: dict[str, Counter[str]] = defaultdict(Counter)
    file_counts: Counter[str] = Counter()
    for source in files:
        by_dir[_parent(source.rel)].update(_text_facts(source, _K8S_KIND))
        file_counts[_parent(source.rel)] += 1
    described = []
    for directory, kinds in sorted(by_dir.items()):
        top = ", ".join(f"{count} {kind}" if count > 1 else kind for kind, count in kinds.most_common(4))
        more = " …" if len(kinds) > 4 else ""
        count = file_counts[directory]
        described.append(f"{directory}: {count} file{'s' if count != 1 else ''} ({top}{more})")
    return described


def _chart(source: SourceFile) -> str:
    fields = dict(_CHART_FIELD.findall(_read(source)))
    name = " ".join(v for v in (fields.get("name"), fields.get("version")) if v)
    return f"{_parent(source.rel)} ({name})" if name else _parent(source.rel)


def _render(sections: list[tuple[str, list[str]]], max_chars: int) -> str:
    sections = [(title, items) for title, items in sections if items]
    if not sections:
        return ""
    for shown in (20, 10, 5, 3, 2, 1):
        text = "\n".join([HEADER, *(_section(title, items, shown) for title, items in sections)])
        if len(text) <= max_chars:
            return text
    return text[: max_chars - 1].rstrip() + "…"


def _section(title: str, items: list[str], shown: int) -> str:
    more = f"\n- … and {len(items) - shown} more" if len(items) > shown else ""
    return f"{title} ({len(items)}):\n" + "\n".join(f"- {item}" for item in items[:shown]) + more


@functools.lru_cache(maxsize=8192)
def _text_facts(source: SourceFile, pattern: re.Pattern[str]) -> tuple[str, ...]:
    """What the one group of `pattern` matches in the file (memoised by path and content digest)."""
    return tuple(str(found) for found in pattern.findall(_read(source)))


def _locked_versions(lock_text: str) -> dict[str, str]:
    """Provider (short name) -> the version .terraform.lock.hcl pins."""
    locked = {}
    for source, body in _LOCKED_BLOCK.findall(lock_text):
        if version := _VERSION.search(body):
            locked[_short_provider(source)] = version.group(1)
    return locked


def _braced(text: str, open_index: int) -> tuple[str, int]:
    """The text inside the braces that open at `open_index` (to the end if they never close), and where they end."""
    depth = 0
    for brace in _BRACE.finditer(text, open_index):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return text[open_index + 1 : brace.start()], brace.end()
    return text[open_index + 1 :], len(text)


def _short_provider(source: str) -> str:
    parts = source.split("/")
    return "/".join(parts[-2:]) if len(parts) >= 2 else source


def _parent(rel: str) -> str:
    return PurePosixPath(rel).parent.as_posix()


def _normalise(rel: str) -> str:
    parts: list[str] = []
    for part in PurePosixPath(rel).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts) or "."


def _read(source: SourceFile) -> str:
    """The file's text, read without following symlinks and within the size cap ("" if it was swapped)."""
    try:
        return source.text()
    except OSError:
        return ""
