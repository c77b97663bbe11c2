#!/usr/bin/env bats
# At e2b's limits: its cap of running sandboxes and its rate of creates, said
# plainly, and waited out with --queue by start and fork.

load test_helper

# One worker of the caller's running, at a cap of one (FAKE_E2B_MAX_RUNNING).
at_cap_of_one() {
  export FAKE_E2B_MAX_RUNNING=1
  make_sandbox
  make_repo
  with_claude
}

# start --queue SECONDS in the background, its stderr in $TEST_DIR/err.
queued_start() {
  cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --check true \
    --queue "$1" >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
}

waiting_said() { grep -q "waiting for a sandbox slot: 1 of 1 running (1 yours), " "$TEST_DIR/err"; }

sandboxes() { ls "$FAKE_E2B_DIR/sandboxes" | tr '\n' ' '; }

@test "a start at e2b's cap of running sandboxes is one line with e2b's number, how many are yours and --queue, exit 7" {
  at_cap_of_one
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --check true
  assert_failure 7
  assert_one_error_line
  assert_output "cr-e2b: e2b's limit of 1 running sandbox is reached (1 of them yours); start --queue SECONDS waits for a slot"
  [ "$(sandboxes)" = "sbx1 " ]
}

@test "a create refused for e2b's rate of creates says it is the rate, exit 7" {
  export FAKE_E2B_CREATE_GAP=3600
  make_sandbox
  make_repo
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --check true
  assert_failure 7
  assert_one_error_line
  assert_output "cr-e2b: e2b's limit on sandboxes created a second is reached; try again in a few seconds, or start --queue SECONDS waits for a slot"
}

@test "start --queue waits at the cap, saying so, and takes the slot that frees" {
  at_cap_of_one
  queued_start 120
  eventually "the waiting line" waiting_said
  pause_sandbox sbx1
  status=0
  wait "$pid" || status=$?
  output=$(cat "$TEST_DIR/err")
  assert_success
  [ "$(sandbox_state sbx2)" = running ]
}

@test "start --queue gives up at the cap once its seconds are spent, in one line, exit 7" {
  at_cap_of_one
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --check true --queue 1
  assert_failure 7
  output=$stderr
  assert_output_contains "waiting for a sandbox slot: 1 of 1 running (1 yours), 0m0"
  [ "$(printf '%s\n' "$stderr" | tail -n 1)" = "cr-e2b: e2b's limit of 1 running sandbox is reached (1 of them yours), still, after waiting 1 s for a slot" ]
  [ "$(sandboxes)" = "sbx1 " ]
}

@test "control-room.json's queue is start's --queue" {
  at_cap_of_one
  echo '{"queue": 1}' >control-room.json
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --check true
  assert_failure 7
  output=$stderr
  assert_output_contains "still, after waiting 1 s for a slot"
}

@test "a queued create whose answer was lost is found by its session's tag, not sent again" {
  export FAKE_E2B_FAIL=create-lost
  make_repo
  with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --check true --queue 60
  assert_success
  [ "$(calls | grep -c '^Sandbox.create$')" -eq 1 ]
  [ "$(sandboxes)" = "sbx1 " ]
  assert_output_contains "sandbox  sbx1"
}

@test "a create whose answer was lost is found by its session's tag without --queue too, set up and named" {
  export FAKE_E2B_FAIL=create-lost
  make_repo
  with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --check true
  assert_success
  [ "$(calls | grep -c '^Sandbox.create$')" -eq 1 ]
  [ "$(sandboxes)" = "sbx1 " ]
  assert_output_contains "sandbox  sbx1"
  wait_idle
}

@test "SIGTERM while start waits for a slot leaves no sandbox, in one line, exit 143" {
  at_cap_of_one
  queued_start 600
  eventually "the waiting line" waiting_said
  kill -TERM "$pid"
  status=0
  wait "$pid" || status=$?
  assert_failure 143
  output=$(tail -n 1 "$TEST_DIR/err")
  assert_output "cr-e2b: interrupted (SIGTERM) while waiting for a sandbox slot; no sandbox was made"
  [ "$(sandboxes)" = "sbx1 " ]
}

@test "fork --count at the cap makes the copies that fit and names the rest, exit 7" {
  export FAKE_E2B_MAX_RUNNING=2
  make_sandbox
  run --separate-stderr cr-e2b fork --sandbox sbx1 --count 3
  assert_failure 7
  assert_output "copy 1  sbx2  idle
copy 2  -  failed: e2b's limit of 2 running sandboxes is reached (2 of them yours); fork --queue SECONDS waits for a slot
copy 3  -  failed: e2b's limit of 2 running sandboxes is reached (2 of them yours); fork --queue SECONDS waits for a slot"
  [ "$(sandboxes)" = "sbx1 sbx2 " ]
}

@test "fork --count --queue waits for slots for the copies that did not fit" {
  export FAKE_E2B_MAX_RUNNING=2
  make_sandbox
  cr-e2b fork --sandbox sbx1 --count 2 --queue 120 >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
  eventually "the waiting line" grep -q "waiting for a sandbox slot: 2 of 2 running (2 yours)" "$TEST_DIR/err"
  pause_sandbox sbx2
  status=0
  wait "$pid" || status=$?
  output=$(cat "$TEST_DIR/out")
  assert_success
  assert_output "copy 1  sbx2  idle
copy 2  sbx3  idle"
}
