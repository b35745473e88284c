"""What does redacting a tool's output cost? (issue 36)

A session's redactor as the agent builds it (src/iac_code/redaction.py): 10 secret values of 40 characters
in all their forms, the credential shapes, and a tokens file's digests, over a `terraform plan`-like output of
1 MB and 10 MB, plain and as one wrapped base64 text (`base64 big.log`: every line read across its end);
the median of `--runs` redactions in milliseconds. A tool's output is cut to 30,000 characters before it
gets here, but an MCP result's raw output or a file read may be larger.

    .venv/bin/python bench/redaction.py [--runs 7]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import secrets
import statistics
import time

from iac_code.redaction import Digested, Redactor, Shapes, Values

PLAN_LINES = """\
  # aws_instance.web[3] will be created
  + resource "aws_instance" "web" {
      + ami                          = "ami-0c55b159cbfafe1f0"
      + arn                          = (known after apply)
      + instance_type                = "t3.micro"
      + tags                         = {
          + "Name" = "web-3"
        }
    }
"""


def session_redactor() -> Redactor:
    values = {f"SECRET_{n}": secrets.token_urlsafe(30) for n in range(10)}
    digests = frozenset(hashlib.sha256(secrets.token_urlsafe(32).encode()).hexdigest() for _ in range(3))
    return Redactor([Values(values), Shapes(), Digested("an HTTP token", lambda: digests)])


def output_of(size: int) -> str:
    return (PLAN_LINES * (size // len(PLAN_LINES) + 1))[:size]


def median_ms(redactor: Redactor, text: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        redactor.redact(text)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    redactor = session_redactor()
    for megabytes in (1, 10):
        plain = output_of(megabytes * 2**20)
        wrapped = base64.encodebytes(plain.encode()[: megabytes * 2**20 * 3 // 4]).decode()
        print(f"{megabytes:>2} MB plan output: {median_ms(redactor, plain, args.runs):8.1f} ms (median)")
        print(f"{megabytes:>2} MB wrapped base64: {median_ms(redactor, wrapped, args.runs):8.1f} ms (median)")


if __name__ == "__main__":
    main()
