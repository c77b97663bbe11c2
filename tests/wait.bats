#!/usr/bin/env bats
# `cr-e2b wait`: its exit code by how the (worst) last turn ended, --timeout,
# --json, over many workers, and network trouble ridden out.

load test_helper

wait_for() { run cr-e2b wait --sandbox sbx1 --interval 0.2 "$@"; }

@test "wait exits 0 when the last turn delivered a READY the gate verified" {
  delivering_brief delivers.md
  start_worker delivers.md
  wait_for
  assert_success
  assert_output ""
}

@test "a turn whose git push was denied is not delivered: log, status and wait name it, and wait exits 8" {
  printf 'EPIC wc-3: branch claude/wc-3-count, scope a, grants b\nSTUB_DENY=git push -u origin claude/wc-3-count\n' >denied.md
  start_worker denied.md
  run cr-e2b wait --sandbox sbx1 --interval 0.2
  assert_failure 8
  assert_output "cr-e2b: turn 2 ended but its work was not delivered: denied git push -u origin claude/wc-3-count (see: cr-e2b diff --sandbox sbx1)"
  run cr-e2b status --sandbox sbx1
  assert_output_contains "last turn 2 undelivered (Claude Code exit 0): WORKER stub READY
denied    git push -u origin claude/wc-3-count"
  run cr-e2b log --sandbox sbx1 --turn 2
  assert_output_contains " !! denied  Bash  git push -u origin claude/wc-3-count"
  assert_output_contains "--- turn 2 undelivered · 1.5 s · \$0.1000 · 1 denial · denied: git push -u origin claude/wc-3-count · WORKER stub READY"
  run cr-e2b wait --sandbox sbx1 --json
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["outcome"], d["exit_code"], d["last_turn"]["denied_delivery"])' "$output"
  assert_output "undelivered 8 ['git push -u origin claude/wc-3-count']"
}

@test "a denied pull request is not delivered either, but a denied test run is" {
  printf 'EPIC wc-3: branch claude/wc-3-count, scope a, grants b\nSTUB_DENY=gh pr create --base main --fill\n' >pr.md
  start_worker pr.md
  run cr-e2b wait --sandbox sbx1 --interval 0.2
  assert_failure 8
  delivering_brief tests.md
  echo 'STUB_DENY=npm test' >>tests.md
  run cr-e2b brief --sandbox sbx1 --brief tests.md
  run cr-e2b wait --sandbox sbx1 --interval 0.2
  assert_success
}

@test "only a denied push or pull request counts as undelivered, however the command is written" {
  run env PYTHONPATH="$ROOT" python3 -c 'import cr_e2b
for command in ["git push", "cd repo && git push -u origin HEAD", "git -C /home/user/repo push origin x",
                "git -c credential.helper= push", "gh pr create --fill", "git stash push", "git status",
                "gh pr view --json url", "npm test"]:
    print(bool(cr_e2b.denied_delivery([{"tool_name": "Bash", "tool_input": {"command": command}}])), command)'
  assert_output <<'OUT'
True git push
True cd repo && git push -u origin HEAD
True git -C /home/user/repo push origin x
True git -c credential.helper= push
True gh pr create --fill
False git stash push
False git status
False gh pr view --json url
False npm test
OUT
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

@test "wait --timeout waits the time given, shortening its last sleep" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_BLOCK\n' >held.md
  start_worker held.md
  hold_stub
  turn_started 2
  t0=$(date +%s%N)
  run cr-e2b wait --sandbox sbx1 --timeout 2 --interval 5
  took=$(( ($(date +%s%N) - t0) / 1000000 ))
  assert_failure 6
  [ "$took" -ge 2000 ]
  [ "$took" -lt 4000 ]
  release_stub
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

@test "wait exits 3 when the sandbox is gone" {
  run --separate-stderr cr-e2b wait --sandbox sbx1 --interval 0.2
  assert_failure 3
  assert_one_error_line
}

@test "wait reports a sandbox killed while it waits as gone, exit 3" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_SLEEP=3\n' >slow.md
  start_worker slow.md
  (turn_started 2 && cr-e2b kill --sandbox sbx1 --force) &
  wait_for
  assert_failure 3
  assert_output "cr-e2b: no such sandbox: sbx1 (unknown, expired or killed)"
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

@test "an idle wait after 1000 turns brings at most 16 KB" {
  with_turns 1000
  run cr-e2b wait --sandbox sbx1
  assert_success
  [ "$(bytes_down)" -le 16384 ]
}

@test "wait on several workers returns the worst outcome, with an entry per worker" {
  fleet_repo
  ready_worker
  fleet_worker blocked 0 false "EPIC wc-2 BLOCKED needs the staging key"
  run --separate-stderr cr-e2b wait --sandbox sbx1 --sandbox sbx2
  assert_failure 5
  assert_one_error_line
  assert_output "cr-e2b: sandbox sbx2: turn 1 blocked: EPIC wc-2 BLOCKED needs the staging key"
  fleet_worker failed 1 true "API Error: 500"
  run --separate-stderr cr-e2b wait --all --json
  assert_failure 4
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["outcome"], d["exit_code"]); [print(w["sandbox_id"], w["outcome"], w["exit_code"]) for w in d["workers"]]' "$output"
  assert_output <<'OUT'
failed 4
sbx1 ok 0
sbx2 blocked 5
sbx3 failed 4
OUT
  run cr-e2b wait --all --profile ready --profile blocked
  assert_failure 5
  run cr-e2b wait --sandbox sbx1 --sandbox nosuch
  assert_failure 3
}

@test "wait on several workers times out with 6 while one is still busy" {
  fleet_repo
  ready_worker
  fleet_worker running 0 false "WORKER running READY"
  running_turn
  run --separate-stderr cr-e2b wait --all --timeout 1 --interval 0.2
  assert_failure 6
  assert_one_error_line
  assert_output_contains "cr-e2b: sandbox sbx2: still busy after 1 s: running turn 2 for 12m"
}

@test "wait --pause-settled never pauses a colleague's worker, even named" {
  FLEET_OWNER=colleague@example.com fleet_worker theirs 0 false "EPIC wc-3 BLOCKED needs the staging key"
  run --separate-stderr cr-e2b wait "$made" --interval 0.2 --pause-settled 0
  assert_failure 5
  [ "$(sandbox_state "$made")" = running ]
}

@test "wait --all --pause-settled pauses each worker once settled that long and exits by their outcomes; --timeout first leaves one running" {
  fleet_worker blocked 0 false "EPIC wc-2 BLOCKED needs the staging key"
  fleet_worker failed 1 true "API Error: 500"
  run --separate-stderr cr-e2b wait --all --interval 0.2 --pause-settled 1 --json
  assert_failure 4
  [ "$(grep -c ' paused: settled (' <<<"$stderr")" -eq 2 ]
  run python3 -c 'import json,sys; [print(w["sandbox_id"], w["outcome"], w["paused"]) for w in json.loads(sys.argv[1])["workers"]]' "$output"
  assert_output "sbx1 blocked True
sbx2 failed True"
  [ "$(sandbox_state sbx1)" = paused ]
  [ "$(sandbox_state sbx2)" = paused ]
  fleet_worker later 0 false "EPIC wc-4 BLOCKED needs the staging key"
  run --separate-stderr cr-e2b wait "$made" --pause-settled 30 --timeout 2
  assert_failure 5
  [ "$(sandbox_state "$made")" = running ]
  run --separate-stderr cr-e2b list --pause-settled 1
  assert_failure 2
  assert_output ""
  [ "$stderr" = "cr-e2b: --pause-settled goes with --watch" ]
}

@test "wait rides out a network outage: one line when it starts, one when it is over" {
  delivering_brief delivers.md
  start_worker delivers.md
  wait_idle
  for version in 2.51 2.63; do
    rm -f "$FAKE_E2B_DIR"/used-*
    FAKE_E2B_VERSION=$version FAKE_E2B_FAIL=command-network:2 run --separate-stderr cr-e2b wait --sandbox sbx1 --interval 0.2
    assert_success
    [ "$stderr" = "cr-e2b: warning: lost touch with sandbox sbx1 (cannot reach sandbox sbx1 (network): [Errno 111] Connection refused); retrying for up to 120 s
cr-e2b: warning: back in touch with sandbox sbx1 after 3 s" ] || { echo "$version: $stderr" >&2; return 1; }
  done
}

@test "after --retry-for, wait and log --follow give up with exit 7, on both SDK versions" {
  start_worker
  wait_idle
  for version in 2.51 2.63; do
    export FAKE_E2B_VERSION=$version FAKE_E2B_FAIL=command-network:1000
    run --separate-stderr cr-e2b wait --sandbox sbx1 --interval 0.2 --retry-for 2
    assert_failure 7
    [ "${stderr_lines[1]}" = "cr-e2b: cannot reach sandbox sbx1 (network): [Errno 111] Connection refused" ]
    run --separate-stderr cr-e2b log --sandbox sbx1 --follow --retry-for 1
    assert_failure 7
    run --separate-stderr cr-e2b status --sandbox sbx1
    assert_failure 7
    assert_one_error_line
  done
}
