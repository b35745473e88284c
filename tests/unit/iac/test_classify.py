"""Files are told apart by content: a .yaml may be CloudFormation, ROS, Kubernetes or none of them."""

import time

import pytest

from iac_code.iac.classify import FileKind, chart_roots_of, classify, is_candidate

from .conftest import FIXTURES


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        ("classify/cloudformation.yaml", FileKind.CLOUDFORMATION),
        ("classify/template.json", FileKind.CLOUDFORMATION),
        ("classify/ros.yml", FileKind.ROS),
        ("classify/kubernetes.yaml", FileKind.KUBERNETES),
        ("classify/other.yaml", FileKind.OTHER),
        ("ros/stack.yaml", FileKind.ROS),
        ("ros/clean.json", FileKind.ROS),
        ("cloudformation/bucket.yaml", FileKind.CLOUDFORMATION),
        ("kubernetes/privileged.yaml", FileKind.KUBERNETES),
        ("kubernetes/broken.yaml", FileKind.KUBERNETES),  # does not parse, still recognised
        ("kustomize/base/kustomization.yaml", FileKind.KUSTOMIZATION),
        ("docker/Dockerfile", FileKind.DOCKERFILE),
        ("terraform/insecure/main.tf", FileKind.TERRAFORM),
        ("terraform/insecure/.terraform.lock.hcl", FileKind.HCL),
    ],
)
def test_fixture_files_by_content(rel: str, kind: FileKind) -> None:
    assert classify(rel, (FIXTURES / rel).read_text()) is kind


def test_helm_chart_files_by_their_place_in_the_chart() -> None:
    charts = chart_roots_of(["helm/web/Chart.yaml", "helm/web/values.yaml", "helm/web/templates/deployment.yaml"])
    assert charts == frozenset({"helm/web"})
    template = (FIXTURES / "helm/web/templates/deployment.yaml").read_text()
    assert classify("helm/web/templates/deployment.yaml", template, charts) is FileKind.HELM_TEMPLATE
    assert classify("helm/web/values.yaml", "replicas: 2\n", charts) is FileKind.HELM_VALUES
    assert classify("helm/web/Chart.yaml", "name: web\n", charts) is FileKind.HELM_CHART
    # outside a chart the same template would read as a Kubernetes manifest
    assert classify("elsewhere/deployment.yaml", template) is FileKind.KUBERNETES


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("vars.tfvars", FileKind.TFVARS),
        ("main.tf.json", FileKind.TERRAFORM),
        ("terragrunt.hcl", FileKind.HCL),
        ("Containerfile", FileKind.DOCKERFILE),
        ("Dockerfile.prod", FileKind.DOCKERFILE),
        ("api.dockerfile", FileKind.DOCKERFILE),
        ("Kustomization", FileKind.KUSTOMIZATION),
        ("README.md", FileKind.OTHER),
    ],
)
def test_kinds_by_name(name: str, kind: FileKind) -> None:
    assert classify(f"x/{name}", "") is kind


def test_a_kustomization_by_content() -> None:
    text = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
    assert classify("overlays/prod/kust.yaml", text) is FileKind.KUSTOMIZATION


def test_candidates_are_chosen_by_name() -> None:
    assert is_candidate("main.tf") and is_candidate("stack.template") and is_candidate("Dockerfile")
    assert not is_candidate("main.py") and not is_candidate("README.md")


@pytest.mark.parametrize("filler", ["\n", " \n", "\t\r\n"])
def test_a_file_of_blank_lines_is_classified_in_linear_time(filler: str) -> None:
    """Classifying runs in the agent's process: 40,000 blank lines took ~30 s when `^\\s*` spanned lines
    (time quadratic in the size: a 2 MB file, hours); now a few milliseconds."""
    text = filler * 40_000 + "kind: Pod\n"
    started = time.monotonic()
    assert classify("blank.yaml", text) is FileKind.OTHER
    assert time.monotonic() - started < 2.0
