# Shared by every bats file: an isolated HOME, PATH and e2b per test, the
# recording fake SDK, a stub Claude Code, and tiny assertions.

bats_require_minimum_version 1.5.0  # run --separate-stderr

ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
FIXTURES="$ROOT/tests/fixtures"

# Distinctive values, so that a leak anywhere is found by a plain search.
E2B_KEY_VALUE="e2b_LEAKCHECK_e2bkey_7f3a9c"
MODEL_KEY_VALUE="sk-ant-LEAKCHECK-modelkey-41d2"
GITHUB_KEY_VALUE="ghp_LEAKCHECK_githubtoken_88b1"

setup() {
  TEST_DIR="$BATS_TEST_TMPDIR"
  export HOME="$TEST_DIR/home" FAKE_E2B_DIR="$TEST_DIR/e2b" CLAUDE_STUB_DIR="$TEST_DIR/claude"
  mkdir -p "$HOME" "$FAKE_E2B_DIR" "$CLAUDE_STUB_DIR" "$TEST_DIR/bin" "$TEST_DIR/work"
  export PYTHONPATH="$FIXTURES" PYTHONDONTWRITEBYTECODE=1 FAKE_E2B_PASS=CLAUDE_STUB_DIR
  export PATH="$TEST_DIR/bin:$ROOT:$(python_dir)$(system_tools)"
  unset E2B_API_KEY ANTHROPIC_API_KEY CLAUDE_CODE_OAUTH_TOKEN GITHUB_TOKEN NO_COLOR CR_E2B_DEBUG
  unset FAKE_E2B_FAIL FAKE_E2B_MAX_TIMEOUT FAKE_E2B_LATENCY_MS
  # who the owner is (CR_E2B_OWNER, a GitHub Actions run): the host's must not leak in
  unset CR_E2B_OWNER GITHUB_ACTIONS GITHUB_REPOSITORY GITHUB_RUN_ID
  export E2B_API_KEY="$E2B_KEY_VALUE" ANTHROPIC_API_KEY="$MODEL_KEY_VALUE"
  export GIT_CONFIG_GLOBAL="$HOME/.gitconfig" GIT_CONFIG_NOSYSTEM=1
  git config --global user.name "Test Person"
  git config --global user.email "test@example.com"
  git config --global init.defaultBranch main
  cd "$TEST_DIR/work" || return 1
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nCount the words.\n' >brief.md
}

# The machine's own tools, each linked into a directory of the test's, less the
# ones a test puts in place itself when it needs them: a gh, jq or claude of
# this machine's must not change what a test finds (a setup step that installs
# gh unless one is there, say).
system_tools() {
  local dir
  mkdir -p "$TEST_DIR/sys"
  for dir in /usr/local/bin /usr/bin /bin; do cp -sn "$dir"/* "$TEST_DIR/sys/" 2>/dev/null; done
  rm -f "$TEST_DIR/sys/gh" "$TEST_DIR/sys/jq" "$TEST_DIR/sys/claude"
  echo "$TEST_DIR/sys"
}

# The directory of the python3 that has e2b (a virtual environment's), unless
# it is a system one, whose tools system_tools gives already.
python_dir() {
  local dir
  dir=$(dirname "$(command -v python3)")
  case $dir in /usr/local/bin | /usr/bin | /bin) ;; *) echo "$dir:" ;; esac
}

teardown() {
  # Runners started by the tests are detached, and a sandbox left running has
  # its commands' process groups; stop whatever is left of them.
  local pidfile group
  # a stub still held by a failed test would keep its runner alive
  [ -p "$CLAUDE_STUB_DIR/fifo" ] && timeout 1 bash -c 'echo go >"$1"' _ "$CLAUDE_STUB_DIR/fifo"
  for pidfile in "$FAKE_E2B_DIR"/sandboxes/*/home/.cr/runner.pid "$TEST_DIR"/sbx/.cr/runner.pid \
    "$FAKE_E2B_DIR"/sandboxes/*/home/.cr/ci.pid "$TEST_DIR"/sbx/.cr/ci.pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
  done
  # each turn's Claude Code leads a process group of its own
  for pidfile in "$FAKE_E2B_DIR"/sandboxes/*/home/.cr/queue/*.pid "$TEST_DIR"/sbx/.cr/queue/*.pid; do
    [ -f "$pidfile" ] && kill -KILL -- "-$(cat "$pidfile")" 2>/dev/null
  done
  for pidfile in "$TEST_DIR/github.pid" "$TEST_DIR/model.pid"; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
  done
  for pidfile in "$FAKE_E2B_DIR"/sandboxes/*/pids; do
    [ -f "$pidfile" ] || continue
    while read -r group; do kill -KILL -- "-$group" 2>/dev/null; done <"$pidfile"
  done
  return 0
}

# The sandbox side (the turn runner and the rest), run for real in $SBX, a
# directory standing in for the sandbox user's home, with the stub Claude Code.
setup_runner() {
  SBX="$TEST_DIR/sbx"
  mkdir -p "$SBX/.cr/inbox" "$SBX/repo"
  cp "$ROOT/cr-e2b" "$SBX/.cr/cr_e2b.py"
  echo 7d3c1a52-0c57-4b8e-9d1e-5f2a40c9e111 >"$SBX/.cr/session"
  echo "$SBX/repo" >"$SBX/.cr/workdir"
  printf -- '--permission-mode\0acceptEdits\0' >"$SBX/.cr/agent-args"
  printf 'ANTHROPIC_API_KEY\n' >"$SBX/.cr/secret-names"
  with_claude
}

# The command line the caller sends to run a verb of the sandbox side: sandbox_line VERB WORDS...
# (its start asked of cr_e2b once a test, in_sandbox's)
sandbox_line() {
  [ -n "${SANDBOX_LAUNCH:-}" ] ||
    SANDBOX_LAUNCH=$(PYTHONPATH="$ROOT" python3 -c 'import cr_e2b; print(cr_e2b.sandbox_command())') || return 1
  printf '%s' "$SANDBOX_LAUNCH"
  printf ' %q' "$@"
  echo
}

# A verb of the sandbox side, run in $SBX (its HOME) by the very command line
# the caller sends: in_sandbox VERB WORDS... (the line's start is asked once a test)
in_sandbox() {
  local command
  [ -n "${SANDBOX_LAUNCH:-}" ] ||
    SANDBOX_LAUNCH=$(PYTHONPATH="$ROOT" python3 -c 'import cr_e2b; print(cr_e2b.sandbox_command())') || return 1
  command=$(sandbox_line "$@") || return 1
  mkdir -p "$SBX/.cr"
  [ -f "$SBX/.cr/cr_e2b.py" ] || cp "$ROOT/cr-e2b" "$SBX/.cr/cr_e2b.py"
  (cd "$SBX" && HOME="$SBX" bash -c "$command")
}

# setup.json for the sandbox side's setup: setup_plan STEPS JSON_FIELDS (a
# JSON object's inside, the steps' own settings).
setup_plan() {
  mkdir -p "$SBX/.cr"
  printf '{"steps": %s, "limit": 1800, "gh_version": "2.62.0", %s}\n' "$1" "$2" >"$SBX/.cr/setup.json"
}

# Enqueues a prompt (given as an argument, or a file with -f) and kicks a runner,
# exactly as `cr-e2b brief` does. Prints "turn ahead".
send() {
  local inbox="$SBX/.cr/inbox/$RANDOM$RANDOM.md" queued
  if [ "$1" = -f ]; then cp "$2" "$inbox"; else printf '%s\n' "$1" >"$inbox"; fi
  queued=$(in_sandbox enqueue "$inbox") && in_sandbox kick || return 1
  reply_field "$queued" turn ahead
}

# Fields of a sandbox verb's reply (its last line, JSON), on one line: reply_field REPLY NAME...
reply_field() {
  python3 -c 'import json, sys
reply = json.loads(sys.argv[1].splitlines()[-1])
print(" ".join(v if isinstance(v, str) else json.dumps(v) for v in (reply[name] for name in sys.argv[2:])))' "$@"
}

idle() { eventually "an idle runner" nothing_pending "$SBX"; }

# The prompts the stub received, in the order it received them.
prompts_seen() {
  local c
  for c in "$CLAUDE_STUB_DIR"/calls/*; do head -n 1 "$c/stdin"; done
}

turns_json() {
  PYTHONPATH="$ROOT" python3 -c 'import json, sys, cr_e2b
print(json.dumps(cr_e2b.fold_records(open(sys.argv[1]).read().splitlines())))' "$SBX/.cr/turns.jsonl"
}

turn_field() {
  turns_json | python3 -c 'import json,sys; t=json.load(sys.stdin); print(" ".join(str(x[sys.argv[1]]) for x in t))' "$1"
}

# A repository to clone: a bare one with `main`, and its file:// URL in $REPO.
make_repo() {
  git init -q "$TEST_DIR/src"
  echo hello >"$TEST_DIR/src/README"
  git -C "$TEST_DIR/src" add README
  git -C "$TEST_DIR/src" commit -qm init
  git clone -q --bare "$TEST_DIR/src" "$TEST_DIR/origin.git"
  REPO="file://$TEST_DIR/origin.git"
}

# Put the stub Claude Code on PATH, as a template that ships it would.
with_claude() {
  ln -sf "$FIXTURES/claude" "$TEST_DIR/bin/claude"
}

# A brief whose stub worker delivers: it commits on the brief's branch, pushes
# it and ends on a READY line for that commit, which the verdict gate then
# checks (origin is not GitHub: there is no pull request to look at).
delivering_brief() { # FILE
  cat >"$1" <<'EOF'
EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/
STUB_RUN=git checkout -q -B claude/wc-3-count && date +%s%N >count.txt && git add count.txt && git commit -qm count && git push -q origin claude/wc-3-count
STUB_SAY=echo "EPIC wc-3 READY $(git rev-parse HEAD) https://git.example.com/you/app/pull/1"
EOF
}

# A worker started for real against the fake: sandbox sbx1, stub agent; the
# brief (default brief.md), then any more start options.
start_worker() {
  make_repo
  with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief "${1:-brief.md}" --workdir repo "${@:2}"
  assert_success
}

sandbox_home() { echo "$FAKE_E2B_DIR/sandboxes/${1:-sbx1}/home"; }

# Waits (up to 30 s) until a command succeeds: eventually WHAT COMMAND...
eventually() {
  local what=$1 i
  shift
  for i in $(seq 300); do
    "$@" && return 0
    sleep 0.1
  done
  echo "waited in vain for $what" >&2
  return 1
}

nothing_pending() { [ -z "$(pending_turns "$1")" ]; }

# Until the sandbox's runner has nothing pending.
wait_idle() { eventually "an idle runner" nothing_pending "$(sandbox_home "${1:-sbx1}")"; }

turn_file() { echo "${3:-$(sandbox_home)}/.cr/queue/$(printf %06d "$1").$2"; }

# Until turn N of the sandbox has ended, or started (in its home, or HOME).
turn_ended() { eventually "turn $1 to end" test -e "$(turn_file "$1" ended "${2:-}")"; }
turn_started() { eventually "turn $1 to start" test -e "$(turn_file "$1" started "${2:-}")"; }

# A stub Claude Code whose prompt holds STUB_BLOCK waits for release_stub.
hold_stub() { mkfifo "$CLAUDE_STUB_DIR/fifo"; }
release_stub() { timeout 30 bash -c 'echo go >"$1"' - "$CLAUDE_STUB_DIR/fifo"; }

pending_turns() {
  local f
  for f in "$1"/.cr/queue/*.md; do
    [ -e "$f" ] && [ ! -e "${f%.md}.ended" ] && echo "$f"
  done
}

# The SDK calls made so far, one name per line. A verb asks for a sandbox's
# info and connects to it at the same time: that pair is shown info first.
calls() {
  python3 -c 'import json,sys
names = [json.loads(line)["call"] for line in open(sys.argv[1])]
for i in range(len(names) - 1):
    if names[i:i + 2] == ["Sandbox.connect", "Sandbox.get_info"]:
        names[i:i + 2] = ["Sandbox.get_info", "Sandbox.connect"]
print("\n".join(names))' "$FAKE_E2B_DIR/calls.jsonl"
}

# A field of every recorded call of one kind, one JSON value per line.
call_field() {
  python3 -c 'import json,sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    if c["call"] == sys.argv[2]: print(json.dumps(c.get(sys.argv[3])))' \
    "$FAKE_E2B_DIR/calls.jsonl" "$1" "$2"
}

# Everything recorded except the sandbox's own environment at creation,
# which is where the keys are meant to go.
recorded_without_create_envs() {
  [ -f "$FAKE_E2B_DIR/calls.jsonl" ] || return 0
  python3 -c 'import json,sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    c.pop("envs", None) if c["call"] == "Sandbox.create" else None
    print(json.dumps(c))' "$FAKE_E2B_DIR/calls.jsonl"
}

no_sdk_calls() {
  if [ -s "$FAKE_E2B_DIR/calls.jsonl" ]; then
    echo "expected no SDK call, got:" >&2; calls >&2; return 1
  fi
}

assert_success() {
  if [ "$status" -ne 0 ]; then
    printf 'expected success, got exit %s\noutput: %s\n' "$status" "$output" >&2; return 1
  fi
}

assert_failure() {
  if [ "$status" -ne "$1" ]; then
    printf 'expected exit %s, got %s\noutput: %s\n' "$1" "$status" "$output" >&2; return 1
  fi
}

# assert_output TEXT, or the expected text on stdin (a heredoc).
assert_output() {
  local expected
  if [ $# -gt 0 ]; then expected=$1; else expected=$(cat); fi
  if [ "$output" != "$expected" ]; then
    printf -- '--- expected\n%s\n--- actual\n%s\n' "$expected" "$output" >&2; return 1
  fi
}

assert_output_contains() {
  if [[ "$output" != *"$1"* ]]; then
    printf 'expected output to contain: %s\noutput: %s\n' "$1" "$output" >&2; return 1
  fi
}

refute_output_contains() {
  if [[ "$output" == *"$1"* ]]; then
    printf 'expected output not to contain: %s\noutput: %s\n' "$1" "$output" >&2; return 1
  fi
}

# After `run --separate-stderr`: one line on stderr, prefixed with the tool's
# name, no traceback, and nothing on stdout. The line is then $output, for the
# assertions that follow.
assert_one_error_line() {
  local lines
  lines=$(printf '%s\n' "$stderr" | grep -c .)
  if [ "$lines" -ne 1 ] || [[ "$stderr" != "cr-e2b: "* ]] || [[ "$stderr" == "cr-e2b: warning: "* ]] ||
    [[ "$stderr" == *Traceback* ]] ||
    [ -n "$output" ]; then
    printf 'expected one "cr-e2b: ..." line on stderr and no output, got:\n%s\nstdout: %s\n' \
      "$stderr" "$output" >&2
    return 1
  fi
  output=$stderr
}

# start with bad input: exit 2, one line naming the problem, and no SDK call.
rejects() { # expected-text start-options...
  local expected=$1
  shift
  run --separate-stderr cr-e2b start "$@"
  assert_failure 2
  assert_one_error_line
  assert_output_contains "$expected"
  no_sdk_calls
}

# Each argument a line "VERB --option ..." (VERB may be "template+build"): the
# verb exists and its help names each option.
verbs_have_options() {
  local line verb options option help
  for line in "$@"; do
    read -r verb options <<<"$line"
    # shellcheck disable=SC2086 # a verb and its action are two words
    help=$(cr-e2b ${verb/+/ } --help) || { echo "no verb $verb" >&2; return 1; }
    for option in $options; do
      [[ "$help" == *"$option"* ]] || { echo "cr-e2b $verb has no $option" >&2; return 1; }
    done
  done
}

ok_args=(--repo https://github.com/you/app.git --profile backend --brief brief.md)

# A sandbox as cr-e2b leaves it (sbx1, runner in place, nothing running), made
# straight through the fake so that no call is recorded.
make_sandbox() {
  python3 -c 'import e2b; e2b.Sandbox.create(timeout=3600, metadata={"cr-e2b": "1", "profile": "backend",
    "repo": "https://git.example.com/team/app.git", "session": "9b30a883-73ad-4531-bba2-05e112cdb160"})'
  install_runner sbx1
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
}

# The sandbox side, as start leaves it, in a sandbox the fake made: install_runner ID
install_runner() {
  local home
  home=$(sandbox_home "$1")
  mkdir -p "$home/.cr/queue"
  cp "$ROOT/cr-e2b" "$home/.cr/cr_e2b.py"
  printf 'ANTHROPIC_API_KEY\n' >"$home/.cr/secret-names"
  printf 'repo\n' >"$home/.cr/workdir"
}

# Makes sbx1 (or ID) a sandbox that an older cr-e2b started: its sandbox side
# the bash runner of old, no cr_e2b.py. $OLDER is what cr-e2b then says of it,
# after "sandbox ID was started by an older cr-e2b: ".
older_sandbox() {
  local side
  side="$(sandbox_home "${1:-sbx1}")/.cr"
  rm "$side/cr_e2b.py"
  printf '#!/bin/bash\necho "usage: runner VERB" >&2\nexit 2\n' >"$side/runner"
}
OLDER="its sandbox side is the bash runner that this release no longer drives; use the release that started it, or start a new worker"

# The fake sandbox's state: running, paused or killed.
sandbox_state() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["state"])' \
    "$FAKE_E2B_DIR/sandboxes/${1:-sbx1}/info.json"
}

# What e2b does when a sandbox's lifetime runs out with on_timeout=pause.
pause_sandbox() {
  python3 - "$FAKE_E2B_DIR/sandboxes/${1:-sbx1}/info.json" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
info["state"] = "paused"
json.dump(info, open(sys.argv[1], "w"))
PY
}

# The seconds the fake sandbox has left (of sbx1, or the id given).
seconds_left() {
  python3 -c 'import json, sys
from datetime import datetime, timezone
end = datetime.fromisoformat(json.load(open(sys.argv[1]))["end_at"])
print(int((end - datetime.now(timezone.utc)).total_seconds()))' "$FAKE_E2B_DIR/sandboxes/${1:-sbx1}/info.json"
}

# Sets the fake sandbox's deadline to N seconds from now.
deadline_in() {
  python3 - "$FAKE_E2B_DIR/sandboxes/sbx1/info.json" "$1" <<'PY'
import json, sys
from datetime import datetime, timedelta, timezone
info = json.load(open(sys.argv[1]))
info["end_at"] = (datetime.now(timezone.utc) + timedelta(seconds=int(sys.argv[2]))).isoformat()
json.dump(info, open(sys.argv[1], "w"))
PY
}

# What e2b does at the end of a lifetime with on_timeout=pause: the sandbox is
# paused, its end now.
end_of_life() {
  python3 - "$FAKE_E2B_DIR/sandboxes/${1:-sbx1}/info.json" <<'PY'
import json, sys
from datetime import datetime, timezone
info = json.load(open(sys.argv[1]))
info["state"], info["end_at"] = "paused", datetime.now(timezone.utc).isoformat()
json.dump(info, open(sys.argv[1], "w"))
PY
}

# GitHub's GraphQL API, stood in for on loopback (tests/fixtures/github_api.py),
# with GITHUB_TOKEN the token it takes; github_pulls gives acme/demo (or the
# repository named) its pull requests, a JSON list.
github_api() {
  export FAKE_GITHUB_TOKEN="$GITHUB_KEY_VALUE" GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  echo '{"acme/demo": []}' >"$TEST_DIR/github.json"
  python3 "$FIXTURES/github_api.py" "$TEST_DIR/github.json" "$TEST_DIR/github.log" "$TEST_DIR/github.port" &
  echo $! >"$TEST_DIR/github.pid"
  eventually "GitHub's stand-in" test -s "$TEST_DIR/github.port"
  export CR_E2B_GITHUB_GRAPHQL="http://127.0.0.1:$(cat "$TEST_DIR/github.port")/graphql"
}

# The Anthropic API's list of models, stood in for on loopback
# (tests/fixtures/model_api.py): it takes the tests' model key, and
# ANTHROPIC_BASE_URL points at it.
model_api() {
  export FAKE_MODEL_KEY="$MODEL_KEY_VALUE"
  python3 "$FIXTURES/model_api.py" "$TEST_DIR/model.log" "$TEST_DIR/model.port" &
  echo $! >"$TEST_DIR/model.pid"
  eventually "the model API's stand-in" test -s "$TEST_DIR/model.port"
  export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$TEST_DIR/model.port")"
  MODEL_ORIGIN=$ANTHROPIC_BASE_URL
}

github_pulls() { printf '{"%s": %s}\n' "${2:-acme/demo}" "$1" >"$TEST_DIR/github.json"; }

# A pull request of acme/demo as GitHub's GraphQL gives it, with its head's
# checks and when it was last updated (an hour ago unless given):
# pull NUMBER BRANCH SHA [STATE [BASE [CROSS [CHECKS [UPDATED_AT]]]]]
# CHECKS is the head's statusCheckRollup state alone (SUCCESS, FAILURE,
# PENDING; none without), or STATE:NAME,NAME... for check runs of those names
# in that state, begun when the pull request was updated. PULL_EXTRA, a JSON
# object, is merged into it (reviewDecision, mergedAt, baseRef, files, ...).
pull() {
  python3 - "$@" <<'PY'
import json, os, sys
from datetime import datetime, timedelta, timezone
args = sys.argv[1:] + [""] * 8
number, branch, sha, state, base, cross, checks, updated = args[:8]
updated = updated or (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
rollup = None
if checks:
    rollup_state, _, names = checks.partition(":")
    rollup = {"state": rollup_state}
    if names:
        status, conclusion = {"PENDING": ("IN_PROGRESS", None)}.get(rollup_state, ("COMPLETED", rollup_state))
        rollup["contexts"] = {"nodes": [{"__typename": "CheckRun", "name": name, "status": status,
                                         "conclusion": conclusion, "startedAt": updated} for name in names.split(",")]}
document = {"number": int(number), "headRefName": branch, "headRefOid": sha, "state": state or "OPEN",
            "baseRefName": base or "main", "isCrossRepository": cross == "true", "updatedAt": updated,
            "commits": {"nodes": [{"commit": {"oid": sha, "message": "work", "statusCheckRollup": rollup}}]}}
document.update(json.loads(os.environ.get("PULL_EXTRA") or "{}"))
print(json.dumps(document))
PY
}

# The requests GitHub's stand-in got, an operation name a line.
github_requests() {
  [ ! -f "$TEST_DIR/github.log" ] ||
    python3 -c 'import json,sys; [print(json.loads(l)["op"]) for l in open(sys.argv[1])]' "$TEST_DIR/github.log"
}

# https://github.com/acme/demo.git is the test's bare repository (make_repo),
# for every git of this machine's user: what ls-remote and the sandbox's clone reach.
github_repo() {
  make_repo
  git config --global url."$REPO".insteadOf https://github.com/acme/demo.git
}

# The clone of sbx1's worker, made by start_worker.
workdir() { echo "$(sandbox_home)/repo"; }

# A commit on the worker's epic branch, in its clone, not pushed.
commit_in_worker() { # content [subject]
  git -C "$(workdir)" checkout -q -B claude/wc-3-count
  echo "$1" >"$(workdir)/count.txt"
  git -C "$(workdir)" add count.txt
  git -C "$(workdir)" commit -qm "${2:-count words}"
}

# A worker started for real (start_worker), its opening and brief run.
idle_worker() {
  start_worker
  wait_idle
}

# start up to the sandbox's setup, which the fake fails at once: what start
# asked of e2b and what it wrote is all recorded by then.
start_until_setup() {
  export FAKE_E2B_FAIL=command:setup
  run --separate-stderr cr-e2b start --repo "${REPO:-https://github.com/you/app.git}" \
    --profile backend --brief brief.md "$@"
  assert_failure 1
}

# A field of the recorded Sandbox.create call: create_field NAME.
create_field() { call_field Sandbox.create "$1"; }

# A worker of the fake with profile P whose turn 1 ended as given, with the
# verdict gate's record if VERDICT is given (see verdict):
#   fleet_worker PROFILE EXIT IS_ERROR LAST_LINE [REASON [DENIED_COMMAND [VERDICT]]]
# The sandbox id is left in $made; FLEET_SANDBOX=ID makes an existing sandbox
# that worker; FLEET_OWNER, if set, is a new one's owner.
fleet_worker() {
  local home reason=null denials="" verdict="" first=brief
  made=${FLEET_SANDBOX:-}
  [ -n "$made" ] || made=$(python3 -c 'import sys, e2b; print(e2b.Sandbox.create(timeout=3600, metadata={"cr-e2b": "1",
    "profile": sys.argv[1], "repo": sys.argv[2], "session": "s", **({"owner": sys.argv[3]} if sys.argv[3] else {})}).sandbox_id)' \
    "$1" "${FLEET_REPO:-https://h/app.git}" "${FLEET_OWNER:-}")
  # a verdict line's turn is of an EPIC brief of that epic
  [[ $4 =~ ^EPIC\ ([^ ]+)\  ]] && first="EPIC ${BASH_REMATCH[1]}: branch claude/${BASH_REMATCH[1]}, scope ., grants -"
  install_runner "$made"
  home=$(sandbox_home "$made")
  [ -n "${5:-}" ] && reason="\"$5\""
  [ -n "${6:-}" ] && denials="{\"tool_name\":\"Bash\",\"tool_use_id\":\"t1\",\"tool_input\":{\"command\":\"$6\"}}"
  [ -n "${7:-}" ] && verdict="{\"turn\":1,\"event\":\"verdict\",\"at\":\"2026-11-29T10:00:08Z\",$7}"
  echo brief >"$home/.cr/queue/000001.md"
  : >"$home/.cr/queue/000001.ended"
  cat >"$home/.cr/turns.jsonl" <<EOF
{"turn":1,"event":"queued","at":"2026-11-29T10:00:00Z","prompt":"queue/000001.md","first_line":"$first"}
{"turn":1,"event":"started","at":"2026-11-29T10:00:01Z","try":1,"flag":"--session-id","log_at":0}
{"turn":1,"event":"result","result":{"type":"result","is_error":$3,"result":"done\n$4","total_cost_usd":0.5,"permission_denials":[$denials]}}
{"turn":1,"event":"spent","try":1,"by":"result","usd":0.5}
$verdict
{"turn":1,"event":"ended","at":"2026-11-29T10:00:09Z","exit":$2,"is_error":$3,"denials":0,"reason":$reason,"log_end":0}
EOF
  sleep 0.01  # started_at orders the rows
}

# The fleet's repository, which every later fleet_worker is started on: a bare
# one (make_repo) whose claude/wc-1 is at READY_SHA; ready_worker claims it.
fleet_repo() {
  make_repo
  git -C "$TEST_DIR/src" checkout -q -b claude/wc-1
  git -C "$TEST_DIR/src" commit -q --allow-empty -m wc-1
  git -C "$TEST_DIR/src" push -q "$TEST_DIR/origin.git" claude/wc-1
  READY_SHA=$(git -C "$TEST_DIR/src" rev-parse HEAD)
  FLEET_REPO=$REPO
}

ready_worker() {
  fleet_worker ready 0 false "EPIC wc-1 READY $READY_SHA https://github.com/you/app/pull/7" "" "" "$(verdict ready true)"
}

# The gate's verdict record: verdict VERDICT OK [REASON...]
verdict() {
  local reasons="" reason
  for reason in "${@:3}"; do reasons+="${reasons:+,}\"$reason\""; done
  printf '"verdict":"%s","ok":%s,"by":"hook","blocks":%s,"sha":"4b825dc642cb","head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","branch":"claude/wc-1","pull_request":"https://github.com/you/app/pull/7","pr_checked":true,"checks":[{"command":"npm test","exit_code":0,"ms":3100}],"reasons":[%s]' \
    "$1" "$2" $(($# - 2)) "$reasons"
}

# Turn 2 of the last fleet_worker, running for 12 minutes under a live runner.
running_turn() {
  local home
  home=$(sandbox_home "$made")
  echo next >"$home/.cr/queue/000002.md"
  printf '{"turn":2,"event":"queued","at":"2026-11-29T10:00:10Z","prompt":"queue/000002.md","first_line":"next"}\n' >>"$home/.cr/turns.jsonl"
  printf '{"turn":2,"event":"started","at":"%s","try":1,"flag":"--resume","log_at":0}\n' \
    "$(date -u -d '-750 seconds' +%Y-%m-%dT%H:%M:%SZ)" >>"$home/.cr/turns.jsonl"
  : >"$home/.cr/log"
  touch -d '-150 seconds' "$home/.cr/log"
  bash -c 'exec -a drain sleep 60' &
  echo $! >"$home/.cr/runner.pid"
}

# Whether sbx1's setup is at its install step.
in_install() { [ "$(cat "$(sandbox_home)/.cr/step" 2>/dev/null)" = install ]; }

# sbx1 holding the recorded stream's log and turn records.
with_worker_log() {
  make_sandbox
  cp "$FIXTURES/streams/worker.log" "$(sandbox_home)/.cr/log"
  cp "$FIXTURES/streams/turns.jsonl" "$(sandbox_home)/.cr/turns.jsonl"
}

# The pids a STUB_HANG call left, and whether any of them still runs (a
# zombie does not: here no init reaps what is orphaned).
stub_children() { cat "$CLAUDE_STUB_DIR"/calls/*/children; }
none_alive() {
  local pid state
  for pid in "$@"; do
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
    if [ -n "$state" ] && [ "$state" != Z ]; then echo "still running: $pid ($state)" >&2; return 1; fi
  done
}

# sbx1 after N ended turns of about 2.8 KB of records each, a denial in every
# tenth, and the running cost growing by a cent a turn.
with_turns() {
  make_sandbox
  python3 - "$1" "$(sandbox_home)/.cr" <<'PY'
import json, os, sys
count, cr = int(sys.argv[1]), sys.argv[2]
with open(os.path.join(cr, "turns.jsonl"), "w") as records:
    for n in range(1, count + 1):
        denials = [{"tool_name": "Bash", "tool_use_id": f"toolu_{n}",
                    "tool_input": {"command": "rm -rf /"}}] if n % 10 == 0 else []
        result = {"type": "result", "is_error": False, "duration_ms": 1000, "result": "x" * 2400 + f"\nturn {n} done",
                  "total_cost_usd": n / 100, "permission_denials": denials}
        for event in ({"event": "queued", "at": "2026-11-29T10:00:00Z", "prompt": f"queue/{n:06d}.md", "first_line": f"brief {n}"},
                      {"event": "started", "at": "2026-11-29T10:00:01Z", "flag": "--resume", "log_at": 0},
                      {"event": "result", "result": result},
                      {"event": "spent", "try": 1, "by": "result", "usd": n / 100},
                      {"event": "ended", "at": "2026-11-29T10:00:02Z", "exit": 0, "is_error": False,
                       "denials": len(denials), "log_end": 0}):
            records.write(json.dumps({"turn": n, **event}, separators=(",", ":")) + "\n")
        open(os.path.join(cr, "queue", f"{n:06d}.md"), "w").close()
        open(os.path.join(cr, "queue", f"{n:06d}.ended"), "w").close()
PY
}

# Bytes that came down the wire in the recorded calls.
bytes_down() {
  python3 -c 'import json,sys; print(sum(json.loads(l)["bytes_received"] for l in open(sys.argv[1])))' \
    "$FAKE_E2B_DIR/calls.jsonl"
}
