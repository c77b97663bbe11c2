#!/usr/bin/env bats
# `cr-e2b resume`: a paused sandbox carried on, with --timeout or the time it
# had left.

load test_helper

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

@test "a paused sandbox whose time ran out is resumed with e2b's least, 300 s" {
  make_sandbox
  deadline_in 0
  pause_sandbox
  run cr-e2b log --sandbox sbx1
  run call_field Sandbox.connect timeout
  assert_output 300
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
