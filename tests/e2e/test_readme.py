"""The README's commands, run as a reader would run them, so that the README cannot drift from the program.

The convention (the HTML comment at the top of README.md, and docs/contributing.md): only ```console blocks
run; `$ ` starts a command (a trailing backslash continues it), and the lines after it are output it must print
(stdout and stderr together; each shown line must be a whole printed line, `…` standing for any text). A command must exit 0 unless
the next one is `echo $?`. Each block runs in a fresh bash; the blocks share one workspace and one HOME, in
order. The port 8765 is read as the port of the server this test starts (as `make run` would), and
http://localhost:8000/v1 as the scripted OpenAI-compatible model.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.fakes.openai_server import ScriptedOpenAI

README = Path(__file__).resolve().parents[2] / "README.md"
README_PORT = "8765"
README_MODEL_URL = "http://localhost:8000/v1"
MARK = "<<<readme"
# Variables that would configure a model or a token from the developer's own shell: the README starts from none.
NOT_INHERITED = re.compile(r"^(IAC_CODE_|IACCODE_|OPENAI_|ANTHROPIC_|DASHSCOPE_|DEEPSEEK_|OPENROUTER_|OTEL_)")


@dataclass
class Command:
    text: str
    shown: list[str] = field(default_factory=list)  # the output lines the README shows after it


@dataclass
class Block:
    line: int  # where the block starts in README.md, for the test's id
    commands: list[Command]


def console_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if lines[index].strip() != "```console":
            index += 1
            continue
        start, commands = index + 1, []
        index += 1
        while lines[index].strip() != "```":
            line = lines[index]
            if line.startswith("$ "):
                command = line[2:]
                while command.endswith("\\"):
                    index += 1
                    command = f"{command}\n{lines[index]}"
                commands.append(Command(command))
            elif line.strip():
                assert commands, f"README.md:{index + 1}: output before any command"
                commands[-1].shown.append(line)
            index += 1
        blocks.append(Block(start, commands))
    return blocks


def script(block: Block) -> str:
    """The block as one bash script: each command between markers that carry its exit status, which the next
    command still sees as `$?`."""
    parts = ["__status=0"]
    for number, command in enumerate(block.commands):
        parts += [
            f"printf '\\n{MARK} start {number}>>>\\n'",
            "(exit $__status)",
            command.text,
            "__status=$?",
            f"printf '\\n{MARK} end {number} %s>>>\\n' $__status",
        ]
    return "\n".join(parts) + "\n"


def outputs(printed: str) -> dict[int, tuple[str, int]]:
    """Command number → (what it printed, its exit status)."""
    found: dict[int, tuple[str, int]] = {}
    for match in re.finditer(rf"{MARK} start (\d+)>>>\n(.*?)\n{MARK} end \1 (\d+)>>>", printed, re.DOTALL):
        found[int(match.group(1))] = (match.group(2), int(match.group(3)))
    return found


def shown_pattern(line: str) -> re.Pattern[str]:
    """A whole printed line, `…` standing for any text."""
    return re.compile("^" + ".*".join(re.escape(piece) for piece in line.split("…")) + "$", re.MULTILINE)


@dataclass
class Reader:
    """What a reader has: a shell with iac-code on PATH, a fresh HOME, an empty directory, a server running."""

    env: dict[str, str]
    workspace: Path
    port: int
    model_url: str

    def read(self, text: str) -> str:
        return text.replace(README_PORT, str(self.port)).replace(README_MODEL_URL, self.model_url)


@pytest.fixture(scope="module")
def reader(tmp_path_factory) -> Iterator[Reader]:
    root = tmp_path_factory.mktemp("readme")
    home, workspace = root / "home", root / "workspace"
    home.mkdir()
    workspace.mkdir()
    env = {name: value for name, value in os.environ.items() if not NOT_INHERITED.match(name)}
    env.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    with ScriptedOpenAI(default={"text": "Hello from the scripted model."}) as model:
        log = root / "server.log"
        with log.open("wb") as sink:
            command = ["iac-code", "acp", "--transport", "http", "--port", "0"]
            server = subprocess.Popen(command, cwd=home, env=env, stdout=sink, stderr=sink)
        try:
            yield Reader(env, workspace, _served_port(server, log), model.url)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(10)


def _served_port(server: subprocess.Popen[bytes], log: Path) -> int:
    """The port in the line the server logs once it listens (the log is the only place that says it)."""
    banner = re.compile(r"ACP over HTTP\+SSE: http://127\.0\.0\.1:(\d+)/acp")
    deadline = time.monotonic() + 30
    while server.poll() is None and time.monotonic() < deadline:
        if match := banner.search(log.read_text(errors="replace")):
            return int(match.group(1))
        time.sleep(0.05)  # a log file offers no event to wait on
    raise RuntimeError(f"the server did not start ({server.returncode}):\n{log.read_text(errors='replace')}")


BLOCKS = console_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_has_commands_to_run():
    assert len(BLOCKS) >= 5 and all(block.commands for block in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"README.md:{block.line}" for block in BLOCKS])
def test_a_console_block_does_what_the_readme_shows(reader, block):
    run = subprocess.run(
        ["bash", "-c", reader.read(script(block))],
        cwd=reader.workspace,
        env=reader.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=180,
    )
    results = outputs(run.stdout)
    for number, command in enumerate(block.commands):
        assert number in results, f"`{command.text}` did not finish:\n{run.stdout}"
        printed, status = results[number]
        checked_next = number + 1 < len(block.commands) and block.commands[number + 1].text.strip() == "echo $?"
        assert status == 0 or checked_next, f"`{command.text}` exited {status}:\n{printed}"
        for line in command.shown:
            assert shown_pattern(reader.read(line)).search(printed), (
                f"`{command.text}` did not print {line!r}:\n{printed}"
            )


LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)  # examples (a SKILL.md shown whole), not links


def anchors(markdown: str) -> set[str]:
    """The ids GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading).strip().lower().replace(" ", "-") for heading in headings}


@pytest.mark.parametrize(
    "page", ["README.md", *sorted(f"docs/{p.name}" for p in (README.parent / "docs").glob("*.md"))]
)
def test_every_local_link_and_anchor_leads_somewhere(page):
    root = README.parent
    source = root / page
    for target in LINK.findall(FENCED.sub("", source.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # another site: not ours to check offline
        path, _, anchor = target.partition("#")
        file = (source.parent / path).resolve() if path else source
        assert file.exists(), f"{page}: {target} leads nowhere"
        if anchor and file.suffix == ".md":
            assert anchor in anchors(file.read_text(encoding="utf-8")), f"{page}: no heading for #{anchor}"
