"""Every checker iac_check can run, in the order they are listed to the model."""

from __future__ import annotations

from iac_code.iac.checker import Checker
from iac_code.iac.checkers.kubeconform import KubeconformChecker
from iac_code.iac.checkers.ros import RosChecker
from iac_code.iac.checkers.syntax import HclSyntaxChecker, StructuredSyntaxChecker
from iac_code.iac.checkers.terraform import TerraformFmtChecker, TerraformValidateChecker
from iac_code.iac.checkers.tflint import TflintChecker
from iac_code.iac.checkers.warm import CfnLintChecker, CheckovChecker


def default_checkers() -> dict[str, Checker]:
    checkers: list[Checker] = [
        HclSyntaxChecker(),
        StructuredSyntaxChecker(),
        RosChecker(),
        CfnLintChecker(),
        CheckovChecker(),
        TerraformFmtChecker(),
        TerraformValidateChecker(),
        TflintChecker(),
        KubeconformChecker(),
    ]
    return {checker.name: checker for checker in checkers}
