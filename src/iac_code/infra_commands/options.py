"""How a CLI's options before its subcommand read: which take a value (`-n prod`), which do not.

`kubectl -n get delete namespace prod` deletes: `get` is the namespace. Each CLI has a table of its global
options that take a value; `--opt=value` and `-nvalue` carry theirs. An option in neither table may or may
not take the next word, so both readings are kept and the command changes if either reading does (the safe
side). `--` ends the options: every word after it is an operand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iac_code.infra_commands.shell_syntax import Word

MAX_STATES = 512  # more ways to read one command than this: the caller takes the changing side


@dataclass(frozen=True)
class Options:
    with_value: frozenset[str] = frozenset()  # "-n", "--namespace"
    flags: frozenset[str] = frozenset()  # known to take no value

    def steps(self, text: str) -> tuple[int, ...]:
        """How many words an option `text` spans: (1,), (2,), or both (1, 2) when that cannot be told."""
        if "=" in text or text in self.flags:  # `--context=prod`, `-chdir=envs/prod`
            return (1,)
        if text in self.with_value:
            return (2,)
        if text.startswith("--"):
            return (1, 2)
        # `-nprod` (the value attached), `-iu admin` (flags bundled, the last one taking the value)
        for position, char in enumerate(text[1:], start=1):
            if "-" + char in self.with_value:
                return (1,) if position + 1 < len(text) else (2,)
            if "-" + char not in self.flags:
                return (1, 2)
        return (1,)


def is_option(word: Word) -> bool:
    return word.text.startswith("-") and word.text != "-"


def operand_readings(args: Sequence[Word], options: Options, count: int) -> set[tuple[int, ...]] | None:
    """For every way of reading the options, the indices of the first `count` operands (fewer when there are
    fewer); None when there are too many ways to tell."""
    readings: set[tuple[int, ...]] = set()
    todo: list[tuple[int, tuple[int, ...], bool]] = [(0, (), False)]
    seen: set[tuple[int, tuple[int, ...], bool]] = set()
    while todo:
        state = todo.pop()
        if state in seen:
            continue
        seen.add(state)
        if len(seen) > MAX_STATES:
            return None
        index, found, ended = state
        if len(found) == count or index >= len(args):
            readings.add(found)
            continue
        word = args[index]
        if ended or not is_option(word):
            todo.append((index + 1, (*found, index), ended))
        elif word.text == "--":
            todo.append((index + 1, found, True))
        else:
            todo.extend((index + step, found, ended) for step in options.steps(word.text))
    return readings


def options_end(args: Sequence[Word]) -> Sequence[Word]:
    """The arguments before `--` (after it, `--dry-run` is an operand for the program run, not an option)."""
    for index, word in enumerate(args):
        if word.text == "--":
            return args[:index]
    return args


def last_flag_value(
    args: Sequence[Word], name: str, negation: str | None = None, options: Options | None = None
) -> str | None:
    """The value of the last `name` / `name=value` before `--` ("" for a bare flag, "false" for `negation`),
    or None when absent; a value computed at run time reads as "?". With `options`, a word that may be the
    value of the option before it (one that takes a value, or an unknown one) is no flag: pflag gives
    `--cache-dir` the next word, `--dry-run=server` included."""
    value: str | None = None
    may_be_a_value = False
    for word in options_end(args):
        if not may_be_a_value:
            if word.text == name or word.text.startswith(name + "="):
                value = "?" if word.dynamic else word.text[len(name) + 1 :]
            elif negation is not None and word.text == negation:
                value = "false"
        may_be_a_value = options is not None and is_option(word) and 2 in options.steps(word.text)
    return value
