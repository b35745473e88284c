"""The checkers that run tools found on PATH: terraform (real, 1.11 on these machines), and tflint and
kubeconform (stand-ins printing their JSON formats, since neither is installed here); and what happens
when a tool is absent."""

import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from iac_code.iac.checkers.kubeconform import KubeconformChecker
from iac_code.iac.checkers.terraform import TerraformFmtChecker, TerraformValidateChecker
from iac_code.iac.checkers.tflint import TflintChecker

from .conftest import run_tool

needs_terraform = pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not on PATH")

CONFIG = """\
module "net" {
  source = "./net"
}

output "zone" {
  value = var.zone
}
"""


@pytest.fixture
def initialized(tmp_path: Path) -> Path:
    """A configuration with a local module, initialized offline (no providers to download)."""
    workspace = tmp_path / "ws"
    (workspace / "net").mkdir(parents=True)
    (workspace / "main.tf").write_text(CONFIG)
    (workspace / "net" / "main.tf").write_text('output "id" {\n  value = "net"\n}\n')
    subprocess.run(["terraform", "init", "-input=false", "-no-color"], cwd=workspace, check=True, capture_output=True)
    assert (workspace / ".terraform").is_dir()
    return workspace


@needs_terraform
def test_validate_in_an_initialized_directory(initialized: Path) -> None:
    raw = run_tool(initialized, {"checks": ["terraform-validate"]}).raw_output
    assert raw["ran"] == ["terraform-validate"]
    assert raw["findings"] == [
        {
            "tool": "terraform-validate",
            "rule": "validate",
            "severity": "error",
            "file": "main.tf",
            "line": 6,
            "message": raw["findings"][0]["message"],
        }
    ]
    assert "undeclared input variable" in raw["findings"][0]["message"]
    # the module directory is not initialized itself: said, not silently ignored
    assert raw["skipped"] == [
        {
            "tool": "terraform-validate",
            "reason": "not initialized (validate needs `terraform init` to have run there): net",
        }
    ]


@needs_terraform
def test_validate_never_runs_init(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(CONFIG)
    raw = run_tool(tmp_path, {"checks": ["terraform-validate"]}).raw_output
    assert raw["ran"] == [] and raw["findings"] == []
    assert raw["skipped"][0]["reason"].startswith("not initialized")
    assert not (tmp_path / ".terraform").exists()


def test_terraform_absent_from_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "main.tf").write_text('variable "x" {\ndefault=1\n}\n')
    (tmp_path / ".terraform").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    raw = run_tool(tmp_path, {"checks": ["hcl-syntax", "terraform-fmt", "terraform-validate"]}).raw_output
    assert raw["ran"] == ["hcl-syntax"]
    assert {s["tool"]: s["reason"] for s in raw["skipped"]} == {
        "terraform-fmt": "terraform / tofu not found on PATH",
        "terraform-validate": "terraform / tofu not found on PATH",
    }


def fake_tool(bin_dir: Path, name: str, version: str, output: str) -> None:
    """A stand-in for `name` that prints `version` when asked, else `output` (and exits 2: "issues found")."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"print({version!r} if sys.argv[1:2] in (['--version'], ['-v']) else {output!r})\n"
        "sys.exit(0 if sys.argv[1:2] in (['--version'], ['-v']) else 2)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


TFLINT_OUTPUT = """{"issues": [{"rule": {"name": "terraform_unused_declarations", "severity": "warning",
 "link": "https://example.invalid"}, "message": "variable \\"x\\" is declared but not used",
 "range": {"filename": "main.tf", "start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 13}}, "callers": []}],
 "errors": []}"""

KUBECONFORM_OUTPUT = """{"resources": [{"filename": "k8s/app.yaml", "kind": "Deployment", "name": "web", "version": "apps/v1",
 "status": "statusInvalid", "msg": "", "validationErrors": [{"path": "/spec/replicas",
 "msg": "expected integer, but got string"}]}], "summary": {"valid": 0, "invalid": 1, "errors": 0, "skipped": 0}}"""

DEPLOYMENT = """\
apiVersion: v1
kind: Service
metadata:
  name: web
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: "two"
"""


def test_tflint_json_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = tmp_path / "ws"
    (workspace / "net").mkdir(parents=True)
    (workspace / "net" / "main.tf").write_text('variable "x" {}\n')
    fake_tool(tmp_path / "bin", "tflint", "TFLint version 0.50.3", TFLINT_OUTPUT)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    raw = run_tool(workspace, {"checks": ["tflint"]}).raw_output
    assert raw["ran"] == ["tflint"] and raw["skipped"] == []
    [finding] = raw["findings"]
    assert finding == {
        "tool": "tflint",
        "rule": "terraform_unused_declarations",
        "severity": "warning",
        "file": "net/main.tf",
        "line": 1,
        "message": 'variable "x" is declared but not used',
    }


def test_kubeconform_json_output_with_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = tmp_path / "ws"
    (workspace / "k8s").mkdir(parents=True)
    (workspace / "k8s" / "app.yaml").write_text(DEPLOYMENT)
    fake_tool(tmp_path / "bin", "kubeconform", "v0.6.4", KUBECONFORM_OUTPUT)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    raw = run_tool(workspace, {"checks": ["kubeconform"]}).raw_output
    [finding] = raw["findings"]
    assert (finding["rule"], finding["file"], finding["line"], finding["severity"]) == (
        "invalid",
        "k8s/app.yaml",
        11,
        "error",
    )
    assert "expected integer" in finding["message"]


def test_kubeconform_without_schemas_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "app.yaml").write_text(DEPLOYMENT)
    offline = '{"resources": [{"filename": "app.yaml", "kind": "Deployment", "name": "web", "status": "statusError", "msg": "could not find schema for Deployment"}]}'
    fake_tool(tmp_path / "bin", "kubeconform", "v0.6.4", offline)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    raw = run_tool(tmp_path, {"checks": ["kubeconform"]}).raw_output
    assert raw["findings"] == [] and raw["ran"] == []
    assert raw["skipped"][0]["tool"] == "kubeconform" and "schemas" in raw["skipped"][0]["reason"]


@pytest.mark.parametrize(
    "checker", [TerraformFmtChecker(), TerraformValidateChecker(), TflintChecker(), KubeconformChecker()]
)
def test_every_external_checker_has_a_timeout(checker: object) -> None:
    assert 0 < checker.timeout <= 300  # type: ignore[attr-defined]


def test_a_fmt_diff_gives_each_file_the_first_line_fmt_would_change() -> None:
    from iac_code.iac.checkers.terraform import first_changed_lines

    diff = (
        'a.tf\n--- old/a.tf\n+++ new/a.tf\n@@ -3,6 +3,6 @@\n }\n \n resource "x" "y" {\n-  a = 1\n+  a    = 1\n'
        " }\n@@ -20,2 +20,2 @@\n-x=1\n+x = 1\n"
        "dir/b.tf\n--- old/dir/b.tf\n+++ new/dir/b.tf\n@@ -1,3 +1,3 @@\n-locals {x=1}\n+locals { x = 1 }\n"
    )
    assert first_changed_lines(diff) == {"a.tf": 6, "dir/b.tf": 1}
