"""Each check kind is one package behind its descriptor, listed once in CHECKS: the gate (oracle/gate/) is the
engine that reads the descriptors and names no check; each kind's options sit on its own --help group; its state
writes, reads back and merges exactly the identity.json keys it owns; its report section is a real section."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from oracle.canary.plan import CANARY_KINDS
from oracle.checks import CHECKS, SECTIONS, STATE_TYPES, fresh_states, read_state
from oracle.gate.declarations import add_options
from full_report import FULL_REPORT

REPO = Path(__file__).resolve().parents[3]
GATE = REPO / "oracle" / "gate"


def _words(check) -> set[str]:
    names = {check.name, *check.kinds}
    return names | {n.replace("_", "-") for n in names}


def _is_module(dotted: str) -> bool:
    path = REPO.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or path.is_dir()


# The comparison library every check shares (tokens, ladder and boots all compare tokens; cache-zero evidence is
# read for speed too): its modules and functions name no check.
LIBRARY = "oracle.compare"


def _named(source: str, words: set[str]) -> list[tuple[int, str]]:
    """(line, word) of each place the code names a check: a string that is a check's name or item kind (an item
    kind, a registry key, a report key, an item name such as "coverage" or f"logits[{pid}]"), an import of its
    package or a module named for it. Prose that uses the same word (a comment, a message) names no check, nor
    does a Python name of the same word (`__all__`'s entries, a function imported by name: the A/B session's
    `boot`)."""
    tree = ast.parse(source)
    exported = {id(c) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                for c in ast.walk(node.value)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in exported:
            found += [(node.lineno, w) for w in words if node.value == w or node.value.startswith(w + "[")]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                       [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names
                                              if _is_module(f"{node.module}.{a.name}")])
            modules = [m for m in modules if m != LIBRARY and not m.startswith(LIBRARY + ".")]
            found += [(node.lineno, w) for w in words for m in modules if _names_check(m.split("."), w)]
            if isinstance(node, ast.ImportFrom) and node.module and _is_module(node.module):
                # a constant imported by name that spells a check (CANARY_CHECK = "canaries") names it too
                values = [getattr(importlib.import_module(node.module), a.name, None) for a in node.names]
                found += [(node.lineno, v) for v in values if isinstance(v, str) and v in words]
    return sorted(set(found))


def _names_check(parts: list[str], word: str) -> bool:
    """A module path names a check when it is the check's package (oracle.checks.<kind>) or a module named for it
    (gate/speed_checks.py); a library of the same name (oracle.speed: figures, host accounting) names none."""
    return any((part == word and i > 0 and parts[i - 1] == "checks") or part.startswith(word + "_")
               or (part == word and i == len(parts) - 1 and parts[:2] != ["oracle", word])
               for i, part in enumerate(parts))


# The engine: the gate, the run plan, which reads each item's cost from its kind's descriptor (`plan_part`,
# `plan_test`), and the plugin's modules.
ENGINE = (sorted(GATE.rglob("*.py")) + sorted((REPO / "oracle" / "plan").rglob("*.py"))
          + [REPO / "oracle" / "plugin.py", REPO / "oracle" / "plugin_hooks.py"])


def test_the_gate_names_no_check():
    """A check's knowledge lives in its package (oracle/checks/<kind>/), never in the engine."""
    found = [f"{path.relative_to(REPO)}:{line}: {word}" for check in CHECKS for path in ENGINE
             for line, word in _named(path.read_text(), _words(check))]
    assert found == [], "move what the gate knows of these checks into their descriptors"


def test_the_store_and_the_report_state_name_no_check_nor_its_keys():
    """A reference's and a report's per-check blocks are held by the kind's own keys (its state's KEYS, its
    descriptor's blocks): the reference store, its shapes and the report state name none of them (a new kind needs
    no line there). The store's own words of the same spelling (a record's condition, `boot1-c1`) are no check's."""
    holders = [REPO / "oracle" / "store" / "reference.py", REPO / "oracle" / "store" / "shapes.py",
               REPO / "oracle" / "report" / "state.py"]
    found = [f"{path.relative_to(REPO)}:{line}: {word}" for check in CHECKS for path in holders
             for line, word in _named(path.read_text(), set(check.state.KEYS) | set(check.blocks))]
    assert found == [], "hold these by the check's key (its state, its descriptor's blocks), not by name"


def test_no_check_kind_imports_another():
    """Each kind is its own package: what two kinds share lives below them (oracle/speed/, checks/descriptor.py),
    so a new kind (or a removed one) touches no other kind's package."""
    kinds = {c.name for c in CHECKS}
    found = []
    for kind in sorted(kinds):
        for path in sorted((REPO / "oracle" / "checks" / kind).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                           [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                           if isinstance(node, ast.ImportFrom) else [])
                found += [f"{path.relative_to(REPO)}:{node.lineno}: {m}" for m in modules
                          if m.split(".")[:2] == ["oracle", "checks"] and len(m.split(".")) > 2
                          and m.split(".")[2] in kinds - {kind}]
    assert found == [], "move what these kinds share below them"


def test_the_scan_sees_a_check_named_in_code():
    source = ('from oracle.gate.coverage_checks import CoverageChecks\n'
              'if kind == "coverage":  # prose about coverage is not a name\n'
              '    specs.append(ItemSpec(f"prompt-logprob[{pid}]", "prompt_logprob"))\n'
              'raise UsageError("the coverage of a run")\n'
              'from oracle.checks import conditions\n'
              'from oracle.gate.ab_servers import boot  # a function of that name\n'
              '__all__ = ["boot"]\n'
              'from oracle.canary.kinds import CANARY_CHECK  # a constant that spells a check\n')
    assert _named(source, {"coverage", "prompt-logprob", "prompt_logprob", "conditions", "boot", "canaries"}) == [
        (1, "coverage"), (2, "coverage"), (3, "prompt-logprob"), (3, "prompt_logprob"), (5, "conditions"),
        (8, "canaries")]


# The conditions (oracle/checks/conditions/): their item kinds and name, the report keys and the settings that
# were the gate's own fields before they had a package.
CONDITION_WORDS = {"ladder", "boot", "boots", "conditions"}
CONDITION_FIELDS = {"ladder", "ladder_min", "ladder_mode", "ladder_arrivals", "boots", "determinism",
                    "token_match", "conditions"}


def _attributes(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of each attribute read or written by one of these names (`options.ladder`, `state.boots`)."""
    return sorted({(node.lineno, node.attr) for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.Attribute) and node.attr in names})


def test_the_gate_names_no_ladder_level_or_boot():
    """The ladder and the boots live in oracle/checks/conditions/: the engine names neither their items, nor
    their report keys, nor their settings (the A/B session's own server boots, `Server.boots`, are the speed
    session's count, and the reference's own determinism class, `plan.envelope.determinism`, the reference's)."""
    found = [f"{path.relative_to(REPO)}:{line}: {word}" for path in sorted(GATE.rglob("*.py"))
             for line, word in _named(path.read_text(), CONDITION_WORDS)
             + [(line, name) for line, name in _attributes(path.read_text(), CONDITION_FIELDS - {"determinism"})
                if not (name == "boots" and path.name in ("ab_servers.py", "cells_interleave.py",
                                                          "interleave_checks.py"))]]
    assert found == [], "the conditions' knowledge belongs in oracle/checks/conditions/"
    from dataclasses import fields

    from oracle.gate.options import GateOptions
    from oracle.report.state import ReportState
    assert not {f.name for f in fields(GateOptions)} & CONDITION_FIELDS, "their settings: options.check(...)"
    assert not {f.name for f in fields(ReportState)} & CONDITION_FIELDS, "their report keys: ConditionsState"


def test_the_attribute_scan_sees_a_condition_setting_read_by_the_gate():
    source = "levels = plan.options.ladder\nstate.determinism = determinism_of(rows)\nx = o.seed\n"
    assert _attributes(source, CONDITION_FIELDS) == [(1, "ladder"), (2, "determinism")]


def test_the_scan_sees_the_speed_checks_named_and_not_the_speed_library():
    words = set().union(*(_words(c) for c in CHECKS if c.name in ("speed", "speed_ab", "speed_cells")))
    assert {"speed", "speed-ab", "speed_ab", "speed-cells", "speed_cells"} <= words
    named = ('from oracle.checks import speed\n'
             'from oracle.checks.speed_cells.producer import CellsCheck\n'
             'from oracle.gate.speed_checks import SpeedChecks\n'
             'registry.register("speed_ab", ab.check)\n'
             'specs.append(ItemSpec("speed-cells", kind))\n'
             'findings["speed"] = card\n'
             'import oracle.speed_options\n')
    assert sorted({line for line, _ in _named(named, words)}) == [1, 2, 3, 4, 5, 6, 7]
    library = ('from oracle.speed.card import level_speed\n'
               'from oracle.speed import card\n'
               'import oracle.speed.power\n'
               'raise UsageError("the speed of a level")\n')
    assert _named(library, words) == []


def test_the_scan_sees_the_primary_runs_checks_named_in_code():
    """The primary run's checks (tokens, cache-zero, speculation) once lived in the gate: their item names,
    registry keys, report keys and packages are names; the comparison library they share is not."""
    words = {w for c in CHECKS if c.name in ("tokens", "cache_zero", "speculation") for w in _words(c)}
    assert words == {"tokens", "cache_zero", "cache-zero", "speculation"}
    source = ('from oracle.checks import tokens\n'
              'from oracle.checks.speculation.state import SpeculationState\n'
              'specs.append(ItemSpec(f"cache-zero[{server_label(s)}]", "cache_zero", s))\n'
              'registry.register("tokens", primary.tokens_check)\n'
              'summary = findings["speculation"]\n'
              'from oracle.compare.evidence import cache_zero_check, speculation_summary\n'
              'from oracle.compare.tokens import SAMPLED_SPLIT  # the tokens of a split\n')
    assert _named(source, words) == [(1, "tokens"), (2, "speculation"), (3, "cache-zero"), (3, "cache_zero"),
                                     (4, "tokens"), (5, "speculation")]


# The canaries add no gate item (their modules are pytest tests of their own), so their descriptor names no
# item kind: these are the names they go by in code instead (their library oracle/canary/, their check and
# report key, their kinds of module), none of which the engine may use, as a string, an import, an attribute
# or a name.
CANARY_NAMES = {"canary", "canaries", *CANARY_KINDS}


def _canary_named(source: str) -> list[tuple[int, str]]:
    """_named for the canaries, plus any attribute or definition whose name says canary (state.canaries,
    gate.canary_result), and any import of their library (oracle.canary: the speed library's rule, a library
    of the check's name being free to import, is not theirs)."""
    found = _named(source, CANARY_NAMES)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [(node.lineno, "canary") for m in modules if {"canary", "canaries"} & set(m.split("."))]
        name = (node.attr if isinstance(node, ast.Attribute) else node.name
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None)
        if name and "canar" in name.lower():
            found.append((node.lineno, name))
    return sorted(set(found))


def test_the_gate_names_no_canary():
    """The canaries live in oracle/checks/canaries/ and oracle/canary/; the engine holds nothing of them (no
    session methods for canary modules, no canary field in the report state, no canary rule in the merge)."""
    found = [f"{path.relative_to(REPO)}:{line}: {word}" for path in sorted(GATE.rglob("*.py"))
             for line, word in _canary_named(path.read_text())]
    assert found == [], "move what the gate knows of the canaries into oracle/checks/canaries/"


def test_the_canary_scan_sees_a_canary_named_in_code():
    source = ('from oracle.canary.context import ServedContext\n'
              'def canary_result(self, item_id, row):  # prose about a canary is not a name\n'
              '    self.state.canaries[item_id] = row\n'
              'rows = {"canaries": m.own.rows, "needle": 1}\n'
              'raise UsageError("the canary could not run")\n')
    assert _canary_named(source) == [(1, "canary"), (2, "canary_result"), (3, "canaries"), (4, "canaries"),
                                     (4, "needle")]


def test_each_check_is_listed_once_and_its_kinds_are_its_own():
    names = [c.name for c in CHECKS]
    kinds = [k for c in CHECKS for k in c.kinds]
    assert len(set(names)) == len(names) and len(set(kinds)) == len(kinds)


def test_each_checks_options_are_on_its_own_help_group():
    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    groups = {g.name: g for g in parser._groups}
    for check in CHECKS:
        if check.add_options is None:
            continue
        group = groups[check.group]
        assert group._arggroup.title == f"oracle: {check.title}"
        assert group.options, f"{check.name}: an empty --help group"
        assert check.settings is not None and check.defaults is not None


def test_each_section_is_a_report_section():
    assert all(section in SECTIONS and isinstance(section.PLACE, int) for c in CHECKS for section in c.sections)


def test_each_state_owns_its_keys_alone_and_reads_back_what_it_writes():
    owned = [k for t in STATE_TYPES.values() for k in t.KEYS]
    assert len(set(owned)) == len(owned), "two check states claim one identity.json key"
    for kind, state_type in STATE_TYPES.items():
        state = state_type.from_json(FULL_REPORT)
        written = state.to_json()
        assert set(written) == set(state_type.KEYS)
        assert state_type.from_json(written) == state, kind
        assert written == {k: FULL_REPORT[k] for k in state_type.KEYS}, kind


def test_a_fresh_state_reads_an_old_report_without_its_keys():
    """A report of before a check existed reads back with that check's state empty."""
    old = {k: v for k, v in FULL_REPORT.items() if k not in {k for t in STATE_TYPES.values() for k in t.KEYS}}
    assert read_state(old).states == fresh_states()


EXAMPLES = sorted((REPO / "examples").rglob("identity.json"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[str(p.relative_to(REPO / "examples")) for p in EXAMPLES])
def test_the_reports_of_before_read_back_into_the_check_states_unchanged(path):
    """The committed example reports (written before the check kinds had packages) read back into each check's
    state, which writes every key it owns as the report held it (absent keys as an empty section)."""
    import json

    data = json.loads(path.read_text())
    state = read_state(data)
    for kind, check_state in state.states.items():
        for key, value in check_state.to_json().items():
            assert value == data.get(key) or (key not in data and not value), (kind, key)
