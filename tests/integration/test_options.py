"""Bad options are usage errors before any request, each naming the fix (no server needed)."""

import pytest


@pytest.mark.parametrize("args, message", [
    (["--backend=tgi"], "*unknown family 'tgi'; known families: hf, llamacpp, openai, openvino, python, vllm*"),
    (["--backend=python"], "*the python family needs python:MODULE:FACTORY, e.g. python:examples/*"),
    (["--backend=llamacpp:x:y"], "*the llamacpp family takes no ':' part*"),
    (["--backend=python:m:f", "--runner-arg=ir"], "*--runner-arg 'ir': write NAME=VALUE with NAME a Python identifier*"),
    (["--backend=llamacpp", "--runner-arg=ir=int4"], "*--runner-arg is for --backend=python:MODULE:FACTORY*"),
    (["--backend=vllm", "--oracle-url=http://127.0.0.1:9", "--localize", "--reference=afolder"],
     "*--localize: --backend vllm talks to a server over HTTP, which shows no layers; gate the same weights "
     "with an in-process family (hf, openvino, python)*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", "--localize", "--reference=afolder"],
     "*--localize: --backend llamacpp at --oracle-url / --launch: oracle knows neither that server's model file*"),
    (["--backend=hf-cpu", "--localize"], "*--localize: no --reference; it localizes a gate's split against its "
                                         "reference*"),
    (["--backend=python:m:f", "--prompt-logprob-max-delta=x"],
     "*--prompt-logprob-max-delta 'x': expected a log-prob difference in nats*"),
    (["--backend=python:m:f", "--ladder=1,2"], "*cannot honour --ladder*"),
    (["--backend=openvino-cpu", "--ov-config=INFERENCE_PRECISION_HINT"],
     "*--ov-config 'INFERENCE_PRECISION_HINT': write KEY=VALUE,..., e.g. INFERENCE_PRECISION_HINT=f32*"),
    (["--backend=hf-cpu", "--boots=2"], "*cannot honour --boots (no server to restart*"),
    (["--backend=llamacpp", "--oracle-url=http://a:1", "--launch=x"], "*--oracle-url/--servers and --launch both given*"),
    (["--backend=llamacpp", "--logprobs=0"], "*--logprobs '0': must be at least 1*"),
    (["--backend=llamacpp", "--logprobs=many"], "*expected a positive integer*"),
    (["--backend=llamacpp", "--allow-inconclusive=cache,weather"], "*unknown kind 'weather'; known kinds: *"),
    (["--backend=llamacpp", "--near-tie-nats=-1"], "*must be between 0 and 50 nats*"),
    (["--backend=llamacpp", "--reference-kind=fp8"], "*must be mtp0 (target only) or f16*"),
    (["--backend=llamacpp", "--oracle-url=127.0.0.1:8080"], "*must start with http://*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:1", "--server-args=-np 2"], "*configure the embedded default*"),
    (["--backend=llamacpp", "--oracle-model=/nonexistent.gguf"], "*no such file; give the path of a GGUF*"),
    (["--backend=llamacpp", "--oracle-suite=nope"], "*built-in suites: coverage, default*"),
    (["--backend=llamacpp", "--reference=missing"], "*record one first with*"),
    (["--backend=llamacpp", "--launch=serve 'unclosed"], "*check the quotes*"),
    (["--backend=hf-cpu", "--oracle-url=http://127.0.0.1:1"], "*runs the model in this process: give --oracle-model*"),
    (["--backend=hf-cpu", "--ladder=1,2"], "*cannot honour --ladder (no server to restart, requests run one at a time*"),
    (["--backend=hf-cpu", "--oracle-model=/nonexistent"], "*no such file or folder; give a GGUF or a Hugging Face*"),
    (["--backend=hf-cpu", "--dtype=fp8"], "*--dtype 'fp8': must be one of float32, float16, bfloat16*"),
    (["--backend=hf-cpu", "--floor-dtype=int4"], "*--floor-dtype 'int4': must be one of*, or none*"),
    (["--backend=llamacpp", "--kld-max=lots"], "*expected a Mean KLD in nats, e.g. --kld-max 0.05*"),
    (["--backend=llamacpp", "--same-top1-min=101"], "*must be a percentage between 0 and 100*"),
    (["--backend=llamacpp", "--prefill-chunks=64,big"], "*'big' is neither a number of tokens nor 'served'*"),
    (["--backend=llamacpp", "--prefill-chunks=0"], "*a chunk holds at least 1 token*"),
    (["--backend=llamacpp", "--prefill-lengths=64,long"], "*--prefill-lengths '64,long': expected comma-separated "
     "prefix lengths in tokens*"),
    (["--backend=llamacpp", "--prefill-lengths=0,64"], "*--prefill-lengths '0,64': a prefix holds at least 1 token*"),
    (["--backend=llamacpp", "--dvp-max-delta=-0.1"], "*must be between 0 and 100 nats*"),
    (["--backend=llamacpp", "--servers=/nonexistent"], "*no such file; give a file with one server URL per line*"),
    (["--backend=llamacpp", "--server-args=-c 'unclosed"], "*--server-args*check the quotes*"),
    (["--backend=llamacpp", "--tokenizer=/nonexistent/tok.json"], "*--tokenizer /nonexistent/tok.json: no such file "
                                                                  "or folder; give a tokenizer.json*"),
    (["--backend=llamacpp", "--record=afile/ref"], "*--record afile/ref: cannot write in afile*"
                                                           "give --record a folder you can write*"),
    (["--backend=llamacpp", "--record-overwrite", "--reference-kind=f32"], "*must be mtp0 (target only) or f16*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", "--report-dir=afile/sub"],
     "*--report-dir afile/sub: cannot write there (Not a directory); nothing was sent to the server*"),
    (["--backend=llamacpp", "--max-tokens=0"], "*--max-tokens '0': must be at least 1*"),
    (["--backend=llamacpp", "--launch-timeout=0"], "*--launch-timeout '0': must be at least 1*"),
    (["--backend=llamacpp", "--request-timeout=soon"], "*--request-timeout 'soon': expected a positive integer*"),
    (["--backend=llamacpp", "--oracle-seed=abc"], "*--oracle-seed 'abc': expected a whole number, e.g. --oracle-seed 1234*"),
    (["--backend=llamacpp", "--warmup=-1"], "*--warmup '-1': must be 0 or more*"),
    (["--backend=llamacpp", "--oracle-budget=10x"], "*--oracle-budget '10x': expected a duration above 0 such as 10m, 600s or 1h "
                                             "(or off: no budget), e.g. --oracle-budget 10m*"),
    (["--backend=llamacpp", "--oracle-budget=0m"], "*--oracle-budget '0m': expected a duration above 0*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:9,http://127.0.0.1:10", "-n", "2", "--oracle-plan"],
     "*--oracle-plan with -n 2: the plan is one server's; run --oracle-plan without -n*"),
    (["--backend=llamacpp", "--min-speedup=0"], "*--min-speedup '0': must be a ratio above 0*"),
    (["--backend=llamacpp", "--min-speedup=fast"], "*--min-speedup 'fast': expected a ratio, e.g. --min-speedup 1.1*"),
    (["--backend=llamacpp", "--speed-noise-floor=5"],
     "*--speed-noise-floor '5': expected a fraction of the speed ratio from 0 to below 1, e.g. "
     "--speed-noise-floor 0.05*"),
    (["--backend=llamacpp", "--reference-launch="], "*--reference-launch '': give the reference server's command "
                                                      "with {port}, or recorded*"),
    (["--backend=llamacpp", "--reference=r", "--reference-launch=serve 'unclosed"],
     "*--reference-launch*check the quotes*"),
    (["--backend=llamacpp", "--reference-launch=llama-server --port {port}"],
     "*--reference-launch measures the reference config beside the candidate: add --reference DIR*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:1", "--reference=r", "--reference-launch=recorded"],
     "*oracle cannot stop a server it did not start*add --interleave-servers both-up*"),
    (["--backend=hf-cpu", "--reference=r", "--reference-launch=recorded"],
     "*--reference-launch starts a reference server; --backend hf-cpu runs the model in this process*"),
    (["--backend=llamacpp", "--speed-rounds=1"], "*--speed-rounds '1': must be between 2 and 1000 (a between-run "
                                                 "interval needs two paired rounds)*"),
    (["--backend=llamacpp", "--speed-rounds=many"], "*--speed-rounds 'many': expected a whole number*"),
    (["--backend=llamacpp", "--speed-rounds=4"], "*--speed-rounds belongs to the interleaved A/B session: add "
                                                 "--reference-launch CMD*"),
    (["--backend=llamacpp", "--speed-rounds-max=1"], "*--speed-rounds-max '1': must be between 2 and 1000 (a "
                                                     "between-run interval needs two paired rounds)*"),
    (["--backend=llamacpp", "--speed-rounds-max=8"], "*--speed-rounds-max belongs to the interleaved A/B session*"),
    (["--backend=llamacpp", "--speed-delta=0"], "*--speed-delta '0': expected a fraction above 0 and below 1, e.g. "
                                                "--speed-delta 0.03*"),
    (["--backend=llamacpp", "--speed-alpha=0.7"], "*--speed-alpha '0.7': expected a fraction above 0 and below 0.5, "
                                                  "e.g. --speed-alpha 0.05*"),
    (["--backend=llamacpp", "--speed-beta=x"], "*--speed-beta 'x': expected a fraction above 0 and below 0.5, e.g. "
                                               "--speed-beta 0.05*"),
    (["--backend=llamacpp", "--reference=r", "--reference-launch=recorded", "--speed-rounds=4",
      "--speed-rounds-max=8"], "*--speed-rounds 4 is the fixed design; --speed-rounds-max belongs to the sequential "
                               "test: drop --speed-rounds (sequential, the default) or drop --speed-rounds-max*"),
    (["--backend=llamacpp", "--speed-control=-1"], "*--speed-control '-1': must be between 0 and 1000*"),
    (["--backend=llamacpp", "--speed-control=20"], "*--speed-control belongs to the interleaved A/B session*"),
    (["--backend=llamacpp", "--interleave-servers=together"], "*--interleave-servers 'together': must be "
                                                              "one-at-a-time*or both-up*"),
    (["--backend=llamacpp", "--speed-cells=p512g128"], "*--speed-cells 'p512g128': 'p512g128' is not a cell; write "
                                                      "pPROMPT/gGENERATED*--speed-cells field*"),
    (["--backend=llamacpp", "--speed-cells=p8/g1"], "*p8/g1 needs a prompt of 32 to*"),
    (["--backend=llamacpp", "--speed-cells=p512/g1,p512/g1"], "*p512/g1 is listed twice*"),
    (["--backend=llamacpp", "--speed-repeats=0"], "*--speed-repeats '0': must be at least 1*"),
    (["--backend=llamacpp", "--speed-repeats=3"], "*--speed-repeats 3 repeats speed cells: add --speed-cells*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:1,http://127.0.0.1:2", "-n", "2", "--speed-cells=field",
      "--speed-repeats=3"], "*--speed-cells measures one server alone; with -n 2*without -n*"),
    (["--backend=llamacpp", "--ladder=0,2"], "*--ladder '0,2': levels must be between 1 and 1024*"),
    (["--backend=llamacpp", "--ladder-mode=random"], "*--ladder-mode 'random': must be cycle*or same*"),
    (["--backend=llamacpp", "--ladder-arrivals=slowly"], "*--ladder-arrivals 'slowly': must be at-once*or staggered*"),
    (["--backend=llamacpp", "--oracle-power=on"], "*--oracle-power 'on': must be auto (energy, temperature and isolation*or off (none measured)*"),
    (["--backend=llamacpp", "--require-conditions=chunked-prefill,rain"],
     "*--require-conditions 'chunked-prefill,rain': unknown condition 'rain'; known: chunked-prefill, mixed-batch*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:1,http://127.0.0.1:2", "-n", "2",
      "--require-conditions=overlap"], "*--require-conditions judges every run of one server; with -n 2*"),
    (["--backend=llamacpp", "--ladder-min=c4=5/4"], "*--ladder-min 'c4=5/4': expected cLEVEL=EXACT/TOTAL*"),
    (["--backend=llamacpp", "--ladder=1,2", "--ladder-min=c4=3/4"], "*--ladder-min names c4, which is not a "
                                                                    "--ladder level*"),
    (["--backend=llamacpp", "--boots=0"], "*--boots '0': must be at least 1*"),
    (["--backend=llamacpp", "--canaries=poetry"], "*--canaries 'poetry': unknown canary 'poetry'; known: code*"),
    (["--backend=llamacpp", "--needle-lengths=32"], "*--needle-lengths '32': 32 is out of range (64..max)*"),
    (["--backend=llamacpp", "--needle-depths=150"], "*--needle-depths '150': 150 is out of range (0..100)*"),
    (["--backend=llamacpp", "--oracle-context=0"], "*--oracle-context '0': must be at least 1*"),
    (["--backend=llamacpp", "--repeats=none"], "*--repeats 'none': expected a positive integer*"),
    (["--backend=llamacpp", "--haystack=/nonexistent.txt"], "*--haystack /nonexistent.txt: no such file or folder; "
                                                            "give a text file*"),
    (["--backend=llamacpp", "--code-set=/nonexistent.json"], "*--code-set /nonexistent.json: no such file or folder; "
                                                             "give a code-result set built by*"),
    (["--backend=llamacpp", "--sweep=ctk=f16,q8_0"], "*'ctk' is neither a flag (it starts with '-') nor an "
                                                     "environment variable*write --sweep=-ctk=f16,q8_0*"),
    (["--backend=llamacpp", "--sweep=-ctk=f16,,q8_0"], "*an empty value; list the values separated by single commas*"),
    (["--backend=llamacpp", "--sweep=-ctk"], "*--sweep '-ctk': expected SETTING=V1,V2,..., e.g. --sweep=-ctk=f16*"),
    (["--backend=llamacpp", "--sweep=-t=1,1"], "*the value '1' is listed twice; list each value once*"),
    (["--backend=llamacpp", "--sweep=-t=1", "--sweep=-t=2"], "*--sweep names -t more than once: give all its values "
                                                             "in one --sweep*"),
    (["--backend=llamacpp", "--sweep=-t=1,2"], "*--sweep gates every point against one reference: add --reference*"),
    (["--backend=llamacpp", "--sweep=-t=1,2", "--oracle-url=http://127.0.0.1:9"], "*--sweep starts a server for each "
                                                                            "point: give --launch CMD*"),
    (["--backend=llamacpp", "--sweep=-t=1,2", "--record=r"], "*drop --record*"),
    (["--backend=hf-cpu", "--sweep=-t=1,2"], "*runs in this process: there is no server command to sweep*"),
    (["--backend=llamacpp", "--ledger=mysql://lab:hunter2pw@db/oracle"], "*--ledger mysql://lab:***@db/oracle: not "
     "a ledger; give a SQLite file path (reports/ledger.sqlite), a postgresql://user@host/db URL, or off*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", "--neighbours=0,9"],
     "*--neighbours '0,9': 0 is out of range (1..1048576 tokens)*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", "--oracle-compare=bits"],
     "*--oracle-compare 'bits': must be tokens (complete token arrays equal) or logprobs*"),
    (["--backend=llamacpp", "--oracle-machine=arc b70"], "*--oracle-machine 'arc b70': not a machine name; give "
     "one word of letters, digits*--oracle-machine arc-b70*"),
    (["--backend=llamacpp", "--sweep-max=0"], "*--sweep-max '0': must be at least 1*"),
    (["--backend=llamacpp", "--sweep-max=2"], "*--sweep-max caps the points of a --sweep grid: add --sweep*"),
    (["--backend=llamacpp", "--temperature=0"], "*--temperature '0': must be above 0 and at most 10 (a greedy run: "
                                                 "leave --temperature out)*"),
    (["--backend=llamacpp", "--temperature=warm"], "*--temperature 'warm': expected a number, e.g. --temperature 0.8*"),
    (["--backend=llamacpp", "--temperature=0.8", "--top-p=1.5"], "*--top-p '1.5': must be above 0 and at most 1*"),
    (["--backend=llamacpp", "--top-p=0.9"], "*--top-p without --temperature: a greedy run has no sampling; add "
                                            "--temperature T*"),
    (["--backend=llamacpp", "--temperature=0.8", "--seeds=0"], "*--seeds '0': must be at least 1*"),
    (["--backend=llamacpp", "--seeds=2"], "*--seeds without --temperature*"),
    (["--backend=hf", "--temperature=0.8"], "*--temperature with --backend hf: this family is gated greedy only*"),
    (["--backend=llamacpp", "--temperature=0.8", "--logits"], "*--temperature with --logits*"),
    (["--backend=llamacpp", "--temperature=0.8", "--sampling-check=kl"], "*--sampling-check 'kl': must be tokens (the "
                                                                         "same tokens per seed) or distribution*"),
    (["--backend=llamacpp", "--temperature=0.8", "--sampling-check=distribution"],
     "*--sampling-check distribution scores both sides' samples under the reference model: give --reference DIR "
     "and --score-url URL*"),
    (["--backend=llamacpp", "--temperature=0.8", "--max-shift=-1"], "*--max-shift '-1': must be between 0 and 100 nats*"),
    (["--backend=llamacpp", "--temperature=0.8", "--sampling-check=distribution", "--reference=afile",
      "--score-url=localhost:8080"], "*--score-url 'localhost:8080': must start with http:// or https://*"),
    # Options that meant nothing, or contradicted each other, were accepted without a word.
    (["--backend=llamacpp", "--launch=llama-server -m m.gguf --port 8080"],
     "*--launch: no {port} in the command: put {port} where the port goes (e.g. --port {port})*"),
    (["--backend=llamacpp", "--launch="], "*--launch '': an empty command; give the server's command with {port}*"
                                          "or leave --launch out for the embedded default*"),
    (["--backend=llamacpp", "--oracle-seed=-1"], "*--oracle-seed '-1': must be 0 or more; a negative seed asks the server for a "
                                          "random seed each time*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:99999"], "*server URL 'http://127.0.0.1:99999': not a valid URL "
                                                            "(port 99999 is not 1..65535)*"),
    (["--backend=llamacpp", "--oracle-url=http://local host:8080"], "*server URL 'http://local host:8080': not a valid URL "
                                                             "(a space in it)*"),
    (["--backend=llamacpp", "--oracle-seed=4294967295"], "*--oracle-seed '4294967295': must be below 4294967295; llama-server keeps "
                                                  "a seed in 32 bits*"),
    (["--backend=llamacpp", "--dtype=float16"], "*--dtype means nothing for --backend llamacpp: only --backend hf "
                                                "loads the model with it*drop it*"),
    (["--backend=vllm-cpu", "--ov-config=INFERENCE_PRECISION_HINT=f32"],
     "*--ov-config means nothing for --backend vllm-cpu: only --backend openvino loads the model with it*"),
    (["--backend=llamacpp", "--floor-dtype=float16"], "*--floor-dtype means nothing for --backend llamacpp: only "
                                                      "--backend hf reloads the same weights*"),
    (["--record=ref"], "*--record: this option needs --backend NAME (e.g. --backend=llamacpp)*without --backend "
                       "pytest runs the tests of the current folder instead*"),
    (["--canaries=none", "--ladder=2"], "*--canaries, --ladder: these options need --backend NAME*"),
    (["--backend=llamacpp", "--server-args", "-np 4"],
     "*--server-args '-np 4': pytest reads a separate word that starts with '-' as another option, not as the "
     "value of --server-args; join them with '=': --server-args='-np 4'*"),
    (["--backend=llamacpp", "--reference-launch", "-m x"], "*join them with '=': --reference-launch='-m x'*"),
    (["--backend=llamacpp", "--record=new", "--reference=ref"],
     "*--record new and --reference ref both given: --record saves this run as a new reference, --reference gates "
     "it against one; give one of them*"),
    (["--backend=llamacpp", "--oracle-url=http://[::1"],
     "*server URL 'http://[[]::1': not a valid URL (*); write http://HOST:PORT, e.g. http://127.0.0.1:8080 or "
     "http://[[]::1]:8080*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", "--report-dir=" + "r" * 300],
     "*--report-dir rrrr*: a name of 300 bytes, longer than the 255 a file or folder name may have; nothing was "
     "written or sent; give --report-dir a shorter name*"),
    (["--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", "--record=" + "r" * 300],
     "*--record rrrr*: a name of 300 bytes, longer than the 255*"),
    (["--backend=llamacpp", "--haystack=afolder"], "*--haystack afolder: a folder, not a file; give a UTF-8 text "
                                                   "file, one haystack paragraph a line*"),
    (["--backend=llamacpp", "--haystack=binary.txt"], "*--haystack binary.txt: not UTF-8 text (byte 1 is*); give a "
                                                      "UTF-8 text file*"),
    (["--backend=llamacpp", "--code-set=notes.txt"], "*notes.txt: not valid JSON (*); give --code-set a set "
                                                     "built by*"),
    (["--backend=llamacpp", "--code-set=other.json"], "*other.json: not what oracle writes there: missing key "
                                                      "items; give --code-set a set built by*"),
])
def test_usage_errors_name_the_fix(pytester, args, message):
    (pytester.path / "afile").write_text("a file where a folder is needed (refused for root too)\n")
    (pytester.path / "afolder").mkdir()
    (pytester.path / "binary.txt").write_bytes(b"\x00\xff\xfe binary, not text")
    (pytester.path / "notes.txt").write_text("not JSON\n")
    (pytester.path / "other.json").write_text('{"programs": []}\n')
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_without_backend_the_plugin_stays_out_of_the_way(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_record_onto_a_non_empty_folder_is_refused_before_starting(pytester):
    (pytester.path / "ref").mkdir()
    (pytester.path / "ref" / "keep.txt").write_text("mine")
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--oracle-url=http://127.0.0.1:9",
                                "--record=ref")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*a non-empty folder is already there and was left untouched*"])
    assert (pytester.path / "ref" / "keep.txt").read_text() == "mine"


def test_unreachable_url_says_start_it_first(pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--oracle-url=http://127.0.0.1:9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*does not answer its health check; start it first*"])


def test_gate_items_are_collected_from_the_suite_alone(pytester):
    """--collect-only names every item without a server (what xdist workers rely on)."""
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--oracle-url=http://127.0.0.1:9",
                                "--collect-only", "-q")
    result.stdout.fnmatch_lines(["oracle::run[[]code-palindrome[]]", "*oracle::cache-zero"])
    assert result.ret == 0


def test_crosstalk_is_collected_at_each_ladder_level_of_two_or_more_only(pytester):
    base = ("-p", "no:cacheprovider", "--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", "--collect-only",
            "-q")
    on = pytester.runpytest(*base, "--ladder=1,2,8")
    on.stdout.fnmatch_lines(["*test_crosstalk[[]c2[]]", "*test_crosstalk[[]c8[]]"])
    assert "test_crosstalk[c1]" not in on.stdout.str() and on.ret == 0
    for extra in ((), ("--ladder=1",), ("--ladder=4", "--canaries=code,needle,repeats")):
        off = pytester.runpytest(*base, *extra)
        assert "test_crosstalk" not in off.stdout.str() and off.ret == 0, extra


# Options that take no value (switches), or whose every value is valid (none here): no bad-value case.
SWITCHES = {"--allow-mixed-servers", "--record-overwrite", "--allow-near-ties", "--speculative", "--logits",
            "--canary-strict", "--sweep-no-repro", "--localize", "--allow-logprobs-moved"}


def test_every_option_with_a_value_has_a_bad_value_case():
    """A new option fails this test until its bad value has a case above (and so a message naming the fix)."""
    from oracle.gate.declarations import add_options

    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    declared = {name for group in parser._groups for opt in group.options for name in opt.names()
                if name.startswith("--")}
    covered = {arg.split("=")[0] for case in test_usage_errors_name_the_fix.pytestmark[0].args[1] for arg in case[0]}
    missing = sorted(declared - SWITCHES - covered)
    assert not missing, f"options without a bad-value case in test_usage_errors_name_the_fix: {missing}"
    assert not SWITCHES - declared, f"SWITCHES names options that no longer exist: {sorted(SWITCHES - declared)}"
