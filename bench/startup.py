"""Where `iac-code acp` spends its first second: process start, imports by package, and the first answer
of each method in a fresh process (stdio, against instant scripted models on 127.0.0.1). Prints medians.

Goals (issue 13): launch → first `session/new` answered ≤ 0.5 s; launch → `session/load` of a 1,000-message
session answered ≤ 0.7 s; ≤ 0.3 s of SDK import on the first prompt's critical path (anthropic provider).
The model SDK is imported once the connection is idle after session/new, so the first prompt is timed
sent at once and after a pause, as a user typing it would send it.
Goal (issue 24): launch → first reply, the prompt sent as soon as `session/new` is answered (as CI bots and
`acpx exec` do), ≤ 0.3 s with the OpenAI-compatible model and ≤ 0.4 s with Anthropic's, on stdio and over HTTP.
With the warm process running (issue 24, src/iac_code/warm/), the same launches as `iac-code acp`, handed over.
Run: .venv/bin/python bench/startup.py [--runs N] [--first-reply-only]
"""

from __future__ import annotations

import argparse
import contextlib
import queue
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

# Replace the script directory (whose http.py would shadow the stdlib) with the repo root.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.sessions import realistic_history  # noqa: E402
from tests.e2e.acp.wire import AgentProcess, model_env  # noqa: E402
from tests.e2e.http.client import AcpHttp, is_response  # noqa: E402
from tests.e2e.warm.runtime import WarmRuntime  # noqa: E402
from tests.fakes.anthropic_server import ScriptedAnthropic  # noqa: E402
from tests.fakes.openai_server import ScriptedOpenAI  # noqa: E402

from iac_code.sessions.sqlite import SqliteSessions  # noqa: E402
from iac_code.sessions.store import SessionRecord  # noqa: E402

IAC_CODE = Path(sys.executable).with_name("iac-code")
WARM_PROMPTS = 5
# Imports the modules named in argv one after the other, the SDKs as the agent imports them (its models
# deferred, the model SDKs without aiohttp: importtime lists failed imports too). A tree without those
# modules (to compare with an older commit) imports them plainly.
SERIAL_IMPORTS = """
import importlib, sys
from contextlib import nullcontext
try:
    from iac_code.acp.sdk_import import import_acp
    from iac_code.providers.sdk_extras import without_unused_extras
except ImportError:
    import_acp, without_unused_extras = (lambda: None), nullcontext
import_acp()
with without_unused_extras():
    for name in sys.argv[1:]:
        try:
            importlib.import_module(name)
        except Exception:
            pass
"""
PROMPT_PAUSES = (0.0, 1.0, 2.0)  # seconds between session/new answered and the first prompt sent
AT_ONCE_GOALS = {"openai": "goal ≤ 300 ms", "anthropic": "goal ≤ 400 ms"}
_HTTP_BANNER = re.compile(r"ACP over HTTP\+SSE: (http://\S+/acp)")


class Bench:
    """One workspace and config directory with a stored 1,000-message session; the fake models."""

    def __init__(self, root: Path, openai_url: str, anthropic_url: str) -> None:
        self.workspace = root / "work"
        self.workspace.mkdir()
        self.config = root / "config"
        self.config.mkdir()
        store = SqliteSessions(self.config / "iac-code.db", durable=False)  # the store the server opens
        store.create(SessionRecord(session_id="big", cwd=str(self.workspace)))
        for message in realistic_history(1000, random.Random(1)):
            store.append("big", message)
        store.close()
        self.warm: WarmRuntime | None = None  # set: launches are `iac-code acp` handed to its warm process
        self.env = {
            "openai": model_env(openai_url, self.config),
            "anthropic": model_env(
                anthropic_url, self.config, IAC_CODE_PROVIDER="anthropic_compatible", IAC_CODE_MODEL="claude-test"
            ),
        }

    def launch(self, provider: str = "openai", **extra: str) -> tuple[AgentProcess, float]:
        started = time.perf_counter()
        if self.warm is not None:
            return self.warm.launch(self.env[provider] | extra), started
        return AgentProcess({**self.env[provider], **extra}), started

    def first_answer(self, method: str, params: dict) -> float:
        """Seconds from launch to the answer of `method`, sent right after `initialize` is answered."""
        agent, started = self.launch()
        agent.initialize()
        response = agent.call(method, params)
        elapsed = time.perf_counter() - started
        assert "result" in response, response
        agent.close()
        return elapsed

    def first_prompt(self, provider: str, pause: float) -> tuple[float, float, float]:
        """(launch → first prompt answered, that prompt alone, a warm prompt) for one provider, the first
        prompt sent `pause` seconds after session/new is answered (a user typing it)."""
        agent, started = self.launch(provider)
        agent.initialize()
        session_id = agent.new_session(self.workspace)
        time.sleep(pause)
        sent = time.perf_counter()
        response, _ = agent.prompt(session_id, "hi")
        first = time.perf_counter()
        assert response["result"]["stopReason"] == "end_turn", response
        warm = []
        for _ in range(WARM_PROMPTS):
            began = time.perf_counter()
            agent.prompt(session_id, "hi")
            warm.append(time.perf_counter() - began)
        agent.close()
        return first - started, first - sent, statistics.median(warm)

    def first_reply_at_once(self, provider: str) -> float:
        """Seconds from launch to the answer of a prompt sent the moment session/new is answered (stdio)."""
        agent, started = self.launch(provider)
        agent.initialize()
        session_id = agent.result("session/new", {"cwd": str(self.workspace), "mcpServers": []})["sessionId"]
        response, _ = agent.prompt(session_id, "hi")
        elapsed = time.perf_counter() - started
        assert response["result"]["stopReason"] == "end_turn", response
        agent.close()
        return elapsed

    def first_reply_at_once_http(self, provider: str) -> float:
        """The same over HTTP+SSE: from launch, through the listening banner, to the prompt's response."""
        started = time.perf_counter()
        with self._http_server(provider) as url:
            return self._first_reply_over_http(url) - started

    def first_reply_on_a_running_server(self, provider: str) -> float:
        """A new client of an HTTP server that has been up a while (what HTTP clients meet: a server starts
        once): from its initialize, through session/new and a prompt sent at once, to the prompt's response."""
        with self._http_server(provider) as url:
            time.sleep(RUNNING_SERVER_AGE)  # its start-up work done, as on a server that has been up for a while
            started = time.perf_counter()
            return self._first_reply_over_http(url) - started

    @contextlib.contextmanager
    def _http_server(self, provider: str) -> Iterator[str]:
        """`iac-code acp` over HTTP on a free port: its /acp URL once it listens."""
        command = [str(IAC_CODE), "acp", "--transport", "http", "--port", "0"]
        server = subprocess.Popen(command, env=self.env[provider], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            yield _listening_url(server)
        finally:
            server.terminate()
            server.wait(10)

    def _first_reply_over_http(self, url: str) -> float:
        """initialize, session/new, a prompt sent at once: the moment (perf_counter) its response arrived."""
        acp = AcpHttp(url)
        events = acp.stream()
        session_id = acp.new_session(events, str(self.workspace))
        assert acp.prompt(session_id, "hi").status_code == 202
        [*_, answer] = events.until(is_response(3))
        answered = time.perf_counter()
        assert answer["data"]["result"]["stopReason"] == "end_turn", answer
        events.close()
        acp.close()
        return answered

    def imports_by_package(self, provider: str) -> dict[str, float]:
        """What initialize, session/new and one prompt import, timed by -X importtime and summed by top-level
        package. The real process imports in threads, which scrambles importtime's nesting, so its list of
        modules is re-imported in the same order by one thread of a fresh interpreter for the figures."""
        agent, _ = self.launch(provider, PYTHONPROFILEIMPORTTIME="1")
        agent.initialize()
        agent.prompt(agent.new_session(self.workspace), "hi")
        agent.close()
        names = [
            line.rsplit("|", 1)[1].strip()
            for line in agent.stderr_lines
            if line.startswith("import time:") and "self [us]" not in line
        ]
        serial = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", SERIAL_IMPORTS, *names],
            capture_output=True,
            text=True,
            check=True,
        )
        totals: dict[str, float] = defaultdict(float)
        for line in serial.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _, name = line.removeprefix("import time:").split("|")
            top = name.strip().split(".")[0]
            totals["(stdlib)" if top in sys.stdlib_module_names else top] += int(self_us) / 1e6
        return totals


def process_start(runs: int) -> list[tuple[str, float]]:
    def timed(command: list[str]) -> float:
        figures = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            figures.append(time.perf_counter() - started)
        return statistics.median(figures)

    return [
        ("python -c pass", timed([sys.executable, "-c", "pass"])),
        ("python -c 'import iac_code.cli'", timed([sys.executable, "-c", "import iac_code.cli"])),
        ("iac-code --version", timed([str(IAC_CODE), "--version"])),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--first-reply-only",
        action="store_true",
        help="only launch → first reply on stdio, in-process and through the warm process (issue 24)",
    )
    options = parser.parse_args()
    runs = options.runs

    def median(measure: Callable[[], float]) -> float:
        return statistics.median(measure() for _ in range(runs))

    with (
        tempfile.TemporaryDirectory() as temp,
        ScriptedOpenAI(default={"text": "ok"}) as openai_model,
        ScriptedAnthropic(default={"text": "ok"}) as anthropic_model,
    ):
        bench = Bench(Path(temp), openai_model.url, anthropic_model.url)
        workspace = str(bench.workspace)
        if options.first_reply_only:
            print(
                f"launch → first reply, prompt sent at once after session/new is answered, in-process (median of {runs})"
            )
            for provider in ("openai", "anthropic"):
                figure = median(lambda provider=provider: bench.first_reply_at_once(provider))
                print(f"  {'stdio, ' + provider:<42} {figure * 1000:6.0f} ms   {AT_ONCE_GOALS[provider]}")
            _running_server_rows(bench, runs, median)
            _warm_rows(bench, Path(temp) / "run", median)
            return

        print(f"process start (median of {runs})")
        for label, seconds in process_start(runs):
            print(f"  {label:<42} {seconds * 1000:6.0f} ms")

        print("imports by package, self time summed (-X importtime; initialize, session/new, one prompt)")
        by_provider = {provider: bench.imports_by_package(provider) for provider in ("openai", "anthropic")}
        packages = sorted(
            set().union(*by_provider.values()), key=lambda p: -max(t.get(p, 0) for t in by_provider.values())
        )
        shown = [*packages[:10], *(["iac_code"] if "iac_code" in packages[10:] else [])]
        print(f"  {'package':<24} {'openai run':>12} {'anthropic run':>14}")
        for package in [*shown, "(others)"]:
            figures = [
                sum(t for p, t in by_provider[run].items() if p not in shown)
                if package == "(others)"
                else by_provider[run].get(package, 0.0)
                for run in ("openai", "anthropic")
            ]
            print(f"  {package:<24} {figures[0] * 1000:9.0f} ms {figures[1] * 1000:11.0f} ms")
        totals = [sum(by_provider[p].values()) * 1000 for p in ("openai", "anthropic")]
        print(f"  {'total':<24} {totals[0]:9.0f} ms {totals[1]:11.0f} ms")

        print(f"launch → first answer, fresh process, sent right after initialize (median of {runs})")
        cwd = {"cwd": workspace, "mcpServers": []}
        big = {"sessionId": "big", **cwd}
        methods: list[tuple[str, dict, str]] = [
            ("session/new", cwd, "goal ≤ 500 ms"),
            ("session/load (1,000 messages)", big, "goal ≤ 700 ms"),
            ("session/resume (1,000 messages)", big, ""),
            ("session/fork (1,000 messages)", big, ""),
            ("session/list", {"cwd": workspace}, ""),
        ]
        print(f"  {'initialize':<42} {median(lambda: _initialize(bench)) * 1000:6.0f} ms")
        for label, params, goal in methods:
            method = label.split(" ")[0]
            figure = median(lambda method=method, params=params: bench.first_answer(method, params))
            print(f"  {label:<42} {figure * 1000:6.0f} ms   {goal}")
        print(f"launch → first reply, prompt sent at once after session/new is answered (median of {runs})")
        print("  (and the agent process's CPU time from launch to its exit: the figure a busy machine changes least)")
        for transport, measure in (("stdio", bench.first_reply_at_once), ("HTTP", bench.first_reply_at_once_http)):
            for provider in ("openai", "anthropic"):
                samples = [_with_cpu_time(measure, provider) for _ in range(runs)]
                launch, cpu = (statistics.median(s[i] for s in samples) for i in range(2))
                label = f"{transport}, {provider}"
                print(f"  {label:<42} {launch * 1000:6.0f} ms   CPU {cpu * 1000:5.0f} ms   {AT_ONCE_GOALS[provider]}")
        _running_server_rows(bench, runs, median)
        _warm_rows(bench, Path(temp) / "run", median)
        print(f"first session/prompt, sent a pause after session/new is answered (median of {runs})")
        for provider in ("openai", "anthropic"):
            for pause in PROMPT_PAUSES:
                samples = [bench.first_prompt(provider, pause) for _ in range(runs)]
                launch, first, warm = (statistics.median(s[i] for s in samples) for i in range(3))
                label = f"{provider}, {'at once' if not pause else f'{pause:g} s after'}"
                print(
                    f"  {label:<24} launch → answer {launch * 1000:5.0f} ms, the prompt itself {first * 1000:4.0f} ms,"
                    f" warm {warm * 1000:4.1f} ms: {(first - warm) * 1000:4.0f} ms of start-up work on its path"
                    f"{'   goal ≤ 300 ms' if provider == 'anthropic' else ''}"
                )


RUNNING_SERVER_AGE = 3.0  # seconds between an HTTP server's banner and its first client, in that row


def _running_server_rows(bench: Bench, runs: int, median: Callable[[Callable[[], float]], float]) -> None:
    """What an HTTP client meets: the server started a while ago (issue 24's HTTP goal)."""
    print(f"an HTTP server up for {RUNNING_SERVER_AGE:g} s: a new client's initialize → first reply (median of {runs})")
    for provider in ("openai", "anthropic"):
        figure = median(lambda provider=provider: bench.first_reply_on_a_running_server(provider))
        print(f"  {'HTTP, ' + provider:<42} {figure * 1000:6.0f} ms   {AT_ONCE_GOALS[provider]}")


def _warm_rows(bench: Bench, runtime_dir: Path, median: Callable[[Callable[[], float]], float]) -> None:
    """The same launches as `iac-code acp` on stdio with the user's warm process running (issue 24)."""
    bench.warm = WarmRuntime(runtime_dir)
    try:
        bench.warm.start(bench.env["openai"])
        print("with the warm process running: `iac-code acp` hands its stdio to a forked child (stdio)")
        print(f"  {'launch → initialize answered':<42} {median(lambda: _initialize(bench)) * 1000:6.0f} ms")
        new = {"cwd": str(bench.workspace), "mcpServers": []}
        figure = median(lambda: bench.first_answer("session/new", new))
        print(f"  {'launch → session/new answered':<42} {figure * 1000:6.0f} ms")
        for provider in ("openai", "anthropic"):
            figure = median(lambda provider=provider: bench.first_reply_at_once(provider))
            label = f"launch → first reply at once, {provider}"
            print(f"  {label:<42} {figure * 1000:6.0f} ms   {AT_ONCE_GOALS[provider]}")
    finally:
        bench.warm.stop()
        bench.warm = None


def _with_cpu_time(measure: Callable[[str], float], provider: str) -> tuple[float, float]:
    """(what `measure(provider)` returns, the CPU seconds of the processes it started and waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    figure = measure(provider)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return figure, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _listening_url(server: subprocess.Popen[bytes]) -> str:
    """The /acp URL the server logs once it listens, read from its stderr as soon as it is written."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert server.stderr is not None
        for line in server.stderr:
            lines.put(line.decode(errors="replace"))
        lines.put("")

    threading.Thread(target=read, daemon=True).start()
    while line := lines.get(timeout=30):
        if match := _HTTP_BANNER.search(line):
            return match.group(1)
    raise RuntimeError(f"the HTTP server exited ({server.wait()}) before listening")


def _initialize(bench: Bench) -> float:
    agent, started = bench.launch()
    agent.initialize()
    elapsed = time.perf_counter() - started
    agent.close()
    return elapsed


if __name__ == "__main__":
    main()
