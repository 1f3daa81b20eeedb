"""Several servers under pytest-xdist, without a server: placement, identity comparison, usage errors."""

from types import SimpleNamespace

import pytest

from oracle.checks import check_named
from oracle.checks.conditions import ConditionSettings
from oracle.gate.items import ItemSpec
from oracle.gate.placement import place
from oracle.gate.server_set import differences

GATE = ["oracle::tokens[a]", "oracle::tokens[b]", "oracle::tokens[c]",
        "oracle::cache-zero[server1]", "oracle::cache-zero[server2]",
        "oracle::speculation[server1]", "oracle::speculation[server2]",
        "oracle::ladder[c1]", "oracle::ladder[c2]", "oracle::ladder[c4]", "oracle::boot[2]", "oracle::boot[3]",
        "canaries/test_repeats.py::test_repeats", "canaries/test_needle.py::test_needle[1k]",
        "canaries/test_needle.py::test_needle[4k]"]
# What the plan says each gate item is (the collector builds the same specs): no node id is parsed.
SPECS = {s.nodeid: s for s in [ItemSpec(f"tokens[{x}]", "tokens", x, placed="prompt") for x in "abc"]
         + [ItemSpec(f"cache-zero[server{k + 1}]", "cache_zero", k, placed="server") for k in range(2)]
         + [ItemSpec(f"speculation[server{k + 1}]", "speculation", k, placed="server") for k in range(2)]
         + [ItemSpec(i.name, i.kind, i.key, deal=i.deal, together=i.together) for i in check_named("conditions").items(
             SimpleNamespace(options=SimpleNamespace(check=lambda name: ConditionSettings((1, 2, 4), boots=3))))]}


def test_placement_pins_per_server_items_and_keeps_conditions_whole():
    p = dict(zip(GATE, place(GATE, 2, SPECS)))
    assert [p[f"oracle::tokens[{x}]"] for x in "abc"] == [0, 1, 0]  # prompts dealt round-robin
    assert p["oracle::cache-zero[server1]"] == p["oracle::speculation[server1]"] == 0
    assert p["oracle::cache-zero[server2]"] == p["oracle::speculation[server2]"] == 1
    assert [p["oracle::ladder[c1]"], p["oracle::ladder[c2]"], p["oracle::ladder[c4]"]] == [0, 1, 0]
    assert p["oracle::boot[2]"] == p["oracle::boot[3]"] == 1  # one boot sequence, one server
    assert [p[n] for n in GATE[-3:]] == [0, 1, 0]
    # The same input gives the same map (controller and workers compute it independently).
    assert place(GATE, 2, SPECS) == place(list(GATE), 2, SPECS)
    assert set(place(GATE, 1, SPECS)) == {0}


def test_identity_differences_name_each_server_value():
    a = {"server": {"build": "b1", "model_path": "/m/q4_1.gguf"}, "chat_template_sha256": "t",
         "url": "http://127.0.0.1:1", "launch_command": "x --port 1"}
    b = dict(a, server={"build": "b1", "model_path": "/m/q4_0.gguf"}, url="http://127.0.0.1:2",
             launch_command="x --port 2")
    assert differences({"server1": a, "server2": dict(a, url="http://127.0.0.1:2")}) == []  # instances aside
    assert differences({"server1": a, "server2": b}) == [
        "server.model_path: server1 '/m/q4_1.gguf', server2 '/m/q4_0.gguf'"]


@pytest.mark.parametrize("args, message", [
    (["--oracle-url=http://127.0.0.1:1,http://127.0.0.1:2"], "*2 servers given but this run has no pytest-xdist workers: "
                                                      "add -n 2*"),
    (["-n", "3", "--oracle-url=http://127.0.0.1:1,http://127.0.0.1:2"], "*pytest -n 3 with 2 server(s)*use -n 2*"),
    (["-n", "2", "--oracle-url=http://127.0.0.1:1,http://127.0.0.1:1"], "*is listed twice*"),
    (["-n", "2", "--oracle-url=http://127.0.0.1:1,127.0.0.1:2"], "*'127.0.0.1:2': must start with http://*"),
    (["--servers=missing.txt"], "*--servers missing.txt: no such file; give a file with one server URL per line*"),
    (["--servers=empty.txt"], "*the file lists no URL*"),
    (["--servers=one.txt", "--launch=x {port}"], "*--oracle-url/--servers and --launch both given*"),
])
def test_server_list_usage_errors(pytester, args, message):
    (pytester.path / "empty.txt").write_text("# no servers yet\n\n")
    (pytester.path / "one.txt").write_text("http://127.0.0.1:1\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_logits_and_in_process_runs_refuse_several_workers(pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=hf-cpu", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*-n 2: logits against an f16 reference, --logits (and its decode vs prefill), the "
                                 "hf backend and its precision floor run on one server only*run them without -n*"])
