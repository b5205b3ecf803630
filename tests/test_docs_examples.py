"""The examples of the docstrings, README.md and the user guide run, and print what they say.

Docstrings: every ``>>>`` example of every module of the *installed* package
(imported by name, never from the source tree) runs under :mod:`doctest`.

README.md: the ``python`` blocks run in order in one namespace (later blocks
use the names of earlier ones). A block that ends with full-line comments
after its last line of code, e.g.::

    print(sorted(words))
    # ['a', 'b']

must print exactly those lines (without the ``# ``). Blocks without such a
trailing comment only have to run without error. A block preceded by the line
``<!-- readme-test: compile only (reason) -->`` (invisible on the rendered
page) needs what CI does not have, e.g. a cluster; it is only compiled. A
``text`` block preceded by ``<!-- readme-test: stdout of `spca ARGS` -->`` is
what the command ``spca ARGS`` prints on stdout: the test runs it
(``spca.cli.main``) and compares.

No commit hash appears in user-facing prose: README.md, the documentation
pages and gallery, and the package's docstrings (the history is in
CHANGELOG.md; where a measurement comes from is data, in docs/_data/).

docs/user_guide: the ``.. code-block:: python`` blocks run in the order of
the guide's table of contents, in one namespace (their output is not shown in
the guide, so it is not compared).

Both comparisons ignore differences of white space, accept ``...`` for any
text, and compare each number only to the digits written in the expectation
(``0.31`` matches ``0.3127``), so that they check what the text claims and
not the last bits of floating-point arithmetic.
"""

from __future__ import annotations

import ast
import contextlib
import doctest
import importlib
import importlib.util
import io
import pkgutil
import re
import shlex
from pathlib import Path

import pytest

import spca

README = Path(__file__).resolve().parents[1] / "README.md"

# optional dependencies of some modules: their doctests need them installed
OPTIONAL = {"sklearn", "dask", "distributed", "pyarrow"}

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _numbers_match(want: str, got: str) -> bool:
    """``want`` and ``got`` equal up to white space, numbers to the digits of ``want``."""
    want_parts, got_parts = _NUMBER.split(want), _NUMBER.split(got)
    want_nums, got_nums = _NUMBER.findall(want), _NUMBER.findall(got)
    if len(want_nums) != len(got_nums) or len(want_parts) != len(got_parts):
        return False
    for a, b in zip(want_parts, got_parts, strict=True):
        if " ".join(a.split()) != " ".join(b.split()):
            return False
    for w, g in zip(want_nums, got_nums, strict=True):
        if w == g:
            continue
        if not re.search(r"[.eE]", w):  # an integer must be exact
            return False
        mantissa, _, exponent = w.lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        tol = 0.5 * 10.0 ** (-decimals) * 10.0 ** int(exponent or 0)
        if abs(float(w) - float(g)) > tol * (1 + 1e-9):
            return False
    return True


class Checker(doctest.OutputChecker):
    """doctest's checker, plus numbers compared to the precision written."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        if super().check_output(want, got, optionflags):
            return True
        return _numbers_match(want, got)


FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names() -> list[str]:
    names = ["spca"]
    for info in pkgutil.walk_packages(spca.__path__, "spca."):
        names.append(info.name)
    return sorted(names)


def test_package_is_installed_build():
    # the compiled kernels exist only in a built package: a source-tree import
    # would fail here (and the doctests would not test what users run)
    from spca import _bca_fast  # noqa: F401


@pytest.mark.parametrize("name", _module_names())
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - without an optional extra
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {exc.name}")
        raise
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = [t for t in finder.find(module, name, globs=vars(module).copy()) if t.examples]
    runner = doctest.DocTestRunner(checker=Checker(), optionflags=FLAGS)
    out = io.StringIO()
    for test in tests:
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()


COMPILE_ONLY = re.compile(r"<!-- readme-test: compile only \(\S.*\) -->\n\Z")


def _readme_blocks() -> list[tuple[int, str, str | None, bool]]:
    """(line number, code, expected output or None, run?) of each ```python block."""
    text = README.read_text(encoding="utf-8")
    blocks = []
    for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        lineno = text.count("\n", 0, m.start()) + 2
        lines = m.group(1).rstrip("\n").split("\n")
        expected = []
        while lines and lines[-1].startswith("#"):
            expected.append(re.sub(r"^# ?", "", lines.pop()))
        code = "\n".join(lines)
        want = "\n".join(reversed(expected)) + "\n" if expected else None
        run = not COMPILE_ONLY.search(text, 0, m.start())
        blocks.append((lineno, code, want, run))
    return blocks


def test_readme_has_checked_examples():
    blocks = _readme_blocks()
    assert blocks, "no ```python block in README.md"
    assert any(want is not None for _, _, want, _ in blocks), (
        "no README block states its output")


def test_readme_examples():
    namespace: dict = {"__name__": "__readme__"}
    checker = Checker()
    for lineno, code, want, run in _readme_blocks():
        compiled = compile(code, f"README.md, block at line {lineno}", "exec")
        if not run:
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compiled, namespace)
        got = out.getvalue()
        if want is not None:
            assert checker.check_output(want, got, FLAGS), (
                f"README.md, block at line {lineno}: expected\n{want}\ngot\n{got}")


COMMAND_OUTPUT = re.compile(
    r"^<!-- readme-test: stdout of `spca ([^`]+)` -->\n```text\n(.*?)^```", re.S | re.M)


def test_readme_command_output():
    blocks = COMMAND_OUTPUT.findall(README.read_text(encoding="utf-8"))
    assert blocks, "README.md shows no command output that is checked"
    from spca import cli

    for args, want in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = cli.main(shlex.split(args))
        assert status == 0, f"spca {args} exited with {status}"
        assert Checker().check_output(want, out.getvalue(), FLAGS), (
            f"README.md shows for `spca {args}`:\n{want}\nthe command prints:\n"
            f"{out.getvalue()}")


# 7 to 40 hexadecimal digits with at least one letter and one digit, as a whole word
_HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def _user_facing_texts() -> list[tuple[str, str]]:
    root = README.parent
    texts = [("README.md", README.read_text(encoding="utf-8"))]
    docs = root / "docs"
    for path in sorted([*docs.glob("*.rst"), *docs.glob("user_guide/*.rst"),
                        *docs.glob("examples/*.py"), *docs.glob("examples/*.txt")]):
        texts.append((str(path.relative_to(root)), path.read_text(encoding="utf-8")))
    for name in _module_names():
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    texts.append((f"{name} docstring of {getattr(node, 'name', name)}", doc))
    return texts


def test_no_commit_hash_in_user_facing_prose():
    found = [(where, m.group()) for where, text in _user_facing_texts()
             for m in _HASH.finditer(text)]
    assert not found, f"commit hashes in user-facing prose (move them to CHANGELOG.md): {found}"


def test_hash_pattern():
    assert _HASH.findall("at commit 6b222e8 and 78d12a0, not 1234567 or deadbeef") == [
        "6b222e8", "78d12a0"]


@pytest.mark.parametrize(("want", "got", "ok"), [
    ("0.31", "0.3127", True),
    ("0.31", "0.3167", False),
    ("1.5e-03", "1.46e-03", True),
    ("5", "5.0", False),
    ("[1, 2]", "[1,  2]", True),
    ("['a', 'b']", "['a', 'c']", False),
    ("gap 1e-6", "gap 1.2e-6", True),
])
def test_number_tolerant_checker(want, got, ok):
    assert Checker().check_output(want + "\n", got + "\n", FLAGS) is ok


def _user_guide_blocks() -> list[tuple[str, int, str]]:
    """(page, line, code) of each ``.. code-block:: python`` of the user guide, in
    the order of its table of contents (later pages use earlier pages' names)."""
    guide = README.parent / "docs" / "user_guide"
    index = (guide / "index.rst").read_text(encoding="utf-8")
    toc = index.split(":maxdepth: 2", 1)[1].split()
    blocks = []
    for page in toc:
        text = (guide / f"{page}.rst").read_text(encoding="utf-8")
        for m in re.finditer(r"^\.\. code-block:: python\n\n((?:(?:    .*)?\n)+)", text, re.M):
            code = "\n".join(line[4:] for line in m.group(1).split("\n"))
            blocks.append((page, text.count("\n", 0, m.start()) + 1, code))
    return blocks


def test_user_guide_examples():
    blocks = _user_guide_blocks()
    assert len(blocks) >= 5, blocks
    namespace: dict = {"__name__": "__user_guide__"}
    for page, lineno, code in blocks:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"docs/user_guide/{page}.rst, line {lineno}", "exec"), namespace)
