"""Wrappers: programs that run the rest of their arguments as a command, and how to find that command.

Each takes the wrapper's arguments and gives the words of the command it runs, None when it runs none
(`command -v terraform`, `taskset -p 1 42`), or `sh -c SCRIPT` for one that runs a shell string
(`script -qc "…"`, `npx -c "…"`, `flock -c "…"`). The launchers of package binaries (`npx`, `pnpm dlx`,
`yarn dlx`, `bunx`…) give the binary by its program name: `npx aws-cdk@2 deploy` runs `cdk deploy`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from iac_code.infra_commands.shell_syntax import Word

Unwrap = Callable[[Sequence[Word]], "list[Word] | None"]

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
# infrastructure CLIs installed as a project's npm packages, which `yarn NAME …` and `pnpm NAME …` run
PACKAGE_CLIS = frozenset({"cdk", "cdktf", "ros-cdk", "pulumi", "aws-cdk", "cdktf-cli"})
# npm packages whose binary has another name
PACKAGE_BINARIES = {"aws-cdk": "cdk", "cdktf-cli": "cdktf", "@alicloud/ros-cdk-cli": "ros-cdk", "@pulumi/cli": "pulumi"}


def skip_options(args: Sequence[Word], with_value: set[str] | frozenset[str]) -> list[Word]:
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


def option_value(args: Sequence[Word], names: tuple[str, ...]) -> str | None:
    """The value of the first of the options `names` (`-c VALUE`, `-qc VALUE`, `-IVALUE`, `--command=VALUE`)."""
    for index, word in enumerate(args):
        for name in names:
            short = len(name) == 2
            bundled = short and re.fullmatch(rf"-[A-Za-z]*{name[1]}", word.text) is not None
            if (word.text == name or bundled) and index + 1 < len(args):
                return args[index + 1].text
            if short and word.text.startswith(name) and len(word.text) > 2:
                return word.text[2:]
            if name.startswith("--") and word.text.startswith(name + "="):
                return word.text[len(name) + 1 :]
    return None


def own_option_value(args: Sequence[Word], names: tuple[str, ...], with_value: set[str]) -> str | None:
    """option_value among the wrapper's own options, before its command (`npx cdk deploy -c env=prod`: that
    `-c` is cdk's)."""
    rest = skip_options(args, with_value | set(names))
    return option_value(args[: len(args) - len(rest)], names)


def _shell(script: str) -> list[Word]:
    return [Word("sh"), Word("-c"), Word(script)]


def _after(
    with_value: set[str], positionals: int = 0, shell_options: tuple[str, ...] = (), dash_dash: bool = False
) -> Unwrap:
    """A wrapper whose options come first, then `positionals` operands of its own, then the command; with
    `dash_dash`, a `--` anywhere starts the command (`aws-vault exec PROFILE --duration 1h -- terraform …`)."""

    def unwrap(args: Sequence[Word]) -> list[Word] | None:
        script = own_option_value(args, shell_options, with_value) if shell_options else None
        if script is not None:
            return _shell(script)
        texts = [word.text for word in args]
        if dash_dash and "--" in texts:
            return list(args[texts.index("--") + 1 :]) or None
        rest = skip_options(args, with_value)
        return rest[positionals:] or None

    return unwrap


def _subcommands(table: Mapping[str, Unwrap]) -> Unwrap:
    """A tool with a subcommand that runs a command (`doppler run …`, `aws-vault exec PROFILE …`)."""

    def unwrap(args: Sequence[Word]) -> list[Word] | None:
        if not args or args[0].text not in table:
            return None
        return table[args[0].text](args[1:])

    return unwrap


def _package_runner(with_value: set[str], shell_options: tuple[str, ...] = ()) -> Unwrap:
    """npx and its kind: the first operand is a package (maybe `name@version`) whose binary runs."""
    base = _after(with_value | set(shell_options), shell_options=shell_options)

    def unwrap(args: Sequence[Word]) -> list[Word] | None:
        words = base(args)
        if not words or words[0].dynamic or words[0].text == "sh":
            return words
        name = words[0].text
        name = name[: name.index("@", 1)] if "@" in name[1:] else name
        return [Word(PACKAGE_BINARIES.get(name, name)), *words[1:]]

    return unwrap


ENV_OPTIONS = {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}


def _env(args: Sequence[Word]) -> list[Word] | None:
    rest = skip_options(args, ENV_OPTIONS)
    split = own_option_value(args, ("-S", "--split-string"), ENV_OPTIONS)
    if split is not None:  # env -S "terraform apply": the string is split into words
        rest = [Word(part) for part in split.split()] + rest
    return _skip_assignments(rest)


def _skip_assignments(words: list[Word]) -> list[Word]:
    while words and ASSIGNMENT.match(words[0].text):
        words = words[1:]
    return words


def _command_builtin(args: Sequence[Word]) -> list[Word] | None:
    if any(w.text in ("-v", "-V") for w in args[:2]):
        return None  # `command -v terraform` only looks the program up
    return skip_options(args, set())


XARGS_OPTIONS = {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args",
                 "--max-procs", "--max-chars", "--max-lines", "--process-slot-var", "--replace"}  # fmt: skip


def _xargs(args: Sequence[Word]) -> list[Word] | None:
    rest = skip_options(args, XARGS_OPTIONS)
    if not rest:
        return None  # no command: xargs runs echo
    replace = own_option_value(args, ("-I", "--replace"), XARGS_OPTIONS)
    if replace is not None:  # `xargs -I{} kubectl delete pod {}`: the words with {} are read from stdin
        return [Word(w.text, w.dynamic or replace in w.text) for w in rest]
    return [*rest, Word("<stdin>", dynamic=True)]  # `echo apply | xargs terraform`: the words come from stdin


def _flock(args: Sequence[Word]) -> list[Word] | None:
    script = option_value(args, ("-c", "--command"))
    if script is not None:
        return _shell(script)
    rest = skip_options(args, {"-w", "--timeout", "-E", "--conflict-exit-code"})
    return rest[1:]  # the lock file


def _parallel(args: Sequence[Word]) -> list[Word] | None:
    """GNU parallel: `parallel kubectl delete pod ::: a b` runs the command with each argument appended;
    without a command, each argument is a command line."""
    rest = skip_options(args, PARALLEL_OPTIONS)
    texts = [word.text for word in rest]
    end = next((i for i, text in enumerate(texts) if text.startswith(":::")), len(texts))
    if end:
        return [*rest[:end], Word("<arguments>", dynamic=True)]
    lines = [text for text in texts[1:] if not text.startswith(":::")]
    return _shell("\n".join(lines)) if lines else None


PARALLEL_OPTIONS = {"-j", "-P", "--jobs", "-S", "--sshlogin", "--joblog", "-a", "--arg-file", "--delay", "--timeout",
                    "-d", "--delimiter", "-I", "-n", "--max-args", "--results", "--tmpdir", "--workdir"}  # fmt: skip


def _pid_mode(unwrap: Unwrap) -> Unwrap:
    """taskset, chrt and prlimit with `-p PID` act on a running process and run nothing."""
    return lambda args: None if any(w.text in ("-p", "--pid") for w in args) else unwrap(args)


def _sg(args: Sequence[Word]) -> list[Word] | None:
    """`sg GROUP [-c] COMMAND`: the command is a string for /bin/sh."""
    rest = [w for w in args[1:] if w.text != "-c"]
    return _shell(" ".join(w.text for w in rest)) if rest else None


def _package_manager(subcommands: Mapping[str, Unwrap], binaries: frozenset[str]) -> Unwrap:
    """yarn and pnpm: `yarn dlx …`, `pnpm exec …`, and `yarn cdk deploy`, which runs the package's binary."""
    named = _subcommands(subcommands)

    def unwrap(args: Sequence[Word]) -> list[Word] | None:
        if args and args[0].text in binaries:
            return list(args)
        return named(args)

    return unwrap


def _microk8s(args: Sequence[Word]) -> list[Word] | None:
    """`microk8s kubectl …`, `microk8s helm3 …`: its own kubectl and helm (microk8s's other subcommands: clis.py)."""
    if args and args[0].text in ("kubectl", "helm", "helm3"):
        return [Word("kubectl" if args[0].text == "kubectl" else "helm"), *args[1:]]
    return None


PYTHON_OPTIONS_WITH_VALUE = {"-W", "-X", "--check-hash-based-pycs"}


def _python(args: Sequence[Word]) -> list[Word] | None:
    """`python3 -m awscli …` is the aws CLI (its `aws` script does just that); any other module or script runs
    what the shims see."""
    index = 0
    while index < len(args) and args[index].text.startswith("-") and not args[index].text.startswith("-m"):
        index += 2 if args[index].text in PYTHON_OPTIONS_WITH_VALUE else 1
    rest = list(args[index:])
    if rest[:1] and rest[0].text == "-mawscli":
        return [Word("aws"), *rest[1:]]
    if len(rest) > 1 and rest[0].text == "-m" and rest[1].text == "awscli":
        return [Word("aws"), *rest[2:]]
    return None


SUDO_OPTIONS = {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"}
SYSTEMD_RUN_OPTIONS = {"-u", "--unit", "-p", "--property", "--description", "--slice", "-E", "--setenv", "--uid",
                       "--gid", "--working-directory", "-M", "--machine", "-H", "--host"}  # fmt: skip
NPM_OPTIONS = {"-p", "--package", "--cache", "--registry", "--userconfig", "-w", "--workspace"}
NPX = _package_runner(NPM_OPTIONS, ("-c", "--call"))
DASH_DASH_RUNNER = _after({"-p", "--project", "-c", "--config", "--token", "--mount", "--mount-format",
                           "--mount-template", "--fallback", "--name-transformer", "--scope", "--env-file",
                           "--environment", "--env", "--path", "--projectId", "-e"}, shell_options=("--command",),
                          dash_dash=True)  # fmt: skip

WRAPPERS: dict[str, Unwrap] = {
    "sudo": lambda a: skip_options(a, SUDO_OPTIONS),
    "doas": lambda a: skip_options(a, {"-u", "-C"}),
    "env": _env,
    "nohup": lambda a: skip_options(a, set()),
    "setsid": lambda a: skip_options(a, set()),
    "exec": lambda a: skip_options(a, {"-a"}),
    "builtin": lambda a: list(a),
    "command": _command_builtin,
    "time": lambda a: skip_options(a, {"-o", "--output", "-f", "--format"}),
    "timeout": _after({"-s", "--signal", "-k", "--kill-after"}, positionals=1),  # the duration
    "nice": lambda a: skip_options(a, {"-n", "--adjustment"}),
    "ionice": lambda a: skip_options(a, {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "stdbuf": lambda a: skip_options(a, {"-i", "-o", "-e"}),
    "chronic": lambda a: skip_options(a, set()),
    "unbuffer": lambda a: skip_options(a, set()),
    "xargs": _xargs,
    "flock": _flock,
    "parallel": _parallel,
    "taskset": _pid_mode(_after(set(), positionals=1)),  # the CPU mask or list
    "chrt": _pid_mode(_after({"-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"}, 1)),
    "prlimit": _pid_mode(_after({"-o", "--output"})),
    "firejail": _after(set()),
    "dbus-run-session": _after({"--config-file", "--dbus-daemon"}),
    "cgexec": _after({"-g"}),
    "unshare": _after({"-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd"}),
    "nsenter": _after({"-t", "--target", "-S", "-G", "--setuid", "--setgid", "-r", "-w"}),
    "systemd-run": _after(SYSTEMD_RUN_OPTIONS),
    "chroot": _after({"--userspec", "--groups"}, positionals=1),
    "strace": _after({"-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-P", "-X"}),
    "script": lambda a: _shell(s) if (s := option_value(a, ("-c", "--command"))) is not None else None,
    "sg": _sg,
    "npx": NPX,
    "pnpx": NPX,
    "bunx": NPX,
    "npm": _subcommands({"exec": NPX, "x": NPX}),
    "pnpm": _package_manager({"dlx": NPX, "exec": NPX}, PACKAGE_CLIS),
    "yarn": _package_manager({"dlx": NPX, "exec": NPX}, PACKAGE_CLIS),
    "bun": _subcommands({"x": NPX}),
    "aws-vault": _subcommands(
        {"exec": _after({"-d", "--duration", "-t", "--mfa-token", "--region", "--prompt"}, 1, dash_dash=True)}
    ),
    "doppler": _subcommands({"run": DASH_DASH_RUNNER}),
    "infisical": _subcommands({"run": DASH_DASH_RUNNER}),
    "op": _subcommands({"run": DASH_DASH_RUNNER}),
    "saml2aws": _subcommands({"exec": DASH_DASH_RUNNER}),
    "direnv": _subcommands({"exec": _after(set(), positionals=1)}),  # the directory
    "dotenv": _after({"-e", "-v", "-c", "-p", "-f", "--file"}, dash_dash=True),
    "env-cmd": _after({"-f", "--file", "-e", "--environments", "-r", "--rc-file"}),
    "cross-env": lambda a: _skip_assignments(list(a)),
    "poetry": _subcommands({"run": _after(set())}),
    "pipenv": _subcommands({"run": _after(set())}),
    "uv": _subcommands({"run": _after({"--with", "--python", "-p", "--directory", "--project", "--env-file"})}),
    "bundle": _subcommands({"exec": _after(set())}),
    "mise": _subcommands({"exec": _after({"-C", "--cd"}, dash_dash=True), "x": _after({"-C", "--cd"}, dash_dash=True)}),
    "asdf": _subcommands({"exec": _after(set())}),
    "devbox": _subcommands({"run": _after({"-c", "--config"})}),
    "nix-shell": lambda a: _shell(s) if (s := option_value(a, ("--run", "--command"))) is not None else None,
    "microk8s": _microk8s,
    "terragrunt": _subcommands({"exec": _after(set(), dash_dash=True)}),  # its other subcommands: clis.py
    "python": _python,
}
