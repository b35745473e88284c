"""A failed plan's diagnostics as the model reads them (iac/plans/diagnostics.py): summary, file and line, the
detail with its quoted values redacted; never the snippet's code or values, nor the address."""

from __future__ import annotations

import json

from iac_code.iac.plans.diagnostics import diagnostics_text, redacted, unredacted_text


def message(diagnostic: dict[str, object]) -> str:
    return json.dumps({"type": "diagnostic", "@level": diagnostic.get("severity"), "diagnostic": diagnostic})


LEAK = {
    "severity": "error",
    "summary": "Invalid function argument",
    "detail": 'Invalid value for "v" parameter: cannot convert "TOP \\"SECRET\\"\\n" to number.',
    "address": 'terraform_data.a["TOP SECRET"]',
    "range": {"filename": "main.tf", "start": {"line": 3, "column": 20}},
    "snippet": {"code": 'input = tonumber("TOP SECRET")', "values": [{"traversal": "each.key", "statement": "is x"}]},
}


def test_summary_file_line_and_the_detail_without_its_quoted_values():
    stdout = "\n".join([json.dumps({"type": "version"}), message(LEAK), "not json", message({"severity": "warning"})])
    assert diagnostics_text(stdout) == (
        "Error: Invalid function argument (main.tf, line 3)\n"
        '  Invalid value for "(redacted)" parameter: cannot convert "(redacted)" to number.\n'
        "Warning: "
    )
    assert "SECRET" in unredacted_text(stdout)  # what the agent reads to advise, never shown


def test_no_diagnostics_is_no_text_and_plain_text_is_redacted_too():
    assert diagnostics_text("plain text\n") == ""
    assert redacted('Error: bad value "a\\"b" here') == 'Error: bad value "(redacted)" here'
