"""Each checker on the fixture tree's known defects: rule ids and lines.

The heavy checkers (cfn-lint, checkov in their warm workers) and terraform fmt are read from one shared
run of the whole tool over the fixtures (`fixture_report`); the light ones are called directly.
"""

from pathlib import Path
from typing import Any

from iac_code.iac.checkers.ros import RosChecker, known_resource_types
from iac_code.iac.checkers.syntax import HclSyntaxChecker, StructuredSyntaxChecker
from iac_code.iac.classify import FileKind
from iac_code.iac.sources import SourceFile

from .conftest import FIXTURES, findings_of


def check(checker: Any, rel: str, kind: FileKind, text: str | None = None) -> list[tuple[str, int | None, str]]:
    source = SourceFile(FIXTURES / rel, rel, kind, "")
    found = checker.check_file(source, text if text is not None else source.text())
    assert all(f.tool == checker.name and f.file == rel for f in found)
    return [(f.rule, f.line, f.severity) for f in found]


def test_hcl_syntax_error_with_its_line() -> None:
    assert check(HclSyntaxChecker(), "terraform/syntax_error/main.tf", FileKind.TERRAFORM) == [
        ("hcl-syntax", 8, "error")
    ]
    assert check(HclSyntaxChecker(), "terraform/insecure/main.tf", FileKind.TERRAFORM) == []


def test_hcl_unclosed_block_and_quote() -> None:
    unclosed = 'locals {\n  a = 1\n\nresource "x" "y" {\n}\n'
    assert check(HclSyntaxChecker(), "a.tf", FileKind.TERRAFORM, unclosed)[0][0] == "hcl-syntax"
    quote = 'locals {\n  a = "open\n}\n'
    assert check(HclSyntaxChecker(), "a.tf", FileKind.TERRAFORM, quote) == [("hcl-syntax", 2, "error")]


def test_yaml_and_json_syntax_errors_with_their_line() -> None:
    assert check(StructuredSyntaxChecker(), "kubernetes/broken.yaml", FileKind.KUBERNETES) == [
        ("yaml-syntax", 12, "error")
    ]
    bad_json = '{\n  "Resources": {\n    "A": {"Type": "AWS::SQS::Queue"},\n  }\n}\n'
    assert check(StructuredSyntaxChecker(), "t.json", FileKind.CLOUDFORMATION, bad_json) == [
        ("json-syntax", 4, "error")
    ]


def test_yaml_short_tags_of_templates_are_valid() -> None:
    assert check(StructuredSyntaxChecker(), "cloudformation/bucket.yaml", FileKind.CLOUDFORMATION) == []


def test_ros_unknown_types_and_dangling_references() -> None:
    found = check(RosChecker(), "ros/stack.yaml", FileKind.ROS)
    assert sorted(found, key=lambda f: f[1] or 0) == [
        ("unknown-resource-type", 12, "error"),
        ("dangling-ref", 15, "error"),
        ("dangling-depends-on", 19, "error"),
        ("dangling-getatt", 22, "error"),
    ]


def test_ros_clean_json_template_with_tabs() -> None:
    assert check(RosChecker(), "ros/clean.json", FileKind.ROS) == []


def test_ros_sections_version_conditions_sub_and_mappings() -> None:
    text = (
        "ROSTemplateFormatVersion: '2010-09-09'\n"  # 1: the CloudFormation date, not ROS's
        "Parameter: {}\n"  # 2: misspelt section
        "Resources:\n"
        "  Bucket:\n"
        "    Type: ALIYUN::OSS::Bucket\n"
        "    Condition: IsProd\n"  # 6: no such condition
        "    Properties:\n"
        "      BucketName: !Sub '${ALIYUN::StackName}-${Missing}'\n"  # 8
        "      Region: !FindInMap [Regions, a, b]\n"  # 9: no Mappings
        "  Thing:\n"
        "    Type: ALIYUN::NEWSERVICE::Thing\n"  # 11: plausible, not in the list: a warning
        "  NoType:\n"  # 12
        "    Properties: {}\n"
    )
    found = check(RosChecker(), "t.yaml", FileKind.ROS, text)
    assert sorted(found, key=lambda f: f[1] or 0) == [
        ("format-version", 1, "error"),
        ("unknown-section", 2, "error"),
        ("unknown-condition", 6, "error"),
        ("dangling-ref", 8, "error"),
        ("dangling-mapping", 9, "error"),
        ("unknown-resource-type", 11, "warning"),
        ("missing-type", 12, "error"),
    ]


def test_the_bundled_ros_type_list() -> None:
    types = known_resource_types()
    assert len(types) > 400
    assert {"ALIYUN::ECS::Instance", "ALIYUN::VPC::EIP", "ALIYUN::SLB::LoadBalancer", "ALIYUN::RAM::Role"} <= types
    assert all(t.startswith("ALIYUN::") and t.count("::") == 2 for t in types)


def test_cfn_lint_property_typo_and_dangling_ref(fixture_report: tuple[Path, Any]) -> None:
    raw = fixture_report[1].raw_output
    found = findings_of(raw, "cfn-lint", "cloudformation/bucket.yaml")
    assert ("E3002", 7) in found  # BucketNam
    buckett = [f for f in raw["findings"] if f["tool"] == "cfn-lint" and "Buckett" in f["message"]]
    assert [f["line"] for f in buckett] == [20] and buckett[0]["severity"] == "error"
    assert "cfn-lint" in raw["ran"]


def test_checkov_on_terraform_cloudformation_kubernetes_and_dockerfile(fixture_report: tuple[Path, Any]) -> None:
    raw = fixture_report[1].raw_output
    assert "checkov" in raw["ran"]
    terraform = findings_of(raw, "checkov", "terraform/insecure/main.tf")
    assert ("CKV_AWS_24", 1) in terraform  # security group open to 0.0.0.0/0 on 22
    assert ("CKV_AWS_20", 14) in terraform  # public-read bucket
    assert ("CKV_AWS_24", 8) in findings_of(raw, "checkov", "cloudformation/bucket.yaml")
    assert ("CKV_K8S_16", 6) in findings_of(raw, "checkov", "kubernetes/privileged.yaml")  # privileged pod
    assert ("CKV_DOCKER_7", 1) in findings_of(raw, "checkov", "docker/Dockerfile")  # FROM ubuntu:latest
    serious = {(f["rule"], f["severity"]) for f in raw["findings"] if f["tool"] == "checkov"}
    assert ("CKV_K8S_16", "error") in serious and ("CKV_DOCKER_7", "warning") in serious


def test_checkov_skips_helm_charts_without_helm(fixture_report: tuple[Path, Any]) -> None:
    skipped = fixture_report[1].raw_output["skipped"]
    assert {"tool": "checkov", "reason": "Helm charts need `helm` on PATH: helm/web"} in skipped


def test_terraform_fmt(fixture_report: tuple[Path, Any]) -> None:
    raw = fixture_report[1].raw_output
    assert findings_of(raw, "terraform-fmt") == [("fmt", 2)]  # the first line fmt would change
    assert [f["file"] for f in raw["findings"] if f["tool"] == "terraform-fmt"] == ["terraform/unformatted/main.tf"]
