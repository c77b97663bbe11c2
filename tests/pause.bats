#!/usr/bin/env bats
# `cr-e2b pause`: a sandbox paused in one call, its time left kept, and the
# verbs that look into a paused sandbox pausing it again.

load test_helper

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
