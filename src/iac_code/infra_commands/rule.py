"""Whether a shell command line changes real infrastructure (and so must be asked every time).

The line is parsed as bash would (shell_syntax.py), then every simple command in it is looked
through: wrappers are unwrapped (`sudo`, `env VAR=x`, `nohup`, `time`, `timeout`, `nice`, `xargs`,
`watch`, `ssh host ...`, `find -exec`...), shell strings are parsed in turn (`sh -c`, `bash -lc`,
`eval`, a here-document or an `echo ... |` fed to a shell), and the program is recognised by its base
name (`/usr/local/bin/terraform` is terraform, `terraform1.5` too). Which subcommands of terraform,
tofu, terragrunt, pulumi, kubectl, helm, aws cloudformation, aliyun ros, cdk and sam change things is
in clis.py.

A line that cannot be parsed counts as changing, and so does a program or subcommand computed at run
time (`$TF apply`, `terraform $ACTION`, `CMD="terraform apply"; $CMD`) that could be a changing one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from iac_code.infra_commands.clis import CHANGE_CHECKS
from iac_code.infra_commands.shell_syntax import ShellSyntaxError, SimpleCommand, Word, parse_commands

MAX_DEPTH = 8  # shells inside shells: deeper than this is taken as changing

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_VERSIONED = re.compile(r"^(?P<name>[a-z-]+?)(?:[-_]?v?\d+(?:\.\d+)*)?$")
RESERVED_PREFIXES = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "coproc"})
RESERVED_SKIP = frozenset({"for", "select", "case", "[[", "[", "test", "fi", "done", "}", "esac", "]]"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
SHELL_OPTIONS_WITH_VALUE = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def is_infrastructure_change(command: str) -> bool:
    """Whether running `command` (a bash command line) may change real infrastructure."""
    try:
        commands = parse_commands(command)
    except (ShellSyntaxError, RecursionError):
        return True
    if any(_changes(c, 0) for c in commands):
        return True
    # `CMD="terraform apply"; $CMD`: a program taken from a variable may be any command the line assigns.
    if any(words and words[0].dynamic for words in (_strip_prefixes(c.words) for c in commands)):
        return any(_line_changes(value, 1) for value in _assigned_values(commands))
    return False


def _assigned_values(commands: list[SimpleCommand]) -> list[str]:
    values = []
    for command in commands:
        for word in command.words:
            match = _ASSIGNMENT.match(word.text)
            if match:
                values.append(word.text[match.end() :])
    return values


def _changes(command: SimpleCommand, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return True
    return _words_change(_strip_prefixes(command.words), command, depth)


def _line_changes(line: str, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return True
    try:
        commands = parse_commands(line)
    except (ShellSyntaxError, RecursionError):
        return True
    return any(_changes(c, depth) for c in commands)


def _strip_prefixes(words: list[Word]) -> list[Word]:
    """Drop leading reserved words (`if`, `do`, `!`...) and variable assignments; nothing for `for x in`."""
    index = 0
    while index < len(words):
        text = words[index].text
        if text in RESERVED_SKIP:
            return []
        if text == "function":  # function name { body: the body is read as commands
            index += 2
            continue
        if text in RESERVED_PREFIXES or (not words[index].dynamic and _ASSIGNMENT.match(text)):
            index += 1
            if text == "time":
                while index < len(words) and words[index].text.startswith("-"):
                    index += 1
            continue
        break
    return words[index:]


def _program(word: Word) -> str:
    return program_name(word.text)


def program_name(path: str) -> str:
    """The program a path runs, by base name (`/usr/local/bin/terraform1.5` is terraform)."""
    name = path.rsplit("/", 1)[-1]
    match = _VERSIONED.match(name)
    return match.group("name") if match else name


def _words_change(words: list[Word], command: SimpleCommand, depth: int) -> bool:
    if not words:
        return False
    args = words[1:]
    if words[0].dynamic:
        # Which program runs is decided at run time: changing if these arguments would be for any of them.
        return any(check(args) for check in CHANGE_CHECKS.values())
    program = _program(words[0])
    if program in CHANGE_CHECKS:
        return CHANGE_CHECKS[program](args)
    if program in WRAPPERS:
        inner = WRAPPERS[program](args)
        return inner is not None and _words_change(inner, command, depth + 1)
    if program in SHELLS:
        return _shell_changes(program, args, command, depth)
    if program == "eval":
        return _line_changes(" ".join(w.text for w in args), depth + 1)
    if program in ("su", "runuser"):
        script = _option_value(args, ("-c", "--command"))
        return script is not None and _line_changes(script, depth + 1)
    if program == "ssh":
        return _line_changes(" ".join(w.text for w in _after_host(args)), depth + 1)
    if program == "watch":
        return _line_changes(" ".join(w.text for w in _skip_options(args, {"-n", "--interval", "-d"})), depth + 1)
    if program == "find":
        return any(_words_change(part, command, depth + 1) for part in _find_exec(args))
    return False


# --- wrappers: programs that run the rest of their arguments as a command ----------------------------------


def _skip_options(args: Sequence[Word], with_value: set[str] | frozenset[str]) -> list[Word]:
    """The arguments after the wrapper's own options (`--` ends them; `-x VALUE` for options in `with_value`)."""
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--":
            return list(args[index + 1 :])
        if not text.startswith("-") or text == "-" or args[index].dynamic:
            break
        # `-u admin`, and `-iu admin` (short options bundled, the last one taking the value)
        takes_value = text in with_value or (not text.startswith("--") and f"-{text[-1]}" in with_value)
        index += 2 if takes_value else 1
    return list(args[index:])


def _env(args: Sequence[Word]) -> list[Word] | None:
    rest = _skip_options(args, {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})
    split = _option_value(args, ("-S", "--split-string"))
    if split is not None:  # env -S "terraform apply": the string is split into words
        rest = [Word(part) for part in split.split()] + rest
    while rest and not rest[0].dynamic and _ASSIGNMENT.match(rest[0].text):
        rest = rest[1:]
    return rest


def _command_builtin(args: Sequence[Word]) -> list[Word] | None:
    if any(w.text in ("-v", "-V") for w in args[:2]):
        return None  # `command -v terraform` only looks the program up
    return _skip_options(args, set())


def _timeout(args: Sequence[Word]) -> list[Word]:
    rest = _skip_options(args, {"-s", "--signal", "-k", "--kill-after"})
    return rest[1:]  # the duration


def _xargs(args: Sequence[Word]) -> list[Word] | None:
    with_value = {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args",
                  "--max-procs", "--max-chars", "--max-lines", "--process-slot-var"}  # fmt: skip
    rest = _skip_options(args, with_value)
    return rest or None  # no command: xargs runs echo


def _flock(args: Sequence[Word]) -> list[Word] | None:
    script = _option_value(args, ("-c", "--command"))
    if script is not None:
        return [Word("sh"), Word("-c"), Word(script)]
    rest = _skip_options(args, {"-w", "--timeout", "-E", "--conflict-exit-code"})
    return rest[1:]  # the lock file


WRAPPERS: dict[str, Callable[[Sequence[Word]], list[Word] | None]] = {
    "sudo": lambda a: _skip_options(
        a, {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"}
    ),
    "doas": lambda a: _skip_options(a, {"-u", "-C"}),
    "env": _env,
    "nohup": lambda a: _skip_options(a, set()),
    "setsid": lambda a: _skip_options(a, set()),
    "exec": lambda a: _skip_options(a, {"-a"}),
    "builtin": lambda a: list(a),
    "command": _command_builtin,
    "time": lambda a: _skip_options(a, {"-o", "--output", "-f", "--format"}),
    "timeout": _timeout,
    "nice": lambda a: _skip_options(a, {"-n", "--adjustment"}),
    "ionice": lambda a: _skip_options(a, {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "stdbuf": lambda a: _skip_options(a, {"-i", "-o", "-e"}),
    "chronic": lambda a: _skip_options(a, set()),
    "unbuffer": lambda a: _skip_options(a, set()),
    "xargs": _xargs,
    "flock": _flock,
}


def _shell_changes(program: str, args: Sequence[Word], command: SimpleCommand, depth: int) -> bool:
    if program == "busybox":
        if not args or _program(args[0]) not in SHELLS - {"busybox"}:
            return False
        program, args = _program(args[0]), args[1:]
    run_string = False
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--" or not text.startswith(("-", "+")) or text in ("-", "+"):
            index += text == "--"
            break
        if text in SHELL_OPTIONS_WITH_VALUE:
            index += 2
            continue
        if not text.startswith("--") and "c" in text[1:]:
            run_string = True
        index += 1
    operands = args[index:]
    if run_string:
        return bool(operands) and (operands[0].dynamic or _line_changes(operands[0].text, depth + 1))
    if operands:
        return False  # a script file: what it does cannot be seen from here
    script = _stdin_script(command)
    return script is not None and _line_changes(script, depth + 1)


def _stdin_script(command: SimpleCommand) -> str | None:
    """What a shell reading its stdin gets: a here-document, or the text an `echo`/`printf`/`cat` pipes in."""
    if command.stdin_text is not None:
        return command.stdin_text
    source = command.piped_from
    if source is None or not source.words:
        return None
    name = _program(source.words[0])
    texts = [w.text for w in source.words[1:]]
    if name == "echo":
        return " ".join(t for t in texts if t not in ("-e", "-n", "-E"))
    if name == "printf":
        return " ".join(texts)
    if name == "cat" and not texts:
        return source.stdin_text
    return None


def _option_value(args: Sequence[Word], names: tuple[str, ...]) -> str | None:
    for index, word in enumerate(args):
        for name in names:
            if word.text == name and index + 1 < len(args):
                return args[index + 1].text
            if name.startswith("--") and word.text.startswith(name + "="):
                return word.text[len(name) + 1 :]
    return None


def _after_host(args: Sequence[Word]) -> list[Word]:
    """The remote command of `ssh [options] host command...`."""
    with_value = set("bcDEeFIiJLlmOoPpQRSWw")
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        text = args[index].text
        index += 2 if len(text) == 2 and text[1] in with_value else 1
    return list(args[index + 1 :])


def _find_exec(args: Sequence[Word]) -> list[list[Word]]:
    """The commands of `find ... -exec CMD ... ;` (and -execdir, -ok, -okdir)."""
    commands: list[list[Word]] = []
    index = 0
    while index < len(args):
        if args[index].text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            commands.append(list(args[index + 1 : end]))
            index = end
        index += 1
    return commands
