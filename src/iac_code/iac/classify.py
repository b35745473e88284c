"""Which kind of infrastructure file a path holds, decided from its name and its content.

A `.yaml` may be CloudFormation, ROS or a Kubernetes manifest, so YAML and JSON files are told apart by
what they contain (cheap regular expressions on the text: a template that does not parse is still
recognised, so its syntax error can be reported). Files under a Helm chart's `templates/` are Go
templates, not YAML: they get their own kind and no YAML check.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import PurePosixPath


class FileKind(StrEnum):
    TERRAFORM = "terraform"  # .tf, .tf.json
    TFVARS = "tfvars"  # .tfvars, .tfvars.json
    HCL = "hcl"  # other .hcl (terragrunt.hcl, .terraform.lock.hcl, packer...)
    CLOUDFORMATION = "cloudformation"
    ROS = "ros"
    KUBERNETES = "kubernetes"
    KUSTOMIZATION = "kustomization"
    HELM_CHART = "helm-chart"  # Chart.yaml
    HELM_VALUES = "helm-values"  # values*.yaml next to a Chart.yaml
    HELM_TEMPLATE = "helm-template"  # anything under a chart's templates/
    DOCKERFILE = "dockerfile"
    OTHER = "other"  # not infrastructure, or not recognised


# Kinds whose text is YAML or JSON and must parse as such.
STRUCTURED_KINDS = frozenset(
    {
        FileKind.CLOUDFORMATION,
        FileKind.ROS,
        FileKind.KUBERNETES,
        FileKind.KUSTOMIZATION,
        FileKind.HELM_CHART,
        FileKind.HELM_VALUES,
    }
)
HCL_KINDS = frozenset({FileKind.TERRAFORM, FileKind.TFVARS, FileKind.HCL})

STRUCTURED_SUFFIXES = (".yaml", ".yml", ".json", ".template", ".ros")
KUSTOMIZATION_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
CHART_FILE = "Chart.yaml"

# Indentation is `[^\S\n]*`, never `\s*`: with re.M, `^\s*` spans newlines from every line start, and a
# file of blank lines took time quadratic in its size (2 MB: hours, in the agent, holding the GIL).
_ROS = re.compile(
    r"""^[^\S\n]*["']?ROSTemplateFormatVersion["']?\s*:|["']?Type["']?\s*:\s*["']?(ALIYUN|DATASOURCE)::""", re.M
)
_CFN = re.compile(
    r"""^[^\S\n]*["']?AWSTemplateFormatVersion["']?\s*:|["']?Type["']?\s*:\s*["']?AWS::\w+::\w+"""
    r"""|["']?Transform["']?\s*:\s*["']?AWS::Serverless""",
    re.M,
)
_K8S_API = re.compile(r"""^["']?apiVersion["']?\s*:|^[^\S\n]*"apiVersion"\s*:""", re.M)
_K8S_KIND = re.compile(r"""^["']?kind["']?\s*:\s*["']?(\w+)|^[^\S\n]*"kind"\s*:\s*"(\w+)""", re.M)


def is_candidate(name: str) -> bool:
    """Whether a file with this name may be infrastructure at all (others are never read)."""
    lower = name.lower()
    return (
        lower.endswith((".tf", ".tfvars", ".hcl", *STRUCTURED_SUFFIXES))
        or _is_dockerfile(name)
        or name in KUSTOMIZATION_NAMES
    )


def classify(rel_path: str, text: str, chart_roots: frozenset[str] = frozenset()) -> FileKind:
    """The kind of the file at workspace-relative `rel_path` whose content is `text`.

    `chart_roots` are the directories (workspace-relative) that hold a Chart.yaml.
    """
    return helm_kind(rel_path, chart_roots) or content_kind(rel_path, text)


def content_kind(rel_path: str, text: str) -> FileKind:
    """The kind by name and content alone, Helm charts aside (what does not depend on sibling files)."""
    path = PurePosixPath(rel_path)
    return _by_name(path) or _by_content(path, text)


def helm_kind(rel_path: str, chart_roots: frozenset[str]) -> FileKind | None:
    """The Helm kind of a file inside one of `chart_roots`, decided by its place in the chart; else None."""
    path = PurePosixPath(rel_path)
    chart = _enclosing_chart(path, chart_roots)
    if chart is None:
        return None
    inside = path.relative_to(chart)
    if inside.parts[0] == "templates" and len(inside.parts) > 1:
        return FileKind.HELM_TEMPLATE
    if path.name == CHART_FILE:
        return FileKind.HELM_CHART
    if path.name.startswith("values") and path.suffix in (".yaml", ".yml"):
        return FileKind.HELM_VALUES
    return None


def _by_name(path: PurePosixPath) -> FileKind | None:
    name = path.name.lower()
    if name.endswith((".tf", ".tf.json")):
        return FileKind.TERRAFORM
    if name.endswith((".tfvars", ".tfvars.json")):
        return FileKind.TFVARS
    if name.endswith(".hcl"):
        return FileKind.HCL
    if _is_dockerfile(path.name):
        return FileKind.DOCKERFILE
    if path.name in KUSTOMIZATION_NAMES:
        return FileKind.KUSTOMIZATION
    if not name.endswith(STRUCTURED_SUFFIXES):
        return FileKind.OTHER
    return None


def _by_content(path: PurePosixPath, text: str) -> FileKind:
    if not path.name.lower().endswith(STRUCTURED_SUFFIXES):
        return FileKind.OTHER
    if _ROS.search(text):
        return FileKind.ROS
    if _CFN.search(text):
        return FileKind.CLOUDFORMATION
    if _K8S_API.search(text):
        kinds = {a or b for a, b in _K8S_KIND.findall(text)}
        if "Kustomization" in kinds:
            return FileKind.KUSTOMIZATION
        if kinds:
            return FileKind.KUBERNETES
    return FileKind.OTHER


def _is_dockerfile(name: str) -> bool:
    lower = name.lower()
    return lower in ("dockerfile", "containerfile") or lower.startswith("dockerfile.") or lower.endswith(".dockerfile")


def _enclosing_chart(path: PurePosixPath, chart_roots: frozenset[str]) -> PurePosixPath | None:
    if not chart_roots:
        return None
    for parent in path.parents:
        if parent.as_posix() in chart_roots:
            return parent
    return None


def chart_roots_of(rel_paths: list[str]) -> frozenset[str]:
    """Directories holding a Chart.yaml, from a list of workspace-relative file paths."""
    return frozenset(PurePosixPath(p).parent.as_posix() for p in rel_paths if PurePosixPath(p).name == CHART_FILE)
