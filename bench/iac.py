"""Figures for iac_check and the workspace summary. Run `python bench/iac.py`; prints medians.

A generated tree of 300 files (100 Terraform files in 25 directories, 100 CloudFormation templates, 100
Kubernetes manifests) is checked with every checker available: first check (warm workers not started
yet, empty cache) with and without a session start before it, first check again with the workers warm
but the cache empty, re-check of the unchanged tree, and re-check after editing one file (a .tf file: its
directory's checks re-run; a template). Goals (from the issues): the first check after a session start
<= 3 s, re-check unchanged <= 0.1 s, one edited file <= 2 s. Then summarize_workspace on a 1,000-file
repository (goal <= 50 ms), first call and cached. Then the cost of isolation: our own parse checks (HCL,
YAML, ROS) on the same 300 files, warm and uncached, in the parse workers against the same parses on
threads of this process as they ran before (goal: <= 10 % slower); a check of two YAML alias bombs (a ROS
template, a Kubernetes manifest): its time and the peak memory of this process and its workers (goal: the
agent plus its workers under 600 MB); and a check of hostile files (a FIFO, /dev/zero symlinks, files
swapped for them while it runs): its time and this process's peak memory.

"After a session start" is what an editor's first /check or the model's first iac_check meets: the
session's start_workspace_summary(prewarm=True) has started the workers once the files were classified,
and the check is timed from the moment the summary is ready (when the first model call could start).
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])

from iac_code.iac import summary as summary_module  # noqa: E402
from iac_code.iac.cache import ResultCache  # noqa: E402
from iac_code.iac.checker import Tree  # noqa: E402
from iac_code.iac.checkers.base import FileByFileChecker, check_files  # noqa: E402
from iac_code.iac.checkers.ros import RosChecker  # noqa: E402
from iac_code.iac.checkers.syntax import HclSyntaxChecker, StructuredSyntaxChecker  # noqa: E402
from iac_code.iac.engine import run_checks  # noqa: E402
from iac_code.iac.parse_workers import prewarm_parse_workers  # noqa: E402
from iac_code.iac.session_start import start_workspace_summary  # noqa: E402
from iac_code.iac.sources import load_sources  # noqa: E402
from iac_code.iac.walk import list_candidate_files  # noqa: E402
from iac_code.iac.workers import shutdown_workers  # noqa: E402
from iac_code.tools.base import ToolContext  # noqa: E402
from iac_code.tools.iac_check import IacCheckTool  # noqa: E402

REPEAT = 5
COLD_REPEAT = 3  # each cold run starts the workers again (seconds each)

TERRAFORM = """\
resource "aws_security_group" "web_{n}" {{
  name        = "web-{n}"
  description = "web {n}"
  ingress {{
    description = "https"
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["10.{n}.0.0/16"]
  }}
}}

resource "aws_s3_bucket" "logs_{n}" {{
  bucket = "logs-{n}-{edit}"
}}
"""

CLOUDFORMATION = """\
AWSTemplateFormatVersion: "2010-09-09"
Description: queue {n} {edit}
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: queue-{n}
      VisibilityTimeout: 60
  Topic:
    Type: AWS::SNS::Topic
Outputs:
  QueueUrl:
    Value: !Ref Queue
"""

KUBERNETES = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{n}
  labels: {{app: app-{n}, edit: "{edit}"}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: app-{n}}}
  template:
    metadata:
      labels: {{app: app-{n}}}
    spec:
      containers:
        - name: app
          image: nginx:1.25
"""


def generate(root: Path, count: int = 100) -> None:
    for n in range(count):
        stack = root / "terraform" / f"stack{n // 4:02d}"
        stack.mkdir(parents=True, exist_ok=True)
        (stack / f"main{n % 4}.tf").write_text(TERRAFORM.format(n=n, edit=0))
        (root / "cloudformation").mkdir(exist_ok=True)
        (root / "cloudformation" / f"queue{n:03d}.yaml").write_text(CLOUDFORMATION.format(n=n, edit=0))
        (root / "k8s").mkdir(exist_ok=True)
        (root / "k8s" / f"app{n:03d}.yaml").write_text(KUBERNETES.format(n=n, edit=0))


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "repo"
        generate(root)
        context = ToolContext(workspace=root)

        def check(cache: ResultCache) -> dict[str, object]:
            result = asyncio.run(IacCheckTool(cache=cache).run({}, context))
            raw: dict[str, object] = result.raw_output
            return raw

        def cold_check() -> float:
            shutdown_workers()
            return timed(lambda: check(ResultCache(None)))

        def check_after_session_start() -> float:
            shutdown_workers()
            start_workspace_summary(root, prewarm=True).result(timeout=60)
            return timed(lambda: check(ResultCache(None)))

        cold = statistics.median(cold_check() for _ in range(COLD_REPEAT))
        after_start = statistics.median(check_after_session_start() for _ in range(COLD_REPEAT))
        cache = ResultCache(Path(temp) / "config" / "cache" / "iac-check.sqlite")
        raw = check(cache)
        print(f"iac_check on 300 files: ran {raw['ran']}, {len(raw['findings'])} findings")  # type: ignore[arg-type]
        print(f"  first check, workers and cache cold   {cold:8.2f} s")
        print(f"  first check after a session start     {after_start:8.2f} s   (goal <= 3 s)")
        warm = statistics.median(timed(lambda: check(ResultCache(None))) for _ in range(COLD_REPEAT))
        print(f"  first check, workers warm, cache cold {warm:8.2f} s")
        unchanged = statistics.median(timed(lambda: check(cache)) for _ in range(REPEAT))
        print(f"  re-check, unchanged                   {unchanged:8.3f} s   (goal <= 0.1 s)")
        edits = []
        for edit in range(1, REPEAT + 1):
            (root / "terraform" / "stack03" / "main1.tf").write_text(TERRAFORM.format(n=13, edit=edit))
            edits.append(timed(lambda: check(cache)))
        print(f"  re-check, one .tf file edited         {statistics.median(edits):8.3f} s   (goal <= 2 s)")
        edits = []
        for edit in range(1, REPEAT + 1):
            (root / "cloudformation" / "queue042.yaml").write_text(CLOUDFORMATION.format(n=42, edit=edit))
            edits.append(timed(lambda: check(cache)))
        print(f"  re-check, one template edited         {statistics.median(edits):8.3f} s   (goal <= 2 s)")
        isolation_figures(root)
        hostile_figures(Path(temp) / "bombs", cache)
        shutdown_workers()
        summary_figures(Path(temp) / "summary")
        hostile_files_figures(Path(temp) / "hostile")


def summary_figures(root: Path) -> None:
    """summarize_workspace on 1,000 files: 250 of infrastructure among application code."""
    generate(root / "infra", count=84)  # 252 infrastructure files
    for n in range(748):
        package = root / "app" / f"pkg{n // 20:02d}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"module{n}.py").write_text(f"def f{n}():\n    return {n}\n")
    first = timed(lambda: summary_module.summarize_workspace(root))
    cached = statistics.median(timed(lambda: summary_module.summarize_workspace(root)) for _ in range(REPEAT))
    summary_module._cache.clear()
    rebuilt = statistics.median(
        timed(lambda: (summary_module._cache.clear(), summary_module.summarize_workspace(root))) for _ in range(REPEAT)
    )
    print("summarize_workspace on 1,000 files:")
    print(f"  first call (files read)               {first * 1000:8.1f} ms  (goal <= 50 ms)")
    print(f"  unchanged (walk + memo, cached text)  {cached * 1000:8.1f} ms")
    print(f"  summary rebuilt, files memoised       {rebuilt * 1000:8.1f} ms")


def hostile_files_figures(root: Path) -> None:
    """This process's peak memory (the agent's side of a check: walk, reads, units) while checking a FIFO
    and a /dev/zero symlink beside Terraform files, with other files swapped for /dev/zero symlinks."""
    for name in ("fifo", "zero", "race"):
        (root / name / ".terraform").mkdir(parents=True)
        (root / name / "variables.tf").write_text("locals {}\n")
    os.mkfifo(root / "fifo" / "main.tf")
    (root / "zero" / "main.tf").symlink_to("/dev/zero")
    racing = [root / "race" / f"file{n}.tf" for n in range(50)]
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            for path in racing:
                link = path.with_name(f".{path.name}.link")
                link.symlink_to("/dev/zero")
                os.replace(link, path)
                path.unlink()
                path.write_text("locals {}\n")
            time.sleep(0.001)

    before = _peak_rss_mb()
    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    checks = ["hcl-syntax", "terraform-fmt", "terraform-validate"]
    elapsed = statistics.median(
        timed(lambda: asyncio.run(IacCheckTool(cache=ResultCache(None)).run({"checks": checks}, ToolContext(root))))
        for _ in range(REPEAT)
    )
    stop.set()
    swapper.join()
    print("hostile fixtures (FIFO main.tf, /dev/zero symlink, 50 files swapped with /dev/zero symlinks):")
    print(f"  check                                 {elapsed:8.2f} s")
    print(f"  peak memory of this process           {_peak_rss_mb():8.0f} MB (before: {before:.0f} MB)")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


PARSE_CHECKERS: list[FileByFileChecker] = [HclSyntaxChecker(), StructuredSyntaxChecker(), RosChecker()]


def isolation_figures(root: Path) -> None:
    """The parse checks, warm and uncached: through run_checks (parse workers) against the same calls of
    check_files on threads of this process (what the checkers did before they were isolated)."""
    prewarm_parse_workers()
    checkers = {checker.name: checker for checker in PARSE_CHECKERS}
    tree = Tree(root, load_sources(root, list_candidate_files(root)))

    def in_workers() -> None:
        asyncio.run(run_checks(root, root, checkers, ResultCache(None)))

    async def on_threads() -> None:
        await asyncio.to_thread(lambda: Tree(root, load_sources(root, list_candidate_files(root))))
        await asyncio.gather(*(asyncio.to_thread(_parse_here, tree, checker) for checker in PARSE_CHECKERS))

    in_workers()  # imports and first requests out of the way
    asyncio.run(on_threads())
    isolated = statistics.median(timed(in_workers) for _ in range(REPEAT * 2))
    threaded = statistics.median(timed(lambda: asyncio.run(on_threads())) for _ in range(REPEAT * 2))
    print("isolation of the parse checks (HCL, YAML, ROS) on the 300 files, warm, cache cold:")
    print(f"  in the parse workers                  {isolated:8.3f} s")
    print(f"  on threads of the agent (before)      {threaded:8.3f} s")
    print(f"  overhead                              {(isolated / threaded - 1) * 100:+7.0f} %   (goal <= +10 %)")


def hostile_figures(root: Path, cache: ResultCache) -> None:
    """iac_check on two alias bombs, sampling the resident memory of this process and its children."""
    bomb = "".join(f"  a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10) if n else 'x'}]\n" for n in range(10))
    root.mkdir()
    (root / "ros.yaml").write_text("ROSTemplateFormatVersion: '2015-09-01'\nResources: {}\nMetadata:\n" + bomb)
    (root / "pod.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n" + bomb)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while True:
            pids = [os.getpid(), *_children(os.getpid())]
            peak[0] = max(peak[0], sum(_rss_kb(pid) for pid in pids))
            if done.wait(0.02):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    elapsed = timed(lambda: asyncio.run(IacCheckTool(cache=cache).run({}, ToolContext(workspace=root))))
    done.set()
    sampler.join()  # its last sample is taken after the check
    print("iac_check on two YAML alias bombs (ROS, Kubernetes), workers warm:")
    print(f"  check                                 {elapsed:8.2f} s")
    print(f"  peak memory, this process + workers   {peak[0] / 1024:8.0f} MB   (goal <= 600 MB)")


def _children(parent: int) -> list[int]:
    children = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                children.append(int(entry))
        except OSError:
            continue
    return children


def _rss_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)


def _parse_here(tree: Tree, checker: FileByFileChecker) -> object:
    units = checker.select(tree).units
    files = [[unit.files[0].rel, unit.files[0].kind.value] for unit in units]
    return check_files(f"{type(checker).__module__}:{type(checker).__qualname__}", str(tree.workspace), files)


if __name__ == "__main__":
    main()
