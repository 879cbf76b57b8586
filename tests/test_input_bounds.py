"""Bounds on scenario and sweep files, checked before a parser sees them:
their size on the bytes read, and while one linear pass reads their tokens,
a key's length, how deep tables and arrays nest (dotted keys and table
headers included) and how many values they hold. A TOML parser's time and
memory are quadratic in the parts of a dotted key: an 80 KB key took
6.25 GB and 80 s, and under ``[[flows]]`` ended in a MemoryError traceback;
a 50 MB array took 129 s and 6.1 GB."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import wavelab as wavelab_cli
from test_hostile_input import BASE, error_of, limited
from wavelab.errors import ScenarioFileError
from wavelab.scenario import MAX_DEPTH, from_toml
from wavelab.scenario.builtin import builtin_names, builtin_toml
from wavelab.scenario.toml_text import (
    MAX_KEY_CHARS,
    MAX_TOML_BYTES,
    MAX_TOML_VALUES,
    first_bound_exceeded,
    first_problem,
)
from wavelab.sweep import load_sweep
from wavelab.sweep.grid import SweepError

ROOT = Path(__file__).resolve().parents[1]

DOTTED = "a" + ".a" * 40_000 + " = 1\n"
"""An 80 KB dotted key (40,001 parts)."""


@pytest.mark.parametrize("where", ["top", "flows"])
def test_an_80_kb_dotted_key_is_refused_naming_its_line(where: str) -> None:
    text = BASE + DOTTED if where == "top" else BASE + "\n[[flows]]\n" + DOTTED
    line = text.count("\n")  # the key's line is the last one
    message = error_of(text)
    assert message == (
        f"not valid here: line {line}: tables and arrays nest more than {MAX_DEPTH} deep "
        f"(a key of more than {MAX_DEPTH} parts)"
    ), message
    # one long part: the key's length
    long_key = '"' + "x" * 80_000 + '" = 1\n'
    text = text.replace(DOTTED, long_key)
    assert error_of(text) == (
        f"not valid here: line {line}: a key longer than {MAX_KEY_CHARS} characters"
    )


def test_the_dotted_key_bomb_runs_in_little_memory_and_cpu(tmp_path: Path) -> None:
    # under 3 GB of address space and 15 s of CPU (the kernel's limits, which
    # the machine's load does not move): the parser alone needed 6.25 GB
    p = tmp_path / "bomb.toml"
    p.write_text(BASE + "\n[[flows]]\n" + DOTTED)
    done = limited(
        f"import sys; from wavelab import cli; sys.exit(cli.main(['validate', {str(p)!r}]))"
    )
    assert done.returncode == 1, done.stderr
    line = p.read_text().count("\n")
    assert done.stderr == (
        f"error: {p}: not valid here: line {line}: tables and arrays nest more than "
        f"{MAX_DEPTH} deep (a key of more than {MAX_DEPTH} parts)\n"
    )


@pytest.mark.parametrize(
    ("text", "line", "why"),
    [
        # short parts: the count of parts, not the length, is what is too much
        ("x" + ".x" * 40 + " = 1", 1, " (a key of more than 32 parts)"),
        ("[" + ".".join(["t"] * 40) + "]\nv = 1", 1, " (a key of more than 32 parts)"),
        ("x = { " + "a." * 40 + "b = 1 }", 1, " (a key of more than 32 parts)"),
        ("x = [\n" + "[" * 500 + "]" * 500 + "]", 2, ""),
        ("x = " + "{ a = " * 400 + "1" + " }" * 400, 1, ""),
        # levels add up: a header's parts, then a key's parts
        ("[" + ".".join(["t"] * 20) + "]\nx." + ".".join(["u"] * 12) + " = 1", 2, ""),
    ],
)
def test_nesting_is_refused_while_reading_naming_the_line(text: str, line: int, why: str) -> None:
    first = BASE.count("\n") + 2  # the line `text` starts on
    assert error_of(BASE + "\n" + text + "\n") == (
        f"not valid here: line {first + line - 1}: "
        f"tables and arrays nest more than {MAX_DEPTH} deep{why}"
    )


NESTINGS = {
    "arrays": lambda d: "x = " + "[" * d + "]" * d,
    "dotted key": lambda d: ".".join(["t"] * d) + " = 1",
    "table header": lambda d: "[" + ".".join(["t"] * d) + "]\nv = 1",
    "array of tables": lambda d: "[[" + ".".join(["t"] * d) + "]]\nv = 1",
    "inline tables": lambda d: "x = " + "{ a = " * d + "1" + " }" * d,
    "header + key + arrays": lambda d: (
        "["
        + ".".join(["t"] * (d // 3))
        + "]\nx.y = "
        + "[" * (d - d // 3 - 1)
        + "]" * (d - d // 3 - 1)
    ),
}


@pytest.mark.parametrize("form", NESTINGS)
def test_the_scan_counts_levels_as_the_walk_of_the_parsed_data_does(form: str) -> None:
    # one limit, whichever check sees the text first
    for depth in range(MAX_DEPTH - 4, MAX_DEPTH + 4):
        text = NESTINGS[form](depth)
        scanned = first_bound_exceeded(text) is not None
        walked = first_problem(tomllib.loads(text)) is not None
        assert scanned == walked, (form, depth, scanned, walked)


def test_a_file_larger_than_the_limit_is_refused_on_the_bytes_read(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_text(BASE + "x = [" + "1," * (MAX_TOML_BYTES // 2) + "]\n")
    res = wavelab_cli("validate", str(big))
    assert res.returncode == 1
    assert res.stderr == (
        f"error: {big}: larger than 4 MiB, the most a scenario file may be; "
        "nothing of it was parsed\n"
    )
    # a file that says it is empty (st_size 0) and is not: /dev/zero; a pipe
    res = wavelab_cli("validate", "/dev/zero")
    assert res.returncode == 1 and "larger than 4 MiB" in res.stderr, res.stderr
    assert os.stat("/dev/zero").st_size == 0
    piped = subprocess.run(
        [sys.executable, "-m", "wavelab.cli", "validate", "/dev/stdin"],
        input=b"#" * (MAX_TOML_BYTES + 1),
        capture_output=True,
    )
    assert piped.returncode == 1 and b"larger than 4 MiB" in piped.stderr
    # a sweep file, and TOML text handed over directly
    with pytest.raises(SweepError, match="larger than 4 MiB, the most a sweep file may be"):
        load_sweep(big)
    with pytest.raises(ScenarioFileError, match="larger than 4 MiB"):
        from_toml("#" * (MAX_TOML_BYTES + 1))
    # exactly the limit is fine (a comment)
    assert first_bound_exceeded("#" * MAX_TOML_BYTES) is None


def test_too_many_values_are_refused_naming_the_line(tmp_path: Path) -> None:
    # 300,000 small values fit in 1 MB; a parser takes seconds over them
    text = BASE + "x = [\n" + "1,\n" * 300_000 + "]\n"
    assert len(text) < MAX_TOML_BYTES
    message = error_of(text)
    assert message.endswith(f": more than {MAX_TOML_VALUES:,} values (keys and array items)")
    # the line where the count passed the limit: one value a line, after
    # the few of BASE
    line = int(message.split("line ")[1].split(":")[0])
    assert 0 < BASE.count("\n") + 1 + MAX_TOML_VALUES - line < 10, message


def test_a_set_value_is_bounded_like_a_file(tmp_path: Path) -> None:
    # `--set` parses its value as TOML: an inline table with a dotted key
    # was the same bomb from the command line
    res = wavelab_cli(
        "run", "demo", "--out", str(tmp_path / "o"), "--set", "flows[0].cc={" + DOTTED[:-1] + "}"
    )
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr == (
        "error: --set flows[0].cc: not valid here: line 1: tables and arrays nest more "
        f"than {MAX_DEPTH} deep (a key of more than {MAX_DEPTH} parts)\n"
    )
    assert not (tmp_path / "o").exists()


def test_what_toml_allows_is_not_mistaken_for_a_bound() -> None:
    # strings with brackets, dots, equals signs and quotes; quoted keys with
    # dots (one part); multi-line strings with inner quotes; comments
    text = (
        BASE
        + 'description = "a [b] {c} = d, e.f # not a comment"\n'
        + "name = 'x.y.z = [['\n"
        + '[sweep]\n"links[0].rate,links[0].delay" = [["1Mbit/s", "1ms"]]  # [[x\n'
        + 'note = """\n"quoted" ""two"" [not.a.key]\n  ="""\n'
        + "literal = '''\n[[x.y]]\n'''\n"
    )
    assert first_bound_exceeded(text) is None
    assert tomllib.loads(text)["sweep"]["note"] == '"quoted" ""two"" [not.a.key]\n  ='
    # brackets and dots inside strings and comments would be too deep or too
    # many parts if they counted
    for inside in ('s = "' + "[" * 40 + '"', "s = '" + "{" * 40 + "'", "# " + "[" * 40):
        assert first_bound_exceeded(text + inside + "\n") is None
    assert first_bound_exceeded(text + '"' + "a." * 40 + '" = 1\n') is None
    assert first_bound_exceeded(text + 's = """' + "[" * 40 + '"""\n') is None
    # every shipped scenario, sweep and example is within the bounds
    texts = [builtin_toml(n) for n in builtin_names()]
    texts += [p.read_text() for p in (ROOT / "python/wavelab/sweeps").glob("*.toml")]
    texts += [p.read_text() for p in (ROOT / "examples").rglob("*.toml")]
    assert len(texts) > 15
    for t in texts:
        assert first_bound_exceeded(t) is None


def test_a_key_just_within_the_bounds_is_accepted() -> None:
    key = "x" * MAX_KEY_CHARS
    assert first_bound_exceeded(f"{key} = 1") is None
    assert first_bound_exceeded(f"{key}x = 1") == (
        1,
        f"a key longer than {MAX_KEY_CHARS} characters",
    )
    assert first_bound_exceeded(".".join(["t"] * MAX_DEPTH) + " = 1") is None
