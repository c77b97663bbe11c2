#!/usr/bin/env bats
# Workers that outlive the clock and survive the user: lifecycle, extend,
# pause, resume, fork, briefs during setup, and signals during start.

load test_helper

@test "at the end of its lifetime e2b pauses the sandbox by default, or kills it with --on-timeout kill or control-room.json" {
  start_worker
  run call_field Sandbox.create lifecycle
  assert_output '{"on_timeout": "pause"}'
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --on-timeout kill
  assert_success
  run call_field Sandbox.create lifecycle
  assert_output '{"on_timeout": "kill"}'
  rm "$FAKE_E2B_DIR/calls.jsonl"
  echo '{"on_timeout": "kill"}' >control-room.json
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo
  assert_success
  run call_field Sandbox.create lifecycle
  assert_output '{"on_timeout": "kill"}'
}

@test "extend sets the time left, shorter or longer, after one look at its state, and says it before and after" {
  make_sandbox
  run cr-e2b extend --sandbox sbx1 --timeout 7200
  assert_success
  [[ "$output" =~ ^"sandbox sbx1 running, 2h00m left (until "[0-9T:-]+"+00:00); was running, 59m"[0-9]{2}"s left"$ ]]
  run calls
  assert_output "Sandbox.get_info
Sandbox.set_timeout"
  run seconds_left
  [ "$output" -ge 7195 ]
  run cr-e2b extend --sandbox sbx1 --timeout 600 --force --json
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(sorted(d), d["seconds_left"], d["state"], sorted(d["was"]), d["was"]["state"], d["was"]["seconds_left"] > 7000)' "$output"
  assert_output "['end_at', 'sandbox_id', 'seconds_left', 'state', 'was'] 600 running ['end_at', 'seconds_left', 'state'] running True"
  run seconds_left
  [ "$output" -ge 595 ]
  [ "$output" -le 600 ]
}

@test "extend of a paused sandbox says it stays paused, and resume then gives it that time" {
  make_sandbox
  deadline_in 3540
  pause_sandbox
  run cr-e2b extend --sandbox sbx1 --timeout 7200
  assert_success
  [[ "$output" =~ ^"sandbox sbx1 paused, 2h00m left (until "[0-9T:-]+"+00:00); was paused, 5"[89]"m"[0-9]{2}"s left"$ ]]
  [ "$(sandbox_state)" = paused ]
  run cr-e2b resume --sandbox sbx1
  assert_success
  [[ "$output" =~ ^"sandbox sbx1 running, 1h59m left (until "[0-9T:-]+"+00:00); was paused, 1h59m left"$ ]]
  run seconds_left
  [ "$output" -ge 7180 ]
}

@test "resume --timeout of a running sandbox says the time it keeps: connect only lengthens a life" {
  make_sandbox
  deadline_in 3540
  run cr-e2b resume --sandbox sbx1 --timeout 600
  assert_success
  [[ "$output" =~ ^"sandbox sbx1 running, 5"[89]"m"[0-9]{2}"s left (until "[0-9T:-]+"+00:00); was running, 5"[89]"m"[0-9]{2}"s left"$ ]]
  run seconds_left
  [ "$output" -ge 3500 ]
  run cr-e2b resume --sandbox sbx1 --timeout 7200 --json
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["state"], d["seconds_left"], d["was"]["state"], d["was"]["seconds_left"] > 3500)' "$output"
  assert_output "running 7200 running True"
}

@test "extend, pause and resume refuse a sandbox cr-e2b did not make, and change nothing" {
  python3 -c 'import e2b; e2b.Sandbox.create(timeout=3600, metadata={"team": "other"})'
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
  for verb in "extend --timeout 60" pause "resume --timeout 60" resume; do
    # shellcheck disable=SC2086 # a verb and its options
    run --separate-stderr cr-e2b $verb sbx1
    assert_failure 1
    assert_one_error_line
    assert_output "cr-e2b: sandbox sbx1 was not made by cr-e2b (it has no cr-e2b metadata)"
  done
  run calls
  refute_output_contains Sandbox.set_timeout
  refute_output_contains Sandbox.pause
  refute_output_contains Sandbox.connect
  run seconds_left
  [ "$output" -ge 3590 ]
}

@test "a lifetime over the plan's cap is one line naming the cap" {
  make_sandbox
  export FAKE_E2B_MAX_TIMEOUT=3600
  run cr-e2b extend --sandbox sbx1 --timeout 7200
  assert_failure 1
  assert_output "cr-e2b: --timeout 7200 is over your plan's cap of 3600 s"
}

@test "extend of an unknown sandbox is exit 3" {
  run --separate-stderr cr-e2b extend --sandbox nosuch --timeout 60
  assert_failure 3
  assert_one_error_line
}

@test "pause pauses in one call, and status and list show the worker paused with its time left" {
  make_sandbox
  run cr-e2b pause --sandbox sbx1
  assert_success
  assert_output "sandbox sbx1 paused, files and processes kept; cr-e2b resume --sandbox sbx1 carries it on"
  run calls
  assert_output "Sandbox.get_info
Sandbox.pause"
  [ "$(sandbox_state)" = paused ]
  run cr-e2b status --sandbox sbx1
  [[ "${lines[0]}" =~ ^"sandbox   sbx1 (paused, "[0-9]+m[0-9]{2}s" left)"$ ]]
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b list
  [[ "$output" =~ ^"sbx1  backend  -  -  -  "[0-9]+m[0-9]{2}s" left  paused: by cr-e2b pause; not looked at from here yet"$ ]]
  run calls
  assert_output Sandbox.list
}

@test "resume --timeout resumes a paused sandbox with that much life, after one look at its state" {
  make_sandbox
  pause_sandbox
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b resume --sandbox sbx1 --timeout 1200 --json
  assert_success
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["state"], d["seconds_left"], d["was"]["state"])' "$output"
  assert_output "running 1200 paused"
  run calls
  assert_output "Sandbox.get_info
Sandbox.connect"
  [ "$(sandbox_state)" = running ]
  run seconds_left
  [ "$output" -ge 1195 ]
}

@test "resume without --timeout keeps the time until the sandbox's deadline" {
  make_sandbox
  deadline_in 1800
  pause_sandbox
  run cr-e2b resume --sandbox sbx1
  assert_success
  run seconds_left
  [ "$output" -ge 1790 ]
}

@test "log, diff, wait, budget and cancel of a paused sandbox keep its time left and pause it again, saying so" {
  make_sandbox
  deadline_in 1800
  # asked beside the connect that resumes it, the state would come back running
  export FAKE_E2B_SLOW=Sandbox.get_info:0.5
  for verb in log diff wait budget cancel; do
    pause_sandbox
    run --separate-stderr cr-e2b "$verb" --sandbox sbx1
    [[ "$stderr" == "cr-e2b: warning: sandbox sbx1 was paused: resumed for this look, its time left kept, and paused again"* ]]
    [ "$(sandbox_state)" = paused ] || { echo "$verb left it $(sandbox_state)" >&2; return 1; }
    run seconds_left
    [ "$output" -ge 1790 ] || { echo "$verb left $output s" >&2; return 1; }
  done
  run call_field Sandbox.connect timeout
  [ "${#lines[@]}" -eq 5 ]
  [ "$(grep -cvE '^1[78][0-9]{2}$' <<<"$output")" -eq 0 ]  # each resume asked for the time it had
}

@test "a brief to a worker paused at its lifetime's end says it gets its lifetime anew, not a time it had left" {
  start_worker brief.md --timeout 1200
  wait_idle
  end_of_life sbx1
  echo 'a question' >q.md
  run --separate-stderr cr-e2b brief sbx1 --brief q.md
  assert_success
  [ "${stderr_lines[1]}" = "cr-e2b: warning: sandbox sbx1 was paused: resumed to take the brief, with its lifetime of 20m00s anew (its last one had ended)" ]
}

@test "brief and resume of a paused sandbox carry it on with its time left, even when e2b is slow to tell its state" {
  make_sandbox
  deadline_in 1800
  export FAKE_E2B_SLOW=Sandbox.get_info:0.5
  pause_sandbox
  echo 'a question' >q.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md
  assert_success
  [[ "${stderr_lines[1]}" == "cr-e2b: warning: sandbox sbx1 was paused: resumed to take the brief, with the 29m"*"s it had left" ]]
  [ "$(sandbox_state)" = running ]
  run seconds_left
  [ "$output" -ge 1790 ]
  pause_sandbox
  run cr-e2b resume --sandbox sbx1
  assert_success
  [ "$(sandbox_state)" = running ]
  run seconds_left
  [ "$output" -ge 1790 ]
}

@test "a paused sandbox whose time ran out is resumed with e2b's least, 300 s" {
  make_sandbox
  deadline_in 0
  pause_sandbox
  run cr-e2b log --sandbox sbx1
  run call_field Sandbox.connect timeout
  assert_output 300
}

@test "reconnecting to a running sandbox asks for no more life than it has" {
  make_sandbox
  run cr-e2b log --sandbox sbx1
  run call_field Sandbox.connect timeout
  assert_output null
}

@test "brief --timeout leaves the sandbox at least that much life as it delivers" {
  start_worker
  wait_idle
  printf 'a question\n' >q.md
  run cr-e2b brief --sandbox sbx1 --brief q.md --timeout 7000
  assert_success
  run call_field Sandbox.connect timeout
  assert_output 7000
  run seconds_left
  [ "$output" -ge 6990 ]
}

@test "a brief sent while setup is installing waits: turn 1 is the opening, then the first brief, then it" {
  make_repo
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nsecond\n' >late.md
  cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo \
    --install "sleep 2; mkdir -p ~/.local/bin && ln -s '$FIXTURES/claude' ~/.local/bin/claude" >"$TEST_DIR/start.out" 2>&1 &
  local start_pid=$!
  eventually "the install step" in_install
  run cr-e2b status --sandbox sbx1
  assert_output_contains "worker    setting up; turns wait for its launch step"
  run cr-e2b brief --sandbox sbx1 --brief late.md
  assert_success
  assert_output "queued as turn 3, 0 ahead of it"
  wait "$start_pid" || { cat "$TEST_DIR/start.out" >&2; return 1; }
  wait_idle
  run bash -c 'for c in "$CLAUDE_STUB_DIR"/calls/*; do sed -n 1p "$c/stdin" | cut -c1-40; cat "$c/exit"; done'
  assert_output <<'OUT'
# You are the backend worker of a contro
0
EPIC wc-3: branch claude/wc-3-count, sco
0
EPIC wc-3: branch claude/wc-3-x, scope a
0
OUT
}

@test "a kept sandbox whose setup failed says so: status, wait exits 1, brief is refused" {
  make_repo; with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo \
    --integration nosuch --keep-on-failure
  assert_failure 1
  run cr-e2b status --sandbox sbx1
  assert_output_contains "worker    setup failed at step clone: nothing will run"
  run cr-e2b wait --sandbox sbx1 --interval 0.1
  assert_failure 1
  assert_output "cr-e2b: sandbox sbx1: setup failed at step clone: nothing will run"
  printf 'a question\n' >q.md
  run cr-e2b brief --sandbox sbx1 --brief q.md
  assert_failure 1
  assert_output_contains "setup failed at step clone; no turn can run"
}

fork_brief() { printf 'EPIC wc-7: branch claude/wc-7-try, scope src/, grants -\nTry it your way.\n' >try.md; }

@test "fork makes copies that carry on the session, each with the brief and its copy number" {
  start_worker
  wait_idle
  fork_brief
  session=$(call_field Sandbox.create metadata | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])')
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b fork --sandbox sbx1 --count 2 --brief try.md
  assert_success
  assert_output "copy 1  sbx2  brief queued as turn 3
copy 2  sbx3  brief queued as turn 3"
  run calls
  assert_output <<'OUT'
Sandbox.get_info
Sandbox.connect
commands.run
Sandbox.fork
commands.run
commands.run
OUT
  wait_idle sbx2
  wait_idle sbx3
  last=$(ls -d "$CLAUDE_STUB_DIR"/calls/* | tail -n 1)
  run bash -c 'for c in $(ls -d "$CLAUDE_STUB_DIR"/calls/* | tail -n 2); do sed -n 2,3p "$c/argv" | tr "\n" " "; tail -n 1 "$c/stdin"; done'
  assert_output "--resume $session This sandbox is copy 1 of sbx1, whose other copies have the same history. Push this brief's work to \`claude/wc-7-try-copy1\` (the brief's branch followed by \`-copy1\`), open your own pull request from it, and use that branch in your READY line.
--resume $session This sandbox is copy 2 of sbx1, whose other copies have the same history. Push this brief's work to \`claude/wc-7-try-copy2\` (the brief's branch followed by \`-copy2\`), open your own pull request from it, and use that branch in your READY line."
  grep -q "^You are copy 2 of 2, forked from sandbox sbx1; the other copies work on this same brief.$" "$last/stdin"
  head -c "$(wc -c <try.md)" "$last/stdin" | cmp - try.md
  run cr-e2b status --sandbox sbx3
  assert_output_contains "fork      copy 2 of sbx1"
}

@test "a copy forked without a brief is marked, and each later EPIC brief it is given names the copy's own branch" {
  start_worker
  wait_idle
  run cr-e2b fork --sandbox sbx1 --count 2
  assert_success
  assert_output "copy 1  sbx2  idle
copy 2  sbx3  idle"
  run cr-e2b status --sandbox sbx3
  assert_output_contains "fork      copy 2 of sbx1"
  run cr-e2b brief --sandbox sbx3 --brief brief.md
  assert_success
  wait_idle sbx3
  last=$(ls -d "$CLAUDE_STUB_DIR"/calls/* | tail -n 1)
  grep -q 'Push this brief.s work to `claude/wc-3-count-copy2`' "$last/stdin"
  run cr-e2b status --sandbox sbx2
  assert_output_contains "fork      copy 1 of sbx1"
}

@test "a fork of an MCP worker gives each copy its own gateway's address" {
  start_worker brief.md --mcp 'exa={}'
  wait_idle
  run cr-e2b fork --sandbox sbx1 --count 2
  assert_success
  run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mcpServers"]["e2b-mcp-gateway"]["url"])' \
    "$(sandbox_home sbx3)/.cr/mcp-gateway.json"
  assert_output https://50005-sbx3.e2b.app/mcp
  run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mcpServers"]["e2b-mcp-gateway"]["url"])' \
    "$(sandbox_home sbx2)/.cr/mcp-gateway.json"
  assert_output https://50005-sbx2.e2b.app/mcp
}

@test "a copy e2b did not make is named as that copy, and fork exits with the worst of the copies' codes" {
  start_worker
  wait_idle
  FAKE_E2B_FAIL=fork-copy:2 run cr-e2b fork --sandbox sbx1 --count 2
  assert_failure 7
  assert_output_contains "copy 1  sbx2  idle"
  assert_output_contains "copy 2  -  failed: e2b did not make it: e2b is rate limiting or busy; try again later"
  refute_output_contains "no such sandbox"
  FAKE_E2B_FAIL=fork-copy:1,fork-copy:2 run cr-e2b fork --sandbox sbx1 --count 2 --json
  assert_failure 7
  run python3 -c 'import json,sys; print([(c["copy"], c["sandbox_id"]) for c in json.loads(sys.argv[1])["copies"]])' "$output"
  assert_output "[(1, None), (2, None)]"
}

@test "a fork of a paused worker leaves it paused, as it was found" {
  start_worker
  wait_idle
  pause_sandbox sbx1
  run cr-e2b fork --sandbox sbx1
  assert_success
  assert_output_contains "cr-e2b: warning: sandbox sbx1 was paused: resumed for this look, its time left kept, and paused again"
  run sandbox_state sbx1
  assert_output paused
  run sandbox_state sbx2
  assert_output running
}

@test "fork refuses while a turn runs, with exit 9 as kill's refusal, and --force forks anyway without looking first" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_SLEEP=5\n' >slow.md
  start_worker slow.md
  turn_ended 1
  run cr-e2b fork --sandbox sbx1
  assert_failure 9
  assert_output_contains "cr-e2b: sandbox sbx1 is running turn 2 for "
  assert_output_contains "; its copies would go on with that work, pushes included: wait for it, or fork --force"
  run calls
  refute_output_contains Sandbox.fork
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b fork --sandbox sbx1 --force --json
  assert_success
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["parent"], [(c["copy"], c["sandbox_id"], c["parent"], c["turn"], c["error"]) for c in d["copies"]])' "$output"
  assert_output "sbx1 [(1, 'sbx2', 'sbx1', None, None)]"
  run calls
  assert_output "Sandbox.get_info
Sandbox.fork
commands.run"
  run call_field Sandbox.fork timeout
  assert_output 3600
}

@test "fork --count over e2b's 20 or an unreadable brief exits 2 before any call" {
  run cr-e2b fork --sandbox sbx1 --count 21
  assert_failure 2
  assert_output "cr-e2b: --count is at most 20 (e2b's limit): 21"
  run cr-e2b fork --sandbox sbx1 --brief missing.md
  assert_failure 2
  no_sdk_calls
}

@test "fork --brief holding a key's value is refused, exit 2, before any call" {
  printf 'and use %s\n' "$MODEL_KEY_VALUE" >leak.md
  run --separate-stderr cr-e2b fork --sandbox sbx1 --brief leak.md
  assert_failure 2
  assert_one_error_line
  assert_output_contains "cr-e2b: the brief holds"
  no_sdk_calls
}

# start, in the background, stopped by a signal once the fake shows it is at
# a given point; records the exit status, the time it took and its stderr.
start_then_signal() { # signal marker-command start-options...
  local signal=$1 marker=$2 pid t0
  shift 2
  make_repo
  cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --check true "$@" \
    >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
  eventually "$marker" "$marker"
  t0=$(date +%s%N)
  kill "-$signal" "$pid"
  status=0
  wait "$pid" || status=$?
  took_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  output=$(cat "$TEST_DIR/err")
}

in_create() { [ -e "$FAKE_E2B_DIR/slow-Sandbox.create" ]; }
in_install() { [ "$(cat "$(sandbox_home)/.cr/step" 2>/dev/null)" = install ]; }

@test "SIGTERM while e2b is still answering create kills the sandbox it made, by its session, and exits 143" {
  export FAKE_E2B_SLOW=Sandbox.create:30
  start_then_signal TERM in_create
  assert_failure 143
  assert_output "cr-e2b: interrupted (SIGTERM): killed sandbox sbx1, which start had made"
  [ "$took_ms" -lt 5000 ]
  [ "$(sandbox_state)" = killed ]
}

@test "Ctrl-C during setup kills the sandbox at once and exits 130" {
  start_then_signal INT in_install --install "sleep 30"
  assert_failure 130
  assert_output "cr-e2b: interrupted (SIGINT): killed sandbox sbx1, which start had made"
  [ "$took_ms" -lt 5000 ]
  [ "$(sandbox_state)" = killed ]
}

@test "SIGHUP during setup with --keep-on-failure keeps the sandbox, names it and exits 129" {
  start_then_signal HUP in_install --install "sleep 30" --keep-on-failure
  assert_failure 129
  assert_output "cr-e2b: interrupted (SIGHUP): left sandbox sbx1 running for you to inspect (--keep-on-failure); stop it with: cr-e2b kill --sandbox sbx1"
  [ "$(sandbox_state)" = running ]
}

@test "a second Ctrl-C while start kills its sandbox exits at once, still naming it" {
  export FAKE_E2B_SLOW=Sandbox.kill:30
  make_repo
  cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --install "sleep 30" \
    --check true >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
  eventually "the install step" in_install
  kill -INT "$pid"
  eventually "the slow kill" test -e "$FAKE_E2B_DIR/slow-Sandbox.kill"
  t0=$(date +%s%N)
  kill -INT "$pid"
  status=0
  wait "$pid" || status=$?
  [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 2000 ]
  assert_failure 130
  output=$(cat "$TEST_DIR/err")
  assert_output "cr-e2b: interrupted (SIGINT) while killing sandbox sbx1; it may still be running: cr-e2b kill --sandbox sbx1"
}

@test "a worker e2b paused at its lifetime's end keeps its row: the last look's turn, queue and spend, and why" {
  hold_stub
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nSTUB_BLOCK\n' >held.md
  start_worker held.md
  turn_started 2
  run cr-e2b list
  end_of_life
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b list
  assert_output_contains "paused: at its lifetime's end with work left: turn 2 running"
  run cr-e2b status --sandbox sbx1
  assert_output_contains "worker    paused at its lifetime's end with work left: turn 2 running"
  run calls
  assert_output "Sandbox.list
Sandbox.get_info"
  release_stub
}

@test "a paused settled worker is not resumed by wait: its outcome is the last look's" {
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nSTUB_LAST=EPIC wc-3 BLOCKED no key\n' >blocked.md
  start_worker blocked.md
  wait_idle
  run cr-e2b list
  assert_output_contains "BLOCKED: no key"
  run cr-e2b pause --sandbox sbx1
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run --separate-stderr cr-e2b wait --all
  assert_failure 5
  run calls
  refute_output_contains "Sandbox.connect"
  [ "$(sandbox_state)" = paused ]
  run cr-e2b list
  assert_output_contains "paused: by cr-e2b pause: BLOCKED no key"
}

@test "a paused worker's time left is what it had when it was paused, and a resume gives it back" {
  start_worker
  wait_idle
  deadline_in 1800
  run cr-e2b pause --sandbox sbx1
  deadline_in 600  # e2b's clock of a paused sandbox runs on
  run cr-e2b status --sandbox sbx1
  [[ "${lines[0]}" =~ ^"sandbox   sbx1 (paused, 29m"[0-9]{2}"s left)"$ ]]
  run cr-e2b resume --sandbox sbx1
  assert_success
  run seconds_left
  [ "$output" -ge 1780 ]
}
