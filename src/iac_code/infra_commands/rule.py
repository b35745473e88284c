"""Whether a shell command line changes real infrastructure (and so must be asked every time).

The line is parsed as bash would (shell_syntax.py), then every simple command in it is looked
through: wrappers are unwrapped (wrappers.py: `sudo`, `env VAR=x`, `timeout`, `xargs`, `aws-vault exec`,
`npx`, `script -c`…), shell strings are parsed in turn (`sh -c`, `bash -lc`, `eval`, `trap`, `alias`, a
here-document, here-string or an `echo … |` fed to a shell, `bash <(echo …)`), and the program is
recognised by its base name (`/usr/local/bin/terraform` is terraform, `terraform1.5` and `kubectl.1.33`
too). Which subcommands of each tool change things is in clis.py and cloud_clis.py. The arguments
terraform takes from TF_CLI_ARGS and TF_CLI_ARGS_<subcommand> are folded in wherever the line assigns
them (`TF_CLI_ARGS="apply -auto-approve" terraform`, `export TF_CLI_ARGS=…; terraform`, `env X=… terraform`,
a shell the line starts inheriting them), each value and its absence read in turn (terraform_env.py).

What the rule finds is the list of the line's changing commands, unwrapped (`changing_commands`): the
bash tool asks when there is one, and argv.py compares a program about to run with them. A line that
cannot be parsed counts as changing, and so does a program or subcommand computed at run time (`$TF
apply`, `terraform $ACTION`) that could be a changing one; a program taken from a variable, from `"$@"`,
or built by brace expansion (`CMD="terraform apply"; $CMD`, `set -- terraform apply; "$@"`,
`{terraform,apply}`) changes when some text of the line reads as a changing command. A script run by
path or by a shell (`./deploy.sh`, `sh go.sh`), `make`, and `python3 -c …` are not seen into here: the
guard's shims see what they run.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence

from iac_code.infra_commands.clis import CHANGE_CHECKS, TERRAFORM_OPTIONS, UNKNOWN_PROGRAM_CHECKS
from iac_code.infra_commands.shell_syntax import ShellSyntaxError, SimpleCommand, Word, parse_commands
from iac_code.infra_commands.static_text import brace_expanded, static_output, static_substitution
from iac_code.infra_commands.terraform_env import CLI_ARGS, variable_names, with_environment_words
from iac_code.infra_commands.wrappers import ASSIGNMENT, WRAPPERS, option_value, skip_options

MAX_DEPTH = 8  # shells inside shells: deeper than this is taken as changing

Pattern = list[Word]  # a changing command as the line shows it: a dynamic word stands for any words
ANYTHING: Pattern = [Word("<anything>", dynamic=True)]  # what a shell string computed at run time may run
# What a line that cannot be read may run: it is a change, and approving it approves no run (argv.py).
UNREADABLE: Pattern = [Word("<unreadable>", dynamic=True)]
# The values the line (or the run's environment) may give the variables terraform takes arguments from.
Assignments = Mapping[str, Sequence[Word]]
TERRAFORM_PROGRAMS = frozenset({"terraform", "tofu", "tf", "terragrunt"})
_TF_ARGUMENTS = re.compile(rf"^({CLI_ARGS}(?:_[A-Za-z0-9_]*)?)=")
MAX_ENVIRONMENTS = 16  # more combinations of those values than this: the command counts as changing

# `terraform1.5`, `terraform-1.5`, `kubectl.1.33` (the Google Cloud SDK's): the program without its version
_VERSIONED = re.compile(r"^(?P<name>[a-z-]+?)(?:[-_.]?v?\d+(?:\.\d+)*)?$")
RESERVED_PREFIXES = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "coproc"})
RESERVED_SKIP = frozenset({"for", "select", "case", "[[", "[", "test", "fi", "done", "}", "esac", "]]"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
SHELL_OPTIONS_WITH_VALUE = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def is_infrastructure_change(command: str) -> bool:
    """Whether running `command` (a bash command line) may change real infrastructure."""
    return bool(changing_commands(command))


def changing_commands(
    line: str, depth: int = 0, read_texts: bool = True, env: Assignments | None = None
) -> list[Pattern]:
    """The line's commands that change infrastructure, unwrapped; [UNREADABLE] for a line that cannot be read.
    `read_texts`: whether a program computed at run time is looked for in the line's texts (not again in those);
    `env`: the TF_CLI_ARGS* values the line runs under (a shell inherits its parent line's)."""
    if depth > MAX_DEPTH:
        return [UNREADABLE]
    try:
        commands = parse_commands(line)
    except (ShellSyntaxError, RecursionError):
        return [UNREADABLE]
    env = terraform_assignments([word for command in commands for word in command.words], env)
    found: list[Pattern] = []
    from_variables: list[Pattern] = []
    for command in commands:
        words = _strip_prefixes(command.words)
        changing = command_changes(words, command, depth, env)
        found.extend(changing)
        if not changing and words and words[0].dynamic:
            from_variables.append(words)
    # `CMD="terraform apply"; $CMD`: a program computed at run time may be any command the line spells out.
    if from_variables and read_texts and _spells_a_change(commands, depth):
        found.extend(from_variables)
    return found


def program_name(path: str) -> str:
    """The program a path runs, by base name (`/usr/local/bin/terraform1.5` is terraform)."""
    name = path.rsplit("/", 1)[-1]
    match = _VERSIONED.match(name)
    return match.group("name") if match else name


def command_changes(
    words: Sequence[Word], command: SimpleCommand, depth: int, env: Assignments | None = None
) -> list[Pattern]:
    """The changing commands that running `words` (a program and its arguments) amounts to, under the
    TF_CLI_ARGS* values `env` may give."""
    if not words:
        return []
    if depth > MAX_DEPTH:
        return [UNREADABLE]
    args = words[1:]
    if words[0].dynamic:
        resolved = static_substitution(words[0].text)  # `$(echo terraform apply)`
        if resolved is not None:
            return command_changes([*resolved, *args], command, depth + 1, env)
        # Which program runs is decided at run time: changing if these arguments would be for any of them.
        return [list(words)] if any(check(args) for check in UNKNOWN_PROGRAM_CHECKS) else []
    program = program_name(words[0].text)
    if program in WRAPPERS:
        inner = WRAPPERS[program](args)
        if inner is not None:
            return command_changes(inner, command, depth + 1, env)
    if program in TERRAFORM_PROGRAMS and env:
        return terraform_readings(words, env)
    if program in CHANGE_CHECKS:
        return [list(words)] if CHANGE_CHECKS[program](args) else []
    if program in SHELLS:
        return _shell_changes(program, args, command, depth, env)
    return _runs_text(program, args, command, depth, env)


def terraform_assignments(words: Sequence[Word], inherited: Assignments | None = None) -> Assignments:
    """The values `words` assign to TF_CLI_ARGS* anywhere (`X=v cmd`, `export X=v`, `env X=v cmd`), added to
    `inherited`: every one may reach every terraform the line runs (exported or not: the safe side)."""
    found: dict[str, list[Word]] = {name: list(values) for name, values in (inherited or {}).items()}
    for word in words:
        match = _TF_ARGUMENTS.match(word.text)
        if match:
            found.setdefault(match.group(1), []).append(Word(word.text[match.end() :], word.dynamic))
    return found


def line_assignments(line: str) -> Assignments:
    """The values a whole line gives TF_CLI_ARGS* anywhere (terraform_assignments); none for a line that
    cannot be read."""
    try:
        commands = parse_commands(line)
    except (ShellSyntaxError, RecursionError):
        return {}
    return terraform_assignments([word for command in commands for word in command.words])


def terraform_readings(words: Sequence[Word], env: Assignments) -> list[Pattern]:
    """Every reading of a terraform command under the values the line gives its variables (each one, or none)
    that changes, with those arguments folded in as terraform places them (terraform_env.py)."""
    program, args = words[0], words[1:]
    check = CHANGE_CHECKS[program_name(program.text)]
    names = variable_names([word.text for word in args], TERRAFORM_OPTIONS.with_value)
    choices = [[None, *env.get(name, ())] for name in names]
    readings = list(itertools.islice(itertools.product(*choices), MAX_ENVIRONMENTS + 1))
    if len(readings) > MAX_ENVIRONMENTS:
        return [[*words, Word("<TF_CLI_ARGS>", dynamic=True)]]
    found: list[Pattern] = []
    for values in readings:
        if any(value is not None and value.dynamic for value in values):
            return [[*words, Word("<TF_CLI_ARGS>", dynamic=True)]]  # arguments computed at run time: any
        reading = {name: value.text for name, value in zip(names, values, strict=True) if value is not None}
        folded = with_environment_words(args, reading, TERRAFORM_OPTIONS.with_value)
        if folded is None:  # terraform refuses the text and runs nothing; the rule cannot be that sure
            return [[*words, Word("<TF_CLI_ARGS>", dynamic=True)]]
        if check(folded) and [program, *folded] not in found:
            found.append([program, *folded])
    return found


def _runs_text(
    program: str, args: Sequence[Word], command: SimpleCommand, depth: int, env: Assignments | None = None
) -> list[Pattern]:
    """Builtins and tools that run a command given as text: eval, su -c, ssh, watch, find -exec, trap, alias,
    source of a process substitution."""
    if program == "eval":
        return changing_commands(" ".join(w.text for w in args), depth + 1, env=env)
    if program in ("su", "runuser"):
        script = option_value(args, ("-c", "--command"))
        return [] if script is None else changing_commands(script, depth + 1, env=env)
    if program == "ssh":
        return changing_commands(" ".join(w.text for w in _after_host(args)), depth + 1, env=env)
    if program == "watch":
        watched = " ".join(w.text for w in skip_options(args, {"-n", "--interval", "-d"}))
        return changing_commands(watched, depth + 1, env=env)
    if program == "find":
        return [p for part in _find_exec(args) for p in command_changes(part, command, depth + 1, env)]
    if program == "trap":  # `trap 'terraform apply' EXIT`: the text runs on the signal
        rest = skip_options(args, set())
        return changing_commands(rest[0].text, depth + 1, env=env) if rest and not rest[0].dynamic else []
    if program in ("source", ".") and args and args[0].text.startswith("<("):  # `source <(echo …)`
        output = static_output(args[0].text[2:-1])
        return [] if output is None else changing_commands(output, depth + 1, env=env)
    if program == "alias":  # `alias up='terraform apply'`: what the alias will run
        values = [w.text.split("=", 1)[1] for w in args if "=" in w.text]
        return [p for value in values for p in changing_commands(value, depth + 1, env=env)]
    return []


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
        if text in RESERVED_PREFIXES or ASSIGNMENT.match(text):
            index += 1
            if text == "time":
                while index < len(words) and words[index].text.startswith("-"):
                    index += 1
            continue
        break
    return words[index:]


def _spells_a_change(commands: list[SimpleCommand], depth: int) -> bool:
    """Whether some text of the line reads as a changing command: a word (an assignment's value, a quoted
    string, a brace expansion; split at an `IFS` the line sets), the tail of a command's words (`set --
    terraform apply`, `printf -v X %s terraform apply`), or the text a command reads on stdin."""
    separators = "".join(w.text[4:] for c in commands for w in c.words if w.text.startswith("IFS=") and not w.dynamic)
    for command in commands:
        texts = [text for word in command.words if (text := _spelled_text(word))]
        if command.stdin_text is not None:
            texts.append(command.stdin_text)
        for text in texts:
            for separator in separators:
                text = text.replace(separator, " ")
            # one word alone is no changing command (`X=terraform; $X apply` is judged by its arguments)
            if len(text.split()) > 1 and changing_commands(text, depth + 1, read_texts=False):
                return True
        static_words = [w for w in command.words if not w.dynamic]
        for start in range(1, len(static_words)):
            if command_changes(static_words[start:], command, depth + 1):
                return True
    return False


def _spelled_text(word: Word) -> str | None:
    """The text a word spells that may be run later: its value if an assignment, the words of a brace
    expansion; a word computed at run time spells nothing more (its text is the expansion itself)."""
    if ASSIGNMENT.match(word.text):
        return word.text.split("=", 1)[1]
    expanded = brace_expanded(word.text)
    return expanded if expanded != word.text or not word.dynamic else None


def _shell_changes(
    program: str, args: Sequence[Word], command: SimpleCommand, depth: int, env: Assignments | None = None
) -> list[Pattern]:
    if program == "busybox":
        if not args or program_name(args[0].text) not in SHELLS - {"busybox"}:
            return []
        args = args[1:]
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
        if not operands:
            return []
        return [ANYTHING] if operands[0].dynamic else changing_commands(operands[0].text, depth + 1, env=env)
    if operands and operands[0].text != "-":
        script = operands[0].text
        if script.startswith("<(") and script.endswith(")"):  # `bash <(echo terraform apply)`
            output = static_output(script[2:-1])
            return [] if output is None else changing_commands(output, depth + 1, env=env)
        return []  # a script file: what it runs, the shims see
    stdin = _stdin_script(command)
    return [] if stdin is None else changing_commands(stdin, depth + 1, env=env)


def _stdin_script(command: SimpleCommand) -> str | None:
    """What a shell reading its stdin gets: a here-document or here-string, or what a static pipe feeds it."""
    if command.stdin_text is not None:
        return command.stdin_text
    if command.piped_from is None:
        return None
    return static_output(command.piped_from)


def _after_host(args: Sequence[Word]) -> list[Word]:
    """The remote command of `ssh [options] host command...`."""
    with_value = set("bcDEeFIiJLlmOoPpQRSWw")
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        text = args[index].text
        index += 2 if len(text) == 2 and text[1] in with_value else 1
    return list(args[index + 1 :])


def _find_exec(args: Sequence[Word]) -> list[list[Word]]:
    """The commands of `find ... -exec CMD ... ;` (and -execdir, -ok, -okdir); `{}` is each file found."""
    commands: list[list[Word]] = []
    index = 0
    while index < len(args):
        if args[index].text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            commands.append([Word(w.text, w.dynamic or "{}" in w.text) for w in args[index + 1 : end]])
            index = end
        index += 1
    return commands


def simple_commands(line: str, depth: int = 0) -> list[list[Word]] | None:
    """Every simple command the line runs, as the permission rules match them (agent/rules.py): wrappers
    unwrapped (`sudo`, `env X=1`, `timeout`…), shell strings parsed in turn (`bash -c '…'`, `eval`, a
    here-document fed to a shell), leading assignments and reserved words dropped. A command whose program
    is computed at run time is kept as it is (its first word dynamic). None: the line cannot be read."""
    if depth > MAX_DEPTH:
        return None
    try:
        commands = parse_commands(line)
    except (ShellSyntaxError, RecursionError):
        return None
    found: list[list[Word]] = []
    for command in commands:
        unwrapped = _unwrapped(_strip_prefixes(command.words), command, depth)
        if unwrapped is None:
            return None
        found.extend(unwrapped)
    return found


def _unwrapped(words: list[Word], command: SimpleCommand, depth: int) -> list[list[Word]] | None:
    if not words:
        return []
    if depth > MAX_DEPTH:
        return None
    if words[0].dynamic:
        resolved = static_substitution(words[0].text)  # `$(echo kubectl) delete`
        return [words] if resolved is None else _unwrapped([*resolved, *words[1:]], command, depth + 1)
    program, args = program_name(words[0].text), words[1:]
    if program in WRAPPERS and (inner := WRAPPERS[program](args)) is not None:
        return _unwrapped(_strip_prefixes(inner), command, depth + 1)
    script = _shell_script(program, args, command)
    if isinstance(script, Word):  # `bash -c "$X"`: what runs is computed at run time
        return [[script]]
    if script is not None:
        return simple_commands(script, depth + 1)
    return [words]


def _shell_script(program: str, args: Sequence[Word], command: SimpleCommand) -> str | Word | None:
    """The text a shell (or eval) runs when the line shows it: `bash -c TEXT`, `eval TEXT`, a shell fed a
    here-document or a static pipe; the word itself when it is computed at run time; None for anything else
    (a script file runs what the shims see)."""
    if program == "eval":
        return " ".join(w.text for w in args)
    if program not in SHELLS or program == "busybox":
        return None
    run_string, index = False, 0
    while index < len(args) and args[index].text.startswith(("-", "+")) and args[index].text not in ("-", "+", "--"):
        text = args[index].text
        run_string = run_string or (not text.startswith("--") and "c" in text[1:])
        index += 2 if text in SHELL_OPTIONS_WITH_VALUE else 1
    operands = args[index + (index < len(args) and args[index].text == "--") :]
    if run_string:
        return (operands[0] if operands[0].dynamic else operands[0].text) if operands else None
    return _stdin_script(command) if not operands else None
