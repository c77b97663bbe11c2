#!/usr/bin/env bats
# `cr-e2b fork`: copies of a worker, memory and session included, and what fork
# refuses.

load test_helper

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
