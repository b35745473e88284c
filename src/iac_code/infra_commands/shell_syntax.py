"""A command line read the way bash reads it, far enough to know which programs it runs and with what.

It yields every simple command of the line, wherever it sits: after `&&`, `||`, `;`, `|`, `&` or a
newline, inside `( )` subshells and `{ }` groups, inside `$( )`, backticks and `<( )`, inside the
here-documents whose text is expanded. Words come out with their quotes and escapes removed
(`ter'r'aform` is `terraform`, `$'\\x74f'` is `tf`); a word whose value depends on an expansion
(`$X`, `$(...)`, `{a,b}`, a glob `terrafor?`, `~/bin`) is marked dynamic, because what it runs cannot be
known here. Arithmetic (`$(( ))`, `(( ))`, the old `$[ ]`) runs no command but the substitutions in it.

A line bash would reject (unclosed quote or parenthesis, stray `)`) raises ShellSyntaxError. `case`
statements are not understood (their `pattern)` reads as a stray parenthesis): callers treat that as
"cannot tell", which is the safe side. No library fits: shlex knows neither `$( )` nor operators inside
words, and bashlex (unmaintained since 2023) rejects common syntax such as `$(( ))`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BLANKS = " \t"
WORD_END = BLANKS + "\n;&|()<>"
OPERATORS = ("&&", "||", ";;", "|&", ";", "&", "|")
REDIRECTIONS = ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">&", ">>", ">|", "&>", "<", ">")
_FD_PREFIX = re.compile(r"\d+|\{[A-Za-z_][A-Za-z0-9_]*\}")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_GLOB_BRACKET = re.compile(r"\[[^]\s;&|()<>]+\]")
_ANSI_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|.)", re.S)
_ANSI_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v"}
MAX_NESTING = 50
COMPOUND_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"})


class ShellSyntaxError(ValueError):
    pass


@dataclass
class Word:
    text: str  # quotes and escapes removed; expansions kept as written
    dynamic: bool = False  # its value depends on an expansion


@dataclass
class SimpleCommand:
    words: list[Word] = field(default_factory=list)
    stdin_text: str | None = None  # a here-document or here-string fed to it
    piped_from: SimpleCommand | None = None  # the command before it in a pipeline


@dataclass
class _Heredoc:
    command: SimpleCommand
    delimiter: str
    strip_tabs: bool
    expands: bool  # unquoted delimiter: $( ) and backticks in the body run


def parse_commands(line: str) -> list[SimpleCommand]:
    """Every simple command in `line` (nested ones included); raises ShellSyntaxError."""
    parser = _Parser(line)
    parser.script(closing=None)
    return parser.commands


class _Parser:
    def __init__(self, text: str, depth: int = 0) -> None:
        if depth > MAX_NESTING:
            raise ShellSyntaxError("nested too deeply")
        self.text = text
        self.pos = 0
        self.depth = depth
        self.commands: list[SimpleCommand] = []
        self.heredocs: list[_Heredoc] = []

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos : self.pos + n]

    def script(self, closing: str | None) -> None:
        """Commands until the end of the text, or until `closing` (consumed)."""
        command = SimpleCommand()
        while True:
            self._skip_blanks()
            if self.pos >= len(self.text):
                if closing is not None:
                    raise ShellSyntaxError(f"missing {closing!r}")
                self._finish(command)
                return
            char = self.peek()
            if char == "#":
                while self.pos < len(self.text) and self.peek() != "\n":
                    self.pos += 1
            elif char == "\n":
                self.pos += 1
                self._finish(command)
                command = SimpleCommand()
                self._read_heredocs()
            elif char == ")":
                if closing != ")":
                    raise ShellSyntaxError("unexpected ')'")
                self.pos += 1
                self._finish(command)
                return
            elif char == "(":
                command = self._open_paren(command)
            elif self._at_redirection():
                self._redirection(command)
            elif (operator := self._operator()) is not None:
                self._finish(command)
                piped = operator in ("|", "|&")
                command = SimpleCommand(piped_from=command if piped and command.words else None)
            else:
                command.words.append(self._word())

    def _finish(self, command: SimpleCommand) -> None:
        if command.words or command.stdin_text is not None:
            self.commands.append(command)

    def _skip_blanks(self) -> None:
        while self.pos < len(self.text):
            if self.peek() in BLANKS:
                self.pos += 1
            elif self.peek(2) == "\\\n":
                self.pos += 2
            else:
                return

    def _operator(self) -> str | None:
        for operator in OPERATORS:
            if self.text.startswith(operator, self.pos):
                self.pos += len(operator)
                return operator
        return None

    def _open_paren(self, command: SimpleCommand) -> SimpleCommand:
        # `do ( cd x && terraform apply )`, `if (( n > 1 ))`: after these keywords a subshell or arithmetic starts
        keywords_only = all(not w.dynamic and w.text in COMPOUND_KEYWORDS for w in command.words)
        if self.peek(2) == "((" and keywords_only:
            self._skip_arithmetic()  # (( i++ )): no command runs
            return command
        self.pos += 1
        if not keywords_only:
            self._skip_blanks()
            if self.peek() == ")":  # name() { ...; }: a function definition; its body is read as commands
                self.pos += 1
                return SimpleCommand()
            raise ShellSyntaxError("unexpected '('")
        self._nested(self.text, closing=")")
        return command

    def _nested(self, text: str, closing: str | None) -> None:
        """Parse a subshell or substitution: from the current position (closing given) or a separate text."""
        if closing is None:
            inner = _Parser(text, self.depth + 1)
            inner.script(closing=None)
            self.commands.extend(inner.commands)
            return
        inner = _Parser(self.text, self.depth + 1)
        inner.pos = self.pos
        inner.script(closing=closing)
        self.commands.extend(inner.commands)
        self.pos = inner.pos

    def _skip_arithmetic(self, opening: str = "(", closing: str = ")") -> None:
        """An arithmetic expression (`(( ))`, `$(( ))`, the old `$[ ]`): no command of its own runs, but the
        substitutions inside it do (`$(( $(terraform apply; echo 1) ))`), and `<<` in it is a shift."""
        depth = 0
        while self.pos < len(self.text):
            char = self.peek()
            if char in "$`" and self.pos + 1 < len(self.text):
                self._expansion()
                continue
            self.pos += 1
            if char == opening:
                depth += 1
            elif char == closing:
                depth -= 1
                if depth == 0:
                    return
        raise ShellSyntaxError(f"missing {closing!r}")

    def _at_redirection(self) -> bool:
        match = _FD_PREFIX.match(self.text, self.pos)
        start = match.end() if match else self.pos
        if match and (start >= len(self.text) or self.text[start] not in "<>"):
            return False
        if self.text.startswith(("<(", ">("), start):
            return False  # process substitution: a word
        return any(self.text.startswith(r, start) for r in REDIRECTIONS)

    def _redirection(self, command: SimpleCommand) -> None:
        match = _FD_PREFIX.match(self.text, self.pos)
        if match:
            self.pos = match.end()
        operator = next(r for r in REDIRECTIONS if self.text.startswith(r, self.pos))
        self.pos += len(operator)
        self._skip_blanks()
        if self.pos >= len(self.text) or self.peek() in "\n;&|()":
            raise ShellSyntaxError(f"nothing after {operator!r}")
        start = self.pos
        target = self._word()
        if operator in ("<<", "<<-"):
            raw = self.text[start : self.pos]
            expands = not any(q in raw for q in "'\"\\")
            self.heredocs.append(_Heredoc(command, target.text, operator == "<<-", expands))
        elif operator == "<<<":
            command.stdin_text = target.text

    def _read_heredocs(self) -> None:
        pending, self.heredocs = self.heredocs, []
        for heredoc in pending:
            body: list[str] = []
            while self.pos < len(self.text):
                end = self.text.find("\n", self.pos)
                end = len(self.text) if end < 0 else end
                line = self.text[self.pos : end]
                self.pos = min(end + 1, len(self.text))
                if (line.lstrip("\t") if heredoc.strip_tabs else line) == heredoc.delimiter:
                    break
                body.append(line)
            text = "\n".join(body)
            heredoc.command.stdin_text = text
            if heredoc.expands:
                self._body_substitutions(text)

    def _word(self) -> Word:
        parts: list[str] = []
        dynamic = False
        while self.pos < len(self.text):
            char = self.peek()
            if char in WORD_END and not self.text.startswith(("<(", ">("), self.pos):
                break
            if self.peek(2) == "\\\n":
                self.pos += 2
            elif char == "\\":
                parts.append(self.text[self.pos + 1 : self.pos + 2])
                self.pos += 2
            elif char == "'":
                end = self.text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unclosed single quote")
                parts.append(self.text[self.pos + 1 : end])
                self.pos = end + 1
            elif char == '"' or self.peek(2) == '$"':
                self.pos += 1 if char == '"' else 2
                text, expanded = self._quoted('"')
                parts.append(text)
                dynamic |= expanded
            elif self.peek(2) == "$'":
                parts.append(self._ansi_c())
            elif char in "$`" or self.text.startswith(("<(", ">("), self.pos):
                parts.append(self._expansion())
                dynamic = True
            else:
                # Unquoted, these are expanded at run time: braces, globs (`terrafor? apply` runs terraform when
                # the file is there) and a leading tilde (a home directory).
                if char == "{":
                    dynamic |= _BRACE_EXPANSION.match(self.text, self.pos) is not None
                elif char == "[":
                    dynamic |= _GLOB_BRACKET.match(self.text, self.pos) is not None
                dynamic |= char in "*?" or (char == "~" and not parts)
                parts.append(char)
                self.pos += 1
        if not parts and self.pos < len(self.text) and self.peek() not in WORD_END:
            raise ShellSyntaxError("empty word")
        return Word("".join(parts), dynamic)

    def _ansi_c(self) -> str:
        self.pos += 2
        start = self.pos
        while self.pos < len(self.text) and self.peek() != "'":
            self.pos += 2 if self.peek() == "\\" else 1
        if self.pos >= len(self.text):
            raise ShellSyntaxError("unclosed $'...'")
        raw = self.text[start : self.pos]
        self.pos += 1
        return ansi_c_unescape(raw)

    def _expansion(self) -> str:
        """`$name`, `${...}`, `$(...)`, `$((...))`, backticks, `<(...)`: read (running nested commands)."""
        start = self.pos
        if self.text.startswith(("<(", ">("), self.pos):
            self.pos += 2
            self._nested(self.text, closing=")")
        elif self.peek(3) == "$((":
            self.pos += 1
            self._skip_arithmetic()
        elif self.peek(2) == "$[":
            self.pos += 1
            self._skip_arithmetic("[", "]")
        elif self.peek(2) == "$(":
            self.pos += 2
            self._nested(self.text, closing=")")
        elif self.peek(2) == "${":
            self.pos += 2
            self._quoted("}")
        elif self.peek() == "`":
            self.pos += 1
            self._nested(self._backquoted(), closing=None)
        else:
            self.pos += 1
            match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]").match(self.text, self.pos)
            if match:
                self.pos = match.end()
        return self.text[start : self.pos]

    def _quoted(self, closing: str) -> tuple[str, bool]:
        """Text up to `closing` as inside double quotes (or `${ }`): escapes, and expansions that run commands."""
        parts: list[str] = []
        dynamic = False
        while self.pos < len(self.text):
            char = self.peek()
            if char == closing:
                self.pos += 1
                return "".join(parts), dynamic
            if char == "\\":
                following = self.text[self.pos + 1 : self.pos + 2]
                parts.append(following if following in '$`"\\' else "" if following == "\n" else char + following)
                self.pos += 2
            elif char == "'" and closing == "}":
                end = self.text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unclosed single quote")
                self.pos = end + 1
            elif char in "$`":
                parts.append(self._expansion())
                dynamic = True
            else:
                parts.append(char)
                self.pos += 1
        raise ShellSyntaxError(f"missing {closing!r}")

    def _body_substitutions(self, body: str) -> None:
        """The commands an expanding here-document body starts through $( ) and backticks."""
        inner = _Parser(body, self.depth + 1)
        while inner.pos < len(inner.text):
            char = inner.peek()
            if char == "\\":
                inner.pos += 2
            elif char in "$`":
                inner._expansion()
            else:
                inner.pos += 1
        self.commands.extend(inner.commands)

    def _backquoted(self) -> str:
        parts: list[str] = []
        while self.pos < len(self.text):
            char = self.peek()
            if char == "`":
                self.pos += 1
                return "".join(parts)
            if char == "\\" and self.peek(2)[1:] in ("`", "\\", "$"):
                parts.append(self.text[self.pos + 1])
                self.pos += 2
                continue
            parts.append(char)
            self.pos += 1
        raise ShellSyntaxError("unclosed backquote")


def ansi_c_unescape(text: str) -> str:
    """The backslash escapes of `$'...'` (and `echo -e`) replaced: `\\x74f` is `tf`."""
    return _ANSI_ESCAPE.sub(_ansi_char, text)


def _ansi_char(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] in "xuU":
        return chr(int(code[1:], 16))
    if code[0] in "01234567":
        return chr(int(code, 8))
    return _ANSI_SIMPLE.get(code, code)
