"""The house keeps its shape: no import cycle, lower packages never import higher ones, no module past ~400
lines, a session that only orchestrates, no probing of backends for methods, no record key built as a string
and parsed elsewhere."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ORACLE = Path(__file__).resolve().parents[2] / "oracle"
MODULES = sorted(p for p in ORACLE.rglob("*.py"))
MAX_LINES = 400


def _name(path: Path) -> str:
    parts = ["oracle", *path.relative_to(ORACLE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """oracle modules imported at module level (lazy imports inside functions do not make a cycle), plus the
    packages that importing them runs first (importing oracle.a.b runs oracle/a/__init__.py)."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        for name in names:
            if name.startswith("oracle."):
                parts = name.split(".")
                out.update(".".join(parts[:k]) for k in range(2, len(parts) + 1))
    return out


def test_no_import_cycle():
    graph = {}
    for p in MODULES:
        # A package's __init__ may import its own submodules: a submodule's reach back to its own packages
        # is Python's normal partial initialisation, not a cycle.
        parts = _name(p).split(".")
        own = {".".join(parts[:k]) for k in range(1, len(parts))}
        graph[_name(p)] = _imports(p) - own
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt == node:
                continue
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for name in graph:
        if name not in state:
            visit(name, [name])


# The layers, as data: package -> the oracle packages (or top-level modules) none of its modules may import,
# lazy imports inside functions included. The orchestration (gate, plugin, the cli and bisect) sits on top;
# the report renders what the gate found and the capabilities' own report modules (speed, logits, canary);
# compare judges records (store) read through backends; store keeps files.
ORCHESTRATION = ("gate", "plugin", "cli", "bisect", "repro", "sweep", "__main__", "options", "speed_options")
NEVER_IMPORTS: dict[str, tuple[str, ...]] = {
    "report": (*ORCHESTRATION, "checks", "targets", "run"),
    "compare": (*ORCHESTRATION, "checks", "report", "targets", "run", "speed", "logits", "canary"),
    "store": (*ORCHESTRATION, "checks", "report", "targets", "run", "compare", "backends", "speed", "logits",
              "canary"),
    "speed": (*ORCHESTRATION, "checks", "report", "targets", "canary", "logits"),
    "logits": (*ORCHESTRATION, "checks", "report", "targets", "canary", "speed"),
    "canary": ("plugin", "cli", "bisect", "repro", "__main__", "report", "checks"),
    "run": (*ORCHESTRATION, "checks", "report", "compare", "speed", "logits", "canary"),
    "backends": (*ORCHESTRATION, "checks", "report", "compare", "speed", "logits", "canary"),
    "targets": (*ORCHESTRATION, "checks", "report", "compare", "speed", "logits", "canary"),
    # The check kinds (oracle/checks/<kind>/): above everything a check reads, below the gate that runs them.
    "checks": ("gate", "plugin", "cli", "bisect", "repro", "sweep", "__main__", "options"),
    "bisect": ("gate", "plugin", "repro", "sweep"),
    "repro": ("gate", "plugin", "cli", "sweep"),
    "sweep": ("gate", "plugin", "cli", "bisect"),  # each point is a gate run of its own process, never in here
}


def _package(path: Path) -> str:
    """The first part under oracle/: a package name, or a top-level module's name."""
    return path.relative_to(ORACLE).with_suffix("").parts[0]


def _all_imports(path: Path) -> set[str]:
    """The oracle packages / top-level modules this module imports anywhere (module level or in a function)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        out.update(name.split(".")[1] for name in names if name.startswith("oracle."))
    return out


def test_layers_point_one_way():
    broken = [f"{_name(p)} imports oracle.{target} (oracle/{_package(p)} never imports oracle/{target})"
              for p in MODULES if _package(p) in NEVER_IMPORTS
              for target in sorted(_all_imports(p) & set(NEVER_IMPORTS[_package(p)]))]
    assert broken == []


def test_the_layer_rules_name_real_packages():
    """A rule about a package that was renamed or removed would pass for ever."""
    real = {_package(p) for p in MODULES}
    named = set(NEVER_IMPORTS) | {t for targets in NEVER_IMPORTS.values() for t in targets}
    assert named <= real, sorted(named - real)


def test_the_layer_check_sees_a_broken_rule(tmp_path):
    """The check itself can fail: a module of report/ that imports the gate in a function is found."""
    module = tmp_path / "state.py"
    module.write_text("def f():\n    from oracle.gate.placement import server_label\n")
    assert _all_imports(module) == {"gate"}


@pytest.mark.parametrize("path", MODULES, ids=[_name(p) for p in MODULES])
def test_no_module_past_the_limit(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{_name(path)} has {lines} lines: split it by concept"


def test_the_session_orchestrates_in_about_200_lines():
    source = (ORACLE / "gate" / "session.py").read_text()
    cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "GateSession")
    assert cls.end_lineno - cls.lineno + 1 <= 200


def test_backends_are_read_by_declared_capabilities_not_probed():
    probing = re.compile(r"\b(getattr|hasattr)\(\s*[\w.]*backend\b")
    found = [f"{_name(p)}: {line.strip()}" for p in MODULES for line in p.read_text().splitlines()
             if probing.search(line)]
    assert found == []


def test_record_keys_are_typed_not_parsed_from_strings():
    parsing = re.compile(r"""(partition|split|rsplit|endswith)\(\s*(f?["'][^"']*@)""")
    found = [f"{_name(p)}: {line.strip()}" for p in MODULES if p.name != "records.py"
             for line in p.read_text().splitlines() if parsing.search(line)]
    assert found == []


def test_every_package_is_installed():
    """pyproject lists packages by name: a new package left out imports here and breaks an installed oracle."""
    text = (ORACLE.parent / "pyproject.toml").read_text()
    listed = set(re.findall(r'"(oracle[\w.]*)"', text[text.index("packages = ["):]))
    found = {_name(p) for p in ORACLE.rglob("__init__.py")}
    assert found <= listed, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(found - listed)}"


def test_every_test_the_fault_table_names_exists():
    """docs/faults.md names, per fault, the test that plants it: each named test is there, and the table keeps
    its size (the issue asked for at least 20 rows)."""
    repo = ORACLE.parent
    table = (repo / "docs" / "faults.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith(("| fault |", "| ---"))]
    named = set(re.findall(r"(tests/[\w/]+\.py)::(\w+)", table))
    missing = [f"{f}::{t}" for f, t in sorted(named)
               if not (repo / f).is_file() or not re.search(rf"^def {t}\(", (repo / f).read_text(), re.M)]
    assert len(rows) >= 20 and len(named) >= 20, (len(rows), len(named))
    assert not missing, f"docs/faults.md names tests that do not exist: {missing}"
