"""What finding a session's skills costs: every session runs `find_skills` once, on the event loop, as it
builds its system prompt (as the instruction files are read). Prints the median of `find_skills` for a
workspace with only the bundled skills, and with 20 and 200 project skills (10 directories deep in a
repository), and the length of the system prompt's skill list. Run: .venv/bin/python bench/skills.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])

from iac_code.agent.system_prompt import skill_list  # noqa: E402
from iac_code.repository import project_directories  # noqa: E402
from iac_code.skills.discovery import bundled_skills, find_skills  # noqa: E402

RUNS = 200


def _workspace(root: Path, skills: int) -> Path:
    (root / ".git").mkdir()
    workspace = root.joinpath(*(f"level{depth}" for depth in range(10)))
    workspace.mkdir(parents=True)
    for index in range(skills):
        folder = workspace / ".agents" / "skills" / f"skill-{index}"
        folder.mkdir(parents=True)
        description = f"Skill number {index}. Use when the task is about subject {index}."
        (folder / "SKILL.md").write_text(f"---\nname: skill-{index}\ndescription: {description}\n---\n# Body\n")
    return workspace


def _median_ms(workspace: Path) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        find_skills(project_directories(workspace), workspace / "no-config")
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    bundled_skills()  # read once per process, like a server's first session
    for count in (0, 20, 200):
        with tempfile.TemporaryDirectory() as temp:
            workspace = _workspace(Path(temp), count)
            catalog = find_skills(project_directories(workspace), None)
            listed = skill_list(catalog)
            print(
                f"{count:3d} project skills + {len(catalog.skills) - count} bundled: find_skills median "
                f"{_median_ms(workspace):.2f} ms over {RUNS} runs; skill list {len(listed):,} characters, "
                f"{listed.count(chr(10) + '- ')} listed"
            )


if __name__ == "__main__":
    main()
