#!/usr/bin/env bats
# `cr-e2b brief`, `cr-e2b wait` and `cr-e2b kill`, against a worker started for real.

load test_helper

brief() { printf '%s\n' "$@" >next.md; run cr-e2b brief --sandbox sbx1 --brief next.md; }

@test "brief queues a follow-up and says its turn and how many are ahead" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_SLEEP=2\n' >slow.md
  start_worker slow.md
  turn_ended 1
  brief "EPIC wc-3: branch claude/wc-3-x, scope a, grants b" "and the docs too"
  assert_success
  assert_output "queued as turn 3, 1 ahead of it"
  wait_idle
  run bash -c 'tail -n 1 "$(ls -d "$CLAUDE_STUB_DIR"/calls/* | tail -n 1)/stdin"'
  assert_output "and the docs too"
}

@test "brief costs three calls: its state, connect, and one command that carries the brief" {
  start_worker
  rm "$FAKE_E2B_DIR/calls.jsonl"
  brief "EPIC wc-3: branch claude/wc-3-x, scope a, grants b"
  run calls
  assert_output "Sandbox.get_info
Sandbox.connect
commands.run"
}

@test "brief --timeout costs two calls: a connect that asks for the time, and one command" {
  start_worker
  rm "$FAKE_E2B_DIR/calls.jsonl"
  printf 'a question\n' >q.md
  run cr-e2b brief --sandbox sbx1 --brief q.md --timeout 1800
  assert_success
  run calls
  assert_output "Sandbox.connect
commands.run"
  run python3 -c 'import json,sys; print([json.loads(l).get("timeout") for l in open(sys.argv[1])][0])' \
    "$FAKE_E2B_DIR/calls.jsonl"
  assert_output "1800"
}

# A UTF-8 brief of exactly N bytes, with every ASCII character but NUL, CRLF,
# shell syntax and characters of two, three and four bytes; an EPIC line first.
brief_of() {
  python3 - "$1" >"$2" <<'PY'
import sys
size = int(sys.argv[1])
text = "EPIC big-1: branch claude/big-1-x, scope a, grants b\n$(id) `x` \"q\" \r\n"
unit = "".join(map(chr, range(1, 128))) + "ünïcødé ✓ 漢字 😀\n"
data = (text + unit * (size // len(unit.encode()) + 1)).encode()[:size]
sys.stdout.buffer.write(data.decode("utf-8", "ignore").encode().ljust(size, b"."))
PY
}

@test "a brief at the size an environment variable holds travels in the command, byte for byte" {
  start_worker
  wait_idle
  brief_of 96000 env.md
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b brief --sandbox sbx1 --brief env.md
  assert_success
  run calls
  refute_output_contains files.write_files
  wait_idle
  cmp env.md "$CLAUDE_STUB_DIR/calls/$(ls "$CLAUDE_STUB_DIR"/calls | sed -n 3p)/stdin"
}

@test "the brief that travelled in a command's environment is in no environment of the runner, Claude Code or its tools" {
  start_worker
  wait_idle
  run cr-e2b brief --sandbox sbx1 --brief brief.md
  assert_success
  wait_idle
  run cat "$CLAUDE_STUB_DIR"/calls/*/env-names
  assert_output_contains CR_TURN_BASE
  refute_output_contains CR_BRIEF
  refute_output_contains CR_FILES
}

@test "a brief one byte bigger is written first, byte for byte, and queued once" {
  start_worker
  wait_idle
  brief_of 96001 file.md
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b brief --sandbox sbx1 --brief file.md
  assert_success
  run calls
  assert_output "Sandbox.get_info
Sandbox.connect
files.write_files
commands.run"
  wait_idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 3 ]
  cmp file.md "$CLAUDE_STUB_DIR/calls/$(ls "$CLAUDE_STUB_DIR"/calls | sed -n 3p)/stdin"
}

@test "a brief that is not an EPIC line is delivered, with a warning that it is a question" {
  start_worker
  wait_idle
  brief "how far along are you?"
  assert_success
  assert_output "cr-e2b: warning: the brief's first line is not 'EPIC <id>: branch ...': the worker will take it as a question and change nothing
queued as turn 3, 0 ahead of it"
  wait_idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 3 ]
}

@test "brief --json and a brief read from stdin" {
  start_worker
  run bash -c 'printf "EPIC wc-9: branch claude/wc-9-y, scope a, grants b\n" | cr-e2b brief --sandbox sbx1 --brief - --json'
  assert_success
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(sorted(d), d["turn"])' "$output"
  assert_output "['ahead', 'already_queued', 'dropped_turn', 'held', 'sandbox_id', 'turn'] 3"
}

@test "a brief restarts a dead worker, which runs every queued turn" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_SLEEP=2\n' >slow.md
  start_worker slow.md
  turn_started 2
  kill -9 "$(cat "$(sandbox_home)/.cr/runner.pid")"
  brief "still there?"
  assert_success
  wait_idle
  run cr-e2b status --sandbox sbx1
  assert_output_contains "worker    idle"
  assert_output_contains "last turn 3 ok"
}

@test "brief to an unknown sandbox is one line, exit 3, and writes nothing" {
  brief "hello"
  assert_failure 3
  assert_output_contains "cr-e2b: no such sandbox: sbx1 (unknown, expired or killed)"
  run calls
  assert_output "Sandbox.get_info"
}

@test "brief and status of a worker that an older cr-e2b started say so in one line" {
  make_sandbox
  older_sandbox
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief brief.md
  assert_failure 1
  assert_one_error_line
  assert_output "cr-e2b: sandbox sbx1 was started by an older cr-e2b: $OLDER"
  run --separate-stderr cr-e2b status --sandbox sbx1
  assert_failure 1
  assert_one_error_line
  assert_output "cr-e2b: sandbox sbx1 was started by an older cr-e2b: $OLDER"
}

@test "brief with an unreadable or empty file exits 2 before any call" {
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief missing.md
  assert_failure 2
  assert_one_error_line
  : >empty.md
  run cr-e2b brief --sandbox sbx1 --brief empty.md
  assert_failure 2
  no_sdk_calls
}

@test "a brief holding a key's value is refused, exit 2, before any call, and queues nothing" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nuse %s\n' "$MODEL_KEY_VALUE" >leak.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief leak.md
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: the brief holds the value of a secret; write its name (\$NAME) instead: the sandbox's environment has the variable (--env NAME forwards one)"
  no_sdk_calls
}

wait_for() { run cr-e2b wait --sandbox sbx1 --interval 0.2 "$@"; }

@test "wait exits 0 when the last turn delivered a READY the gate verified" {
  delivering_brief delivers.md
  start_worker delivers.md
  wait_for
  assert_success
  assert_output ""
}

@test "wait exits 4 when the last turn failed" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_EXIT=2\n' >failing.md
  start_worker failing.md
  wait_for
  assert_failure 4
  assert_output "cr-e2b: turn 2 failed: Claude Code exit 2"
}

@test "wait exits 5 when the last turn ended BLOCKED" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_LAST=EPIC wc-3 BLOCKED need the staging key\n' >blocked.md
  start_worker blocked.md
  wait_for
  assert_failure 5
  assert_output "cr-e2b: turn 2 blocked: EPIC wc-3 BLOCKED need the staging key"
}

@test "wait exits 6 when its timeout passes while a turn runs" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_SLEEP=4\n' >slow.md
  start_worker slow.md
  wait_for --timeout 1
  assert_failure 6
  assert_output_contains "still busy after 1 s: running turn"
}

@test "wait --timeout bounds the verb's whole time, within a second, when e2b is slow to answer" {
  make_sandbox
  export FAKE_E2B_LATENCY_MS=1500
  began=$(date +%s%N)
  run --separate-stderr cr-e2b wait --sandbox sbx1 --timeout 2
  took_ms=$((($(date +%s%N) - began) / 1000000))
  assert_failure 6
  [ "$took_ms" -lt 3000 ] || { echo "took $took_ms ms" >&2; return 1; }
  [ "$stderr" = "cr-e2b: sandbox sbx1: still busy after 2 s: it had not answered yet" ]
}

@test "wait exits 3 when the sandbox is gone" {
  run --separate-stderr cr-e2b wait --sandbox sbx1 --interval 0.2
  assert_failure 3
  assert_one_error_line
}

@test "wait --json reports the outcome and the last turn" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_LAST=EPIC wc-3 BLOCKED stuck\n' >blocked.md
  start_worker blocked.md
  wait_for --json
  assert_failure 5
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(sorted(d), d["outcome"], d["exit_code"], d["last_turn"]["last_line"])' "$output"
  assert_output "['exit_code', 'last_turn', 'outcome', 'paused', 'sandbox_id'] blocked 5 EPIC wc-3 BLOCKED stuck"
  run cr-e2b wait --sandbox nosuch --json
  assert_failure 3
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["outcome"], d["last_turn"])' "$output"
  assert_output "gone None"
}

@test "wait on a dead worker says so instead of waiting forever" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_SLEEP=3\n' >slow.md
  start_worker slow.md
  turn_started 2
  kill -9 "$(cat "$(sandbox_home)/.cr/runner.pid")"
  wait_for
  assert_failure 1
  assert_output "cr-e2b: sandbox sbx1: dead: turns are queued but no runner is alive (a brief restarts it)"
}

@test "kill of an unknown sandbox is one line and exit 3" {
  run cr-e2b kill --sandbox nosuch
  assert_failure 3
  assert_output "cr-e2b: no such sandbox: nosuch (unknown, expired or killed)"
}

@test "wait reports a sandbox killed while it waits as gone, exit 3" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_SLEEP=3\n' >slow.md
  start_worker slow.md
  (turn_started 2 && cr-e2b kill --sandbox sbx1 --force) &
  wait_for
  assert_failure 3
  assert_output "cr-e2b: no such sandbox: sbx1 (unknown, expired or killed)"
}

@test "a brief whose branch is outside the worker's prefix is refused before it is queued, exit 2" {
  start_worker
  wait_idle
  rm "$FAKE_E2B_DIR/calls.jsonl"
  printf 'EPIC wc-4: branch feature/wc-4-x, scope a, grants b\nmore\n' >off.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief off.md
  assert_failure 2
  assert_one_error_line
  assert_output_contains "the brief's branch feature/wc-4-x is not under the branch prefix claude/ (sandbox sbx1's)"
  run calls
  assert_output "Sandbox.get_info"
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief off.md --timeout 600
  assert_failure 2
  [ ! -e "$(turn_file 3 md)" ]
}

@test "a brief whose EPIC line a byte-order mark hides reaches the worker without it, with a warning" {
  start_worker
  wait_idle
  printf '\xef\xbb\xbfEPIC wc-4: branch claude/wc-4-x, scope a, grants b\nmore\n' >bom.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief bom.md
  assert_success
  [[ "$stderr" == "cr-e2b: warning: the brief's EPIC line had a byte-order mark before it"* ]]
  run head -c 4 "$(turn_file 3 md)"
  assert_output "EPIC"
}

@test "brief keeps the epic it asks, and the turn it became, on the caller's side" {
  start_worker
  wait_idle
  printf 'EPIC wc-4: branch claude/wc-4-x, scope src/ lib/, grants -\nmore\n' >next.md
  run cr-e2b brief --sandbox sbx1 --brief next.md
  assert_success
  run python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["asked"][0]; print(a["epic"], a["branch"], a["scope"], a["grants"], a["turn"])' \
    "$HOME/.local/state/cr-e2b/workers/sbx1.json"
  assert_output "wc-4 claude/wc-4-x ['src/', 'lib/'] [] 3"
}
