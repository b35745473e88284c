"""summarize_workspace: what the system prompt learns about the workspace's infrastructure."""

import threading
from pathlib import Path

from iac_code.iac.summary import MAX_CHARS, summarize_workspace

from .conftest import FIXTURES, copy_fixtures


def test_the_fixture_repository() -> None:
    text = summarize_workspace(FIXTURES)
    assert text.startswith("Infrastructure found in the workspace")
    assert (
        "- terraform/insecure: backend s3; terraform >= 1.5; providers hashicorp/aws ~> 5.0 (locked 5.31.0), "
        "hashicorp/random (locked 3.6.0)"
    ) in text
    assert "Terraform modules (1):\n- terraform/modules/network" in text
    assert "- cloudformation/bucket.yaml" in text
    assert "ROS templates (3):" in text and "- ros/stack.yaml" in text
    assert "- kubernetes: 2 files (Deployment, Namespace, Pod)" in text
    assert "Helm charts (1):\n- helm/web (web 0.3.1)" in text
    assert "Kustomizations (1):\n- kustomize/base" in text
    assert "Dockerfiles (1):\n- docker/Dockerfile" in text
    assert len(text) <= MAX_CHARS


def test_capped_at_about_two_thousand_characters(tmp_path: Path) -> None:
    for index in range(300):
        stack = tmp_path / f"stacks/service-{index:03d}"
        stack.mkdir(parents=True)
        (stack / "main.tf").write_text('terraform {\n  backend "s3" {}\n}\n')
        (stack / "template.yaml").write_text("AWSTemplateFormatVersion: '2010-09-09'\nResources: {}\n")
    text = summarize_workspace(tmp_path)
    assert len(text) <= MAX_CHARS
    assert "Terraform root modules (300):" in text and "CloudFormation templates (300):" in text
    assert "- … and 280 more" in text


def test_nothing_to_say_is_an_empty_string(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    (tmp_path / "package.json").write_text('{"name": "x"}\n')
    assert summarize_workspace(tmp_path) == ""


def test_gitignored_files_are_left_out(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("vendor/\n")
    (tmp_path / "vendor/mod").mkdir(parents=True)
    (tmp_path / "vendor/mod/main.tf").write_text("locals {}\n")
    (tmp_path / "main.tf").write_text("locals {}\n")
    text = summarize_workspace(tmp_path)
    assert "- .: local state" in text and "vendor" not in text


def test_cached_until_something_changes(tmp_path: Path) -> None:
    workspace = copy_fixtures(tmp_path)
    first = summarize_workspace(workspace)
    assert summarize_workspace(workspace) is first
    (workspace / "terraform/insecure/versions.tf").write_text('terraform {\n  backend "gcs" {}\n}\n')
    changed = summarize_workspace(workspace)
    assert "- terraform/insecure: backend gcs" in changed


def test_hostile_terraform_text_is_summarised_in_linear_time(tmp_path: Path) -> None:
    """Patterns that backtracked took 85 s on a lock file of unclosed provider blocks (the summary runs in
    the agent's process, and the first model call waits for it); each of these takes well under a second."""
    (tmp_path / "main.tf").write_text(
        "terraform {\n  required_providers {\n" + "required_providers {\n" * 50_000 + "x" * 200_000 + " = 1\n"
    )
    (tmp_path / ".terraform.lock.hcl").write_text('provider "a" {\n' * 20_000)
    done: list[str] = []
    worker = threading.Thread(target=lambda: done.append(summarize_workspace(tmp_path)), daemon=True)
    worker.start()
    worker.join(20)
    assert done and "- .: local state" in done[0]


def test_locked_versions_and_required_providers_still_read(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "~> 5.0" }\n'
        '    random = "3.6.0"\n  }\n}\n'
    )
    (tmp_path / ".terraform.lock.hcl").write_text(
        'provider "registry.terraform.io/hashicorp/aws" {\n  version = "5.31.0"\n  hashes = ["h1:x"]\n}\n'
    )
    text = summarize_workspace(tmp_path)
    assert "providers hashicorp/aws ~> 5.0 (locked 5.31.0), hashicorp/random 3.6.0" in text
