#!/usr/bin/env bats
# Across verbs: failures from e2b in one line with a documented exit code, no
# traceback and no key; --debug; each verb's help and the README against the code.

load test_helper

# The exit codes VERB's help lists, a line each.
help_codes() { cr-e2b "$1" --help | sed -n '/^exit codes:/,$p' | sed -nE 's/^ +([0-9]+)  .*/\1/p'; }

@test "every verb needs E2B_API_KEY and says so before any call" {
  unset E2B_API_KEY
  for verb in "brief --sandbox sbx1 --brief brief.md" "log --sandbox sbx1" "status --sandbox sbx1" \
              "list" "wait --sandbox sbx1" "kill --sandbox sbx1"; do
    run cr-e2b $verb
    assert_failure 2
    assert_output "cr-e2b: missing key: export E2B_API_KEY (your API key, from the e2b dashboard)"
  done
  no_sdk_calls
}

@test "an invalid e2b key is one line and exit 1" {
  export FAKE_E2B_FAIL=auth
  for verb in "start --repo https://h/r.git --profile backend --brief brief.md --check true" "status --sandbox sbx1" "list" "kill --sandbox sbx1"; do
    run --separate-stderr cr-e2b $verb
    assert_failure 1
    assert_one_error_line
    assert_output_contains "e2b refused the API key (check E2B_API_KEY)"
    refute_output_contains "$E2B_KEY_VALUE"
  done
}

@test "a rate limit is one line and exit 7, to try again later" {
  export FAKE_E2B_FAIL=ratelimit
  run --separate-stderr cr-e2b list
  assert_failure 7
  assert_one_error_line
  assert_output_contains "rate limiting or busy; try again later"
}

@test "a network failure is one line and exit 7" {
  export FAKE_E2B_FAIL=network
  run cr-e2b list
  assert_failure 7
  assert_output "cr-e2b: cannot reach e2b (network): [Errno 111] Connection refused"
}

@test "--debug and CR_E2B_DEBUG show the traceback, masked, and keep the exit code; CR_E2B_DEBUG=0 does not" {
  export FAKE_E2B_FAIL=network
  run cr-e2b --debug list
  assert_failure 7
  assert_output_contains Traceback
  assert_output_contains "cr-e2b: cannot reach e2b (network)"
  CR_E2B_DEBUG=1 run cr-e2b list
  assert_failure 7
  assert_output_contains Traceback
  CR_E2B_DEBUG=0 run cr-e2b list
  assert_failure 7
  refute_output_contains Traceback
  unset FAKE_E2B_FAIL
  make_repo; with_claude
  # the step's output, which the failure (and so its traceback) quotes, holds the key
  run --separate-stderr cr-e2b --debug start --repo "$REPO" --profile backend --brief brief.md --workdir repo \
    --check true --setup 'echo "key $ANTHROPIC_API_KEY" >&2; exit 1'
  assert_failure 1
  [[ "$stderr" == *Traceback* ]]
  [[ "$stderr" == *"key [redacted]"* ]]
  [[ "$stderr" != *"$MODEL_KEY_VALUE"* ]]
}

@test "--debug works after the verb, and a global option out of place is one usage line" {
  run --separate-stderr cr-e2b status --sandbox nosuch --debug
  assert_failure 3
  [[ "$stderr" == *Traceback* ]]
  [[ "$stderr" == *"no such sandbox: nosuch"* ]]
  run --separate-stderr cr-e2b log --version --sandbox sbx1
  assert_failure 2
  assert_one_error_line
  assert_output_contains "unrecognized arguments: --version"
}

@test "no e2b SDK installed is one line, not an ImportError" {
  export PYTHONPATH="$TEST_DIR/empty"
  mkdir -p "$PYTHONPATH/e2b"
  printf 'raise ImportError("No module named e2b")\n' >"$PYTHONPATH/e2b/__init__.py"
  run cr-e2b list
  assert_failure 1
  assert_output "cr-e2b: the e2b SDK is not installed: pip install 'e2b>=2.51,<3'"
}

@test "help, version and usage errors do not import the e2b SDK" {
  export PYTHONPATH="$TEST_DIR/tripwire"
  mkdir -p "$PYTHONPATH/e2b"
  printf 'import sys\nsys.stderr.write("e2b imported\\n")\n' >"$PYTHONPATH/e2b/__init__.py"
  for args in "--help" "--version" "start --help" "start --repo x" "log" "kill --sandbox 'bad id'"; do
    run bash -c "cr-e2b $args"
    refute_output_contains "e2b imported"
  done
  unset E2B_API_KEY ANTHROPIC_API_KEY
  run cr-e2b start --repo https://h/r.git --profile backend --brief brief.md --dry-run
  assert_success
  refute_output_contains "e2b imported"
}

@test "each verb's help says what it does, with two to five examples and the exit codes it can give" {
  verbs=$(PYTHONPATH="$ROOT" python3 -c 'import cr_e2b; print(" ".join(cr_e2b.VERBS))')
  for verb in $verbs; do
    run cr-e2b "$verb" --help
    assert_success
    examples=$(grep -c '^  \$ cr-e2b '"$verb"' ' <<<"$output")
    [ "$examples" -ge 2 ] || { echo "$verb: $examples examples" >&2; return 1; }
    [ "$examples" -le 5 ] || { echo "$verb: $examples examples" >&2; return 1; }
    assert_output_contains "exit codes:
    0  success"
    [ "$(grep -c '^  [ 0-9]\{2\}[0-9]  ' <<<"$output")" -lt 11 ] || { echo "$verb lists every code" >&2; return 1; }
  done
  run cr-e2b wait --help
  assert_output_contains "    5  the last turn's last line is EPIC <id> BLOCKED ..."
  refute_output_contains "    9  refused"
  run cr-e2b --help
  assert_output_contains "    9  refused: the sandbox holds work that would be lost"
}

@test "each verb's help gives its own meaning of a code: log's 0 is no wait's, list's 4, 5 and 8 are --until-idle's" {
  run cr-e2b log --help
  assert_output_contains "exit codes:
    0  success
    1  failure"
  refute_output_contains "READY"
  run cr-e2b list --help
  assert_output_contains "    4  with --watch --until-idle only: the last turn failed"
  assert_output_contains "    5  with --watch --until-idle only: the last turn's last line is EPIC"
  assert_output_contains "    8  with --watch --until-idle only: the last turn ended but"
  refute_output_contains "    3  no such sandbox"
  run cr-e2b wait --help
  assert_output_contains "    0  success: the last turn ended well; for an EPIC brief, its READY is"
  run cr-e2b kill --help
  refute_output_contains "fork"
}

@test "README's exit codes are the code's, and its verb table is each verb's summary, in --help's order" {
  run env PYTHONPATH="$ROOT" python3 - "$ROOT/README.md" <<'PY'
import re, sys
import cr_e2b
text = open(sys.argv[1], encoding="utf-8").read()
table = text[text.index("## Exit codes"):]
table = table[:table.index("\n\n", table.index("| ---"))]
rows = {int(code): meaning for code, meaning in re.findall(r"^\| (\d+) \| (.*) \|$", table, re.M)}
print(rows == cr_e2b.EXIT_CODES)
verbs = re.findall(r"^\| `([a-z]+)` \| (.*) \|$", text[text.index("## The verbs"):], re.M)
print(verbs == [(verb, entry["summary"]) for verb, entry in cr_e2b.VERBS.items()])
PY
  assert_output "True
True"
}

@test "every verb and option the README names exists" {
  run python3 - "$ROOT/README.md" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
for verb, rest in re.findall(r"cr-e2b (template build|[a-z]+)((?: +[^\s`|;)]+)*)", text):
    print(verb.replace(" ", "+"), *sorted({w.split("=")[0] for w in rest.split() if w.startswith("--")}))
PY
  assert_success
  [ "${#lines[@]}" -ge 20 ]
  verbs_have_options "${lines[@]}"
}

@test "the package's version is the tool's" {
  run python3 -c 'import re, sys; print(re.search(r"^version = \"(.*)\"$", open(sys.argv[1]).read(), re.M).group(1))' "$ROOT/pyproject.toml"
  version=$output
  run cr-e2b --version
  assert_output "cr-e2b $version"
}

@test "--version prints the version" {
  run cr-e2b --version
  assert_success
  [[ "$output" =~ ^cr-e2b\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "the contract check fails on an SDK that lacks a parameter cr-e2b passes" {
  mkdir -p "$TEST_DIR/old-sdk"
  cp -r "$FIXTURES/e2b" "$TEST_DIR/old-sdk/"
  sed -i 's/envs=None, lifecycle=None,$/envs=None,/' \
    "$TEST_DIR/old-sdk/e2b/__init__.py"
  run env PYTHONPATH="$TEST_DIR/old-sdk" python3 "$ROOT/tests/contract.py"
  assert_failure 1
  assert_output_contains "Sandbox.create(template, timeout, metadata, envs, lifecycle, network, mcp, allow_internet_access): missing lifecycle"
  assert_output_contains "ok e2b (not installed: $TEST_DIR/old-sdk/e2b): Sandbox.connect(sandbox_id, timeout)"
}

@test "the contract check fails when the SDK cannot be imported" {
  mkdir -p "$TEST_DIR/broken/e2b"
  printf 'raise ImportError("cannot import name Sandbox")\n' >"$TEST_DIR/broken/e2b/__init__.py"
  run env PYTHONPATH="$TEST_DIR/broken" python3 "$ROOT/tests/contract.py"
  assert_failure 1
  assert_output_contains "not ok cannot import the e2b SDK"
}

@test "README is a newcomer's first hour: at most 20 KB, with a table of contents" {
  [ "$(wc -c <"$ROOT/README.md")" -le 20480 ]
  grep -q '^## Contents$' "$ROOT/README.md"
  run grep -c '^- \[' "$ROOT/README.md"
  [ "$output" -ge 8 ]
}

@test "the project stands alone: no file of it points at a folder beside the repository" {
  run grep -rln --exclude-dir=.git --exclude-dir=.venv-ci --exclude=errors.bats -e '\.\./shared' "$ROOT"
  assert_failure 1
}

@test "every exit code a verb gives is one its help lists, from the one table" {
  make_sandbox
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  # VERB|ENV|ARGS: what a verb gives in a situation, checked against its help
  scenarios=(
    "start||--repo ftp://h/r.git --profile backend --brief brief.md"
    "start|FAKE_E2B_FAIL=network|${ok_args[*]} --check true"
    "start|FAKE_E2B_FAIL=auth|${ok_args[*]} --check true"
    "start|FAKE_E2B_FAIL=command:/.cr/setup|${ok_args[*]} --check true"
    "brief||--sandbox nosuch --brief brief.md"
    "brief|FAKE_E2B_FAIL=ratelimit|--sandbox sbx1 --brief brief.md"
    "status||--sandbox nosuch"
    "status|FAKE_E2B_FAIL=busy|--sandbox sbx1"
    "list|FAKE_E2B_FAIL=network|"
    "wait||--sandbox nosuch"
    "wait||--sandbox sbx1 --all"
    "diff||--sandbox sbx1"
    "cancel||--sandbox nosuch"
    "kill||--sandbox nosuch --force"
    "kill|FAKE_E2B_FAIL=network|--all"
    "extend||--sandbox nosuch --timeout 60"
    "pause|FAKE_E2B_FAIL=auth|--sandbox sbx1"
    "resume||--sandbox nosuch"
    "fork||--sandbox nosuch"
    "fork||--sandbox sbx1 --count 21"
    "doctor|FAKE_E2B_FAIL=network|"
    "doctor|E2B_API_KEY=|"
    "template|FAKE_E2B_FAIL=network|build --name acme"
    "template||build --name base"
  )
  for scenario in "${scenarios[@]}"; do
    IFS='|' read -r verb envs words <<<"$scenario"
    # shellcheck disable=SC2086 # the words of a command line
    env $envs cr-e2b "$verb" $words >/dev/null 2>&1 && code=0 || code=$?
    help_codes "$verb" | grep -qx "$code" || { echo "cr-e2b $verb $words ($envs) gave $code, not in its help" >&2; return 1; }
  done
}

@test "--retry-for bounds each try's own wait too: a request to e2b waits at most what is left of it" {
  make_sandbox
  export FAKE_E2B_FAIL=api-network:2
  run --separate-stderr cr-e2b wait --sandbox sbx1 --retry-for 30 --interval 0.1
  run python3 -c 'import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    if c["call"] in ("Sandbox.get_info", "Sandbox.connect"):
        print(c["call"], 5 <= c.get("request_timeout", 0) <= 30)' "$FAKE_E2B_DIR/calls.jsonl"
  assert_output_contains "Sandbox.get_info True"
  refute_output_contains "False"
}
