#!/usr/bin/env bats
# `cr-e2b supervise`: the night's caretaker, which carries each worker with
# work left past its sandbox's lifetime, round after round.

load test_helper

# A worker whose turn 2 runs until release_stub, looked at once by list (the
# look supervise keeps of a paused worker).
busy_worker() {
  hold_stub
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nSTUB_BLOCK\n' >held.md
  start_worker held.md "$@"
  turn_started 2
  run cr-e2b list
}

@test "supervise --once resumes a worker e2b paused at its lifetime's end with work left, for start's lifetime" {
  busy_worker --timeout 1800
  end_of_life
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run --separate-stderr cr-e2b supervise --mine --once
  assert_success
  assert_output "resumed sbx1: turn 2 running, 30m00s left"
  [ "$(sandbox_state)" = running ]
  run call_field Sandbox.connect timeout
  assert_output 1800
  run --separate-stderr cr-e2b supervise --mine --once
  assert_output ""
  release_stub
}

@test "supervise leaves a worker a person paused as it is, and one with no work left" {
  busy_worker
  run cr-e2b pause --sandbox sbx1
  run --separate-stderr cr-e2b supervise --mine --once
  assert_success
  assert_output ""
  [ "$(sandbox_state)" = paused ]
  release_stub
}

@test "a busy worker whose end is near is paused and resumed at once: e2b's window starts anew" {
  busy_worker --timeout 3600
  deadline_in 60
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run --separate-stderr cr-e2b supervise --mine --once --interval 30
  assert_success
  assert_output "refreshed sbx1: turn 2 running, 1h00m left"
  run calls
  assert_output_contains "Sandbox.pause
Sandbox.connect"
  [ "$(sandbox_state)" = running ]
  release_stub
}

@test "a worker whose whole lifetime is shorter than a round and two minutes is not refreshed every round" {
  busy_worker --timeout 120
  deadline_in 60
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run --separate-stderr cr-e2b supervise --mine --once --interval 30
  assert_success
  assert_output ""
  run calls
  refute_output_contains "Sandbox.pause"
  release_stub
}

@test "supervise --pause-settled pauses a settled worker once a round has seen it so long, across runs" {
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nSTUB_LAST=EPIC wc-3 BLOCKED no key\n' >blocked.md
  start_worker blocked.md
  wait_idle
  run --separate-stderr cr-e2b supervise --mine --once --pause-settled 1
  assert_output ""
  sleep 1
  run --separate-stderr cr-e2b supervise --mine --once --pause-settled 1
  assert_success
  assert_output "paused sbx1: settled (BLOCKED: no key) and idle for 1 s"
  [ "$(sandbox_state)" = paused ]
}

@test "supervise --until-idle carries a worker through its lifetime's end and exits as wait --all would" {
  busy_worker
  end_of_life
  cr-e2b supervise --mine --until-idle --interval 0.2 >"$TEST_DIR/out" 2>&1 &
  pid=$!
  eventually "the resume" grep -q "resumed sbx1" "$TEST_DIR/out"
  release_stub
  status=0
  wait "$pid" || status=$?
  assert_failure 8
  [ "$(sandbox_state)" = running ]
}

@test "a resume e2b refuses at its cap waits for a slot, said when it first happens, not each round" {
  busy_worker
  end_of_life
  python3 -c 'import e2b; e2b.Sandbox.create(timeout=3600, metadata={"other": "1"})'
  export FAKE_E2B_MAX_RUNNING=1
  run --separate-stderr cr-e2b supervise --mine --once
  assert_output_contains "waits sbx1: for a sandbox slot: e2b's limit of 1 running sandbox is reached"
  run --separate-stderr cr-e2b supervise --mine --once
  assert_output ""
  [ "$(sandbox_state)" = paused ]
  release_stub
}

@test "supervise --json says each action as one JSON object on a line" {
  busy_worker
  end_of_life
  run --separate-stderr cr-e2b supervise --mine --once --json
  assert_success
  run python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["sandbox_id"], d["action"], d["worker_state"])' "$output"
  assert_output "sbx1 resumed paused"
  release_stub
}
