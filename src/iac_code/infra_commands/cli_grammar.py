"""A CLI's options read strictly, as the CLI parses them, for the read-only allow-list (read_only.py).

Unlike options.py, which keeps every reading of an unknown option and takes the changing side, this reading
gives up (None) on what it cannot be sure of: an unknown option before the subcommand, a value-taking option
without its value, an option of `denied` anywhere. After the first operand an unknown option is the
subcommand's own (the CLI rejects one it does not know before it calls anything) and is taken as a flag;
the global options are looked for there too, since these CLIs take them anywhere (`kubectl get pods
--server=…`). Single-dash letters bundle as Go's pflag and most CLIs bundle them (`-As x` is `-A -s x`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

# Words of a command name that hand out a credential or a secret rather than describe a resource: such a
# "read" (`aws ecr get-login-password`, `az storage account keys list`) is no read-only form.
CREDENTIAL_WORDS = frozenset(
    {"token", "tokens", "credential", "credentials", "password", "passwords", "secret", "secrets", "key", "keys",
     "login", "auth", "authorization", "sas", "connection", "kubeconfig", "access", "decrypt", "presign",
     "presigned", "embed", "signed"}
)  # fmt: skip


class ReadForm(Enum):
    """How a known read-only form reads (read_only.py)."""

    PURE = "pure"  # it runs nothing the agent could have written: the credentials may go to it unasked
    # Read-only by the CLI's grammar, but it runs code or configuration from the working directory, which the
    # agent can write (terraform plan's `data "external"` programs and provider binaries, a backend block's
    # endpoint, pulumi's program, terragrunt's hooks): given the credentials, that code can change anything.
    RUNS_WORKSPACE_CODE = "runs workspace code"


_CAMEL_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


@dataclass(frozen=True)
class Grammar:
    """A CLI's global options: which take a value, which do not, which no read-only run may carry."""

    with_value: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    denied: frozenset[str] = frozenset()  # they send the credentials elsewhere, or run a program with them
    local_with_value: frozenset[str] = frozenset()  # the subcommands' own value-taking options, where known
    bundles: bool = True  # False: a single dash starts a long name (`-chdir`), as with terraform

    def takes_value(self, name: str) -> bool:
        return name in self.with_value or name in self.local_with_value


@dataclass
class Call:
    """What a strict reading found: the operands in order, the options as (name, value or None)."""

    operands: list[str] = field(default_factory=list)
    options: list[tuple[str, str | None]] = field(default_factory=list)
    first_operand: int = -1  # its index in the arguments

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def value(self, name: str) -> str | None:
        return next((value for option, value in reversed(self.options) if option == name), None)


def parse_call(args: Sequence[str], grammar: Grammar) -> Call | None:
    """The strict reading of `args` (after the program name); None when it cannot be sure."""
    call = Call()
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            if not call.operands and index < len(args):
                call.first_operand = index
            call.operands.extend(args[index:])
            break
        if not word.startswith("-") or word == "-":
            if not call.operands:
                call.first_operand = index - 1
            call.operands.append(word)
            continue
        read = _option(word, grammar)
        if read is None:
            return None
        names, inline = read
        if any(name in grammar.denied for name in names):
            return None
        known = grammar.with_value | grammar.flags
        if not call.operands and any(name not in known for name in names):
            return None
        value = inline
        if inline is None and grammar.takes_value(names[-1]):
            if index >= len(args):
                return None
            value = args[index]
            index += 1
        call.options.extend((name, None) for name in names[:-1])
        call.options.append((names[-1], value))
    return call


def _option(word: str, grammar: Grammar) -> tuple[list[str], str | None] | None:
    """The option names a word carries and its value written in it (`--x=1`, `-nprod`), if any."""
    if word.startswith("--") or not grammar.bundles:
        name, equals, value = word.partition("=")
        return [name], value if equals else None
    if len(word) > 2 and word[2] == "=":  # `-n=prod`
        return [word[:2]], word[3:]
    names: list[str] = []
    for position, letter in enumerate(word[1:], start=1):
        name = "-" + letter
        names.append(name)
        if grammar.takes_value(name):
            rest = word[position + 1 :]
            return names, rest or None
    return names, None


def command_words(text: str) -> set[str]:
    """The words of a command name, lower case: `get-login-password` and `GetLoginPassword` alike."""
    words: set[str] = set()
    for part in re.split(r"[-_\s]+", text):
        words.update(match.lower() for match in _CAMEL_WORD.findall(part))
    return words


def names_a_credential(*names: str) -> bool:
    return any(command_words(name) & CREDENTIAL_WORDS for name in names)
