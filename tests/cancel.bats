#!/usr/bin/env bats
# `cr-e2b cancel`: the running turn ended with all it started, the session and
# the queue kept (--all drops the queue).

load test_helper

@test "cancel ends the running turn and all it started, keeps the queue, and the next brief runs in the same session" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_HANG\n' >hang.md
  start_worker hang.md
  turn_started 2
  delivering_brief delivers.md
  run cr-e2b brief --sandbox sbx1 --brief delivers.md
  assert_success
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b cancel --sandbox sbx1
  assert_success
  assert_output "cancelled turn 2; the session, its files and the queue are kept"
  run calls
  assert_output "Sandbox.get_info
Sandbox.connect
commands.run"
  wait_idle
  run cr-e2b status --sandbox sbx1 --turns
  assert_output_contains "turn 2    cancelled   EPIC wc-3: branch claude/wc-3-x, scope a, grants b (Claude Code exit 143)"
  assert_output_contains "turn 3    ok "
  run stub_children
  none_alive "${lines[@]}"
  run bash -c 'for c in "$CLAUDE_STUB_DIR"/calls/*; do sed -n 2p "$c/argv"; done'
  assert_output "--session-id
--resume
--resume"
  run cr-e2b wait --sandbox sbx1
  assert_success
}

@test "cancel --all also drops the briefs queued behind, naming each" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_HANG\n' >hang.md
  start_worker hang.md
  turn_started 2
  printf 'second brief\n' >b2.md
  printf 'third brief\n' >b3.md
  cr-e2b brief --sandbox sbx1 --brief b2.md >/dev/null
  cr-e2b brief --sandbox sbx1 --brief b3.md >/dev/null
  run cr-e2b cancel --sandbox sbx1 --all
  assert_success
  assert_output <<'OUT'
dropped turn 3: second brief
dropped turn 4: third brief
cancelled turn 2; the session, its files and the queue are kept
OUT
  wait_idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 2 ]
  run cr-e2b status --sandbox sbx1 --turns --json
  run python3 -c 'import json,sys; print(" ".join(t["state"] for t in json.loads(sys.argv[1])["turn_list"]))' "$output"
  assert_output "ok cancelled dropped dropped"
  run --separate-stderr cr-e2b wait --sandbox sbx1
  assert_failure 4
  assert_one_error_line
  assert_output "cr-e2b: turn 2 ended: cancelled"
  # the state is said once: never `cancelled: cancelled`
  run cr-e2b status --sandbox sbx1
  assert_output_contains "last turn 2 cancelled"
  refute_output_contains "): cancelled"
  run cr-e2b list
  [[ "$output" == *"  cancelled" ]]
}

@test "cancel ends a turn parked on a limit" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_LIMIT=1,600\n' >limit.md
  start_worker limit.md
  eventually "the turn to park" grep -q '"event":"limited"' "$(sandbox_home)/.cr/turns.jsonl"
  run cr-e2b cancel --sandbox sbx1 --json
  assert_success
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["cancelled"], d["ended"], d["dropped"])' "$output"
  assert_output "2 True []"
}

@test "cancel with nothing running says so and exits 0" {
  start_worker
  wait_idle
  run --separate-stderr cr-e2b cancel --sandbox sbx1
  assert_success
  assert_output "no turn is running in sandbox sbx1; nothing to cancel"
}

@test "cancel of an unknown sandbox is one line and exit 3" {
  run --separate-stderr cr-e2b cancel --sandbox nosuch
  assert_failure 3
  assert_one_error_line
  assert_output "cr-e2b: no such sandbox: nosuch (unknown, expired or killed)"
}
