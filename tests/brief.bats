#!/usr/bin/env bats
# `cr-e2b brief`: a follow-up queued in the worker's session, byte for byte,
# with --timeout and --id, and its refusals.

load test_helper

brief() { printf '%s\n' "$@" >next.md; run cr-e2b brief --sandbox sbx1 --brief next.md; }

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

@test "brief --json and a brief read from stdin" {
  start_worker
  run bash -c 'printf "EPIC wc-9: branch claude/wc-9-y, scope a, grants b\n" | cr-e2b brief --sandbox sbx1 --brief - --json'
  assert_success
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(sorted(d), d["turn"])' "$output"
  assert_output "['ahead', 'already_queued', 'dropped_turn', 'held', 'sandbox_id', 'turn'] 3"
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

@test "a brief to a worker paused at its lifetime's end says it gets its lifetime anew, not a time it had left" {
  start_worker brief.md --timeout 1200
  wait_idle
  end_of_life sbx1
  echo 'a question' >q.md
  run --separate-stderr cr-e2b brief sbx1 --brief q.md
  assert_success
  [ "${stderr_lines[1]}" = "cr-e2b: warning: sandbox sbx1 was paused: resumed to take the brief, with its lifetime of 20m00s anew (its last one had ended)" ]
}

@test "a brief whose answer was lost is retried once and runs exactly once" {
  start_worker
  wait_idle
  printf 'a question\n' >q.md
  FAKE_E2B_FAIL=command-lost:enqueue run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md
  assert_success
  assert_output "queued as turn 3, 0 ahead of it"
  wait_idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 3 ]
}

@test "brief --id makes a retried CI job's brief safe: it is queued once" {
  start_worker
  wait_idle
  printf 'a question\n' >q.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md --id ci-job-42
  assert_output "queued as turn 3, 0 ahead of it"
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md --id ci-job-42 --json
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["turn"], d["already_queued"])' "$output"
  assert_output "3 True"
  wait_idle
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md --id ci-job-43
  assert_output "queued as turn 4, 0 ahead of it"
  wait_idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 4 ]
}

@test "brief --id of a brief that cancel --all dropped queues it anew, saying so; its retry is still queued once" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_HANG\n' >hang.md
  start_worker hang.md
  turn_started 2
  printf 'second brief\n' >b2.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief b2.md --id ci-7
  assert_output "queued as turn 3, 1 ahead of it"
  run cr-e2b cancel --sandbox sbx1 --all
  assert_output_contains "dropped turn 3: second brief"
  wait_idle
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief b2.md --id ci-7
  assert_success
  assert_output "queued as turn 4, 0 ahead of it; the same id's turn 3 was dropped by cancel --all"
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief b2.md --id ci-7 --json
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["turn"], d["already_queued"], d["dropped_turn"])' "$output"
  assert_output "4 True None"
  wait_idle
  run prompts_seen
  assert_output_contains "second brief"
  [ "$(grep -c '^second brief$' <(prompts_seen))" -eq 1 ]
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

@test "brief without E2B_API_KEY gives the key's error alone, not the question warning too" {
  unset E2B_API_KEY
  printf 'a question\n' >q.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md
  assert_failure 2
  assert_one_error_line
  assert_output_contains "missing key: export E2B_API_KEY"
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
