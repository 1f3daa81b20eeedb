"""Options follow the registries (issue #48): each option is declared by the package that uses it and read from
pytest's option namespace in exactly one module; a family's options are named in its own files only; the core
options' `--help` groups are the sections of docs/options.md; the families' options modules are their
descriptors' own; `--allow-inconclusive` takes the union of what the check kinds declare."""

from __future__ import annotations

import ast
import functools
import importlib
import re
from pathlib import Path

import pytest

from oracle.backends import FAMILIES
from oracle.backends.options import FAMILY_OPTION_MODULES
from oracle.checks import CHECKS, INCONCLUSIVE_KINDS, kind_packages
from oracle.gate.declarations import SECTIONS, add_options

REPO = Path(__file__).resolve().parents[2]
ORACLE = REPO / "oracle"


def _parser() -> pytest.Parser:
    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    return parser


def _declared() -> dict[str, str]:
    """dest -> the option's first name, for every option oracle declares."""
    return {opt.dest: opt.names()[0] for group in _parser()._groups for opt in group.options}


def _aliases(function: ast.AST) -> set[str]:
    """The names a function calls pytest's option namespace by: a parameter `option`, or a name bound to
    `<...>.option` (`o = config.option`)."""
    names = {a.arg for a in ast.walk(function) if isinstance(a, ast.arg) and a.arg == "option"}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) and node.value.attr == "option":
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


DYNAMIC = "*"  # a read by a computed name, getattr(option, name): the options its own module declares


def option_reads(source: str) -> set[str]:
    """The attributes a module reads from pytest's option namespace: `option.x`, `o.x` where `o = config.option`,
    `config.option.x`, and `getattr(option, "x")`; DYNAMIC for `getattr(option, name)` with a computed name."""
    tree = ast.parse(source)
    found: set[str] = set()
    for function in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        aliases = _aliases(function)
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                owner = node.value
                if (isinstance(owner, ast.Name) and owner.id in aliases) or (
                        isinstance(owner, ast.Attribute) and owner.attr == "option"):
                    found.add(node.attr)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                  and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in aliases):
                found.add(node.args[1].value if isinstance(node.args[1], ast.Constant) else DYNAMIC)
    return found


def _declares(source: str) -> set[str]:
    """The option names a module declares (`addoption("--x", ...)`)."""
    return set(re.findall(r"""\baddoption\(\s*["'](--[\w-]+)["']""", source))


@functools.cache
def _sources() -> tuple[tuple[Path, str, frozenset[str]], ...]:
    """Each oracle module with its text and what it reads from the option namespace, scanned once."""
    return tuple((p, p.read_text(), frozenset(option_reads(p.read_text()))) for p in sorted(ORACLE.rglob("*.py")))


def readers() -> dict[str, set[str]]:
    """dest -> the oracle modules that read it from the option namespace."""
    declared = _declared()
    dest_of = {name: dest for dest, name in declared.items()}
    out: dict[str, set[str]] = {dest: set() for dest in declared}
    for path, source, found in _sources():
        reads = set(found)
        if DYNAMIC in reads:  # the canaries' settings read each field's option by its name
            reads |= {dest_of[name] for name in _declares(source) if name in dest_of}
        for dest in reads & set(declared):
            out[dest].add(str(path.relative_to(REPO)))
    return out


# Read twice, each for a reason: --backend turns the gate on (the plugin, light, cannot import the reader) and is
# read by the reader; the distribution check's --score-url is its setting and what --temperature's cross-check
# (run/sampling_options.py) needs of it.
TWICE = {"backend": {"oracle/plugin.py", "oracle/gate/options.py"},
         "score_url": {"oracle/checks/sampling_distribution/options.py", "oracle/run/sampling_options.py"}}


def test_each_option_is_read_in_one_module():
    where = readers()
    unread = sorted(dest for dest, modules in where.items() if not modules)
    assert unread == [], f"declared but never read: {unread}"
    many = {dest: sorted(modules) for dest, modules in where.items() if len(modules) > 1 and dest not in TWICE}
    assert many == {}, "read each option in the module of the package that declares it; pass its value on"
    assert {dest: where[dest] for dest in TWICE} == TWICE


def test_the_read_scan_sees_every_form():
    source = ("def f(config, option):\n    o = config.option\n    return o.a, option.b, config.option.c, "
              "getattr(option, 'd'), getattr(option, name), other.e\n")
    assert option_reads(source) == {"a", "b", "c", "d", DYNAMIC}


def test_the_read_list_names_where_each_option_is_read():
    """The list the first test checks, in a few known places."""
    where = readers()
    assert where["ladder"] == {"oracle/checks/conditions/options.py"}
    assert where["dtype"] == {"oracle/backends/hf_options.py"}
    assert where["oracle_budget"] == where["plan_only"] == {"oracle/plan/options.py"}
    assert where["oracle_machine"] == where["ledger"] == {"oracle/ledger/options.py"}
    assert where["sweep"] == {"oracle/sweep/options.py"}
    assert where["haystack"] == {"oracle/checks/canaries/options.py"}
    assert where["temperature"] == {"oracle/run/sampling_options.py"}


def _family_files(module) -> set[Path]:
    """A family's files: its options module and the backend module its descriptor's class lives in."""
    descriptor = next(d for d in FAMILIES.values() if d.add_options is module.add_options)
    backend = Path(__import__(descriptor.backend.__module__, fromlist=["_"]).__file__)
    return {Path(module.__file__).resolve(), backend.resolve()}


def _named_flags(source: str, flags: set[str]) -> set[str]:
    """The flags a module names as a whole string (a declaration, a refusal's subject, a lookup), not in prose."""
    return {node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in flags}


def test_a_family_option_is_named_in_its_familys_files_only():
    for module in FAMILY_OPTION_MODULES:
        parser = pytest.Parser(_ispytest=True)
        module.add_options(parser.getgroup("g"))
        flags = {opt.names()[0] for opt in parser._groups[0].options}
        dests = {opt.dest for opt in parser._groups[0].options}
        own = _family_files(module)
        named = sorted(str(p.relative_to(REPO)) for p, source, reads in _sources()
                       if p.resolve() not in own and (_named_flags(source, flags) or reads & dests))
        assert named == [], f"{sorted(flags)} named outside the family's files"


def test_the_family_scan_finds_a_flag_named_elsewhere():
    assert _named_flags('if "--dtype" in given:\n    pass\nhelp = "e.g. --dtype float16"\n', {"--dtype"}) == {"--dtype"}


def test_the_family_options_modules_are_the_descriptors_own_in_their_order():
    declared = [d for d in FAMILIES.values() if d.add_options is not None]
    assert [m.add_options for m in FAMILY_OPTION_MODULES] == [d.add_options for d in declared]
    assert [m.settings_of for m in FAMILY_OPTION_MODULES] == [d.settings for d in declared]


def _doc_sections() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for block in re.split(r"^## ", (REPO / "docs" / "options.md").read_text(), flags=re.M)[1:]:
        out[block.splitlines()[0].split(" (")[0].strip()] = re.findall(r"^\| `(--[\w-]+)", block, re.M)
    return out


def test_the_core_groups_are_the_sections_of_the_options_doc():
    groups = {g.name: g for g in _parser()._groups}
    sections = _doc_sections()
    for name, title in SECTIONS:
        assert groups[name]._arggroup.title == f"oracle: {title[0].lower()}{title[1:]}"
        assert sorted(o.names()[0] for o in groups[name].options) == sorted(sections[title]), title
    assert sorted(o.names()[0] for o in groups["oracle-sweep"].options) == sorted(sections["Sweeps"])


def test_the_inconclusive_kinds_are_the_union_of_what_the_check_kinds_declare():
    packages = [importlib.import_module(name) for name in kind_packages()]
    assert [p.__name__ for p in packages] == [f"oracle.checks.{c.name}" for c in CHECKS]
    assert set(INCONCLUSIVE_KINDS) == {k for p in packages for k in getattr(p, "INCONCLUSIVE", ())}
    assert len(INCONCLUSIVE_KINDS) == len(set(INCONCLUSIVE_KINDS))
    assert {"cache", "speculation", "overlap", "canary", "speed", "coverage", "sampling"} == set(INCONCLUSIVE_KINDS)
