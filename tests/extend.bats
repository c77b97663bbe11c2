#!/usr/bin/env bats
# `cr-e2b extend`: the time a sandbox has left, set after one look at its
# state, and a shortened life that would lose work refused.

load test_helper

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

@test "extend that would shorten the life of a worker holding an unpushed commit refuses as kill does; --force shortens it" {
  idle_worker
  commit_in_worker 42
  pause_sandbox
  run --separate-stderr cr-e2b extend sbx1 --timeout 60
  assert_failure 9
  [[ "$output" == "" ]]
  [[ "$stderr" == *"cr-e2b: sandbox sbx1 holds work that would be lost if its life ended sooner: 1 unpushed commit; push it or save it (cr-e2b kill --save DIR), or shorten it anyway with --force" ]]
  [[ "$stderr" == *"sandbox sbx1 was paused: resumed for this look, its time left kept, and paused again"* ]]
  [ "$(sandbox_state)" = paused ]
  run call_field Sandbox.set_timeout timeout
  assert_output ""
  run cr-e2b extend sbx1 --timeout 7200
  assert_success
  run cr-e2b extend sbx1 --timeout 60 --force
  assert_success
  [[ "$output" == "sandbox sbx1 paused, 1m00s left (until "* ]]
  run call_field Sandbox.set_timeout timeout
  assert_output "7200
60"
}

@test "a lifetime over the plan's cap is one line naming the cap" {
  make_sandbox
  export FAKE_E2B_MAX_TIMEOUT=3600
  run cr-e2b extend --sandbox sbx1 --timeout 7200
  assert_failure 1
  assert_output "cr-e2b: --timeout 7200 is over your plan's cap of 3600 s"
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

@test "extend of an unknown sandbox is exit 3" {
  run --separate-stderr cr-e2b extend --sandbox nosuch --timeout 60
  assert_failure 3
  assert_one_error_line
}
