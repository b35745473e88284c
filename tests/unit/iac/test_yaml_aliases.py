"""The YAML loader bounds what aliases stand for: a bomb or a cycle is a finding with its line, in
milliseconds; real templates that share a few blocks by alias, and big files without aliases, load."""

import time

import pytest

from iac_code.iac.yamlnodes import MAX_ALIAS_NODES, StructuredSyntaxError, parse_structured, walk


def nested_aliases(levels: int, width: int = 10) -> str:
    lines = ["a0: &a0 [x]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def refusal(text: str) -> StructuredSyntaxError:
    with pytest.raises(StructuredSyntaxError) as raised:
        parse_structured("t.yaml", text)
    return raised.value


def test_an_alias_bomb_is_refused_at_the_line_that_crosses_the_bound() -> None:
    started = time.monotonic()
    error = refusal(nested_aliases(10))
    assert time.monotonic() - started < 1.0
    assert (error.rule, error.message) == (
        "yaml-aliases",
        f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} nodes",
    )
    # a0..a4 stand for 23,450 nodes and each alias on a5's line (line 6) for 21,111 more.
    assert error.line == 6


def test_an_alias_inside_the_node_it_names_is_refused() -> None:
    error = refusal("root:\n  loop: &loop\n    - *loop\n")
    assert (error.rule, error.line) == ("yaml-aliases", 3)
    assert "inside the node it names" in error.message


def test_aliases_below_the_bound_load_and_walk_as_shared_nodes() -> None:
    text = "base: &base {Key: team, Value: infra}\n" + "".join(f"t{n}: [*base, *base]\n" for n in range(100))
    (document,) = parse_structured("t.yaml", text)
    assert sum(1 for _ in walk(document)) > 1000
    (document,) = parse_structured("t.yaml", nested_aliases(5))  # 23,450 nodes by alias: under the bound


def test_a_big_file_without_aliases_is_not_counted_against_the_bound() -> None:
    text = "items:\n" + "".join(f"  - {{name: n{n}, value: {n}}}\n" for n in range(MAX_ALIAS_NODES // 4))
    (document,) = parse_structured("t.yaml", text)
    assert sum(1 for _ in walk(document)) > MAX_ALIAS_NODES


def test_anchors_are_per_document() -> None:
    documents = parse_structured("t.yaml", "a: &x [1]\nb: *x\n---\na: &x [2]\nb: *x\n")
    assert len(documents) == 2
