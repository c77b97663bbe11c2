#!/usr/bin/env bats
# The turn runner on the sandbox side, executed for real in $SBX with the stub
# Claude Code: one turn at a time, in order, recorded.

load test_helper

@test "ten briefs sent while a slow turn runs become ten turns, in order, never two at once" {
  setup_runner
  send "opening STUB_SLEEP=1"
  for i in $(seq 10); do send "brief $i" >/dev/null; done
  idle
  run prompts_seen
  assert_output <<'OUT'
opening STUB_SLEEP=1
brief 1
brief 2
brief 3
brief 4
brief 5
brief 6
brief 7
brief 8
brief 9
brief 10
OUT
  [ ! -e "$CLAUDE_STUB_DIR/overlaps" ]
  run python3 -c 'import glob, sys
calls = sorted(glob.glob(sys.argv[1] + "/calls/*"))
spans = [(float(open(c + "/start").read()), float(open(c + "/end").read())) for c in calls]
print(all(a[1] <= b[0] for a, b in zip(spans, spans[1:])))' "$CLAUDE_STUB_DIR"
  assert_output True
}

@test "brief is queued while a turn runs and says how many turns are ahead of it" {
  setup_runner
  run send "opening STUB_SLEEP=1"
  assert_output "1 0"
  run send "second"
  assert_output "2 1"
  run send "third"
  assert_output "3 2"
  idle
}

@test "a brief that arrives while the runner is finishing is run" {
  setup_runner
  # each brief is sent the moment the turn before it has ended: as its runner
  # finds the queue empty and lets go of the lock
  for i in $(seq 30); do
    send "quick $i" >/dev/null
    turn_ended "$i" "$SBX"
  done
  idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 30 ]
  run prompts_seen
  [ "${lines[29]}" = "quick 30" ]
  [ ! -e "$CLAUDE_STUB_DIR/overlaps" ]
}

@test "a failing turn does not stop the next one, and is not sent again" {
  setup_runner
  send "fails STUB_EXIT=3" >/dev/null
  send "next" >/dev/null
  idle
  run prompts_seen
  assert_output "fails STUB_EXIT=3
next"
  run turn_field exit_code
  assert_output "3 0"
  run turn_field state
  assert_output "failed ok"
}

@test "a run of Claude Code that exits 0 without a result ends its turn with that reason" {
  setup_runner
  send "quiet STUB_EXIT=0" >/dev/null
  idle
  run grep -o '"event":"ended".*"reason":"[^"]*"' "$SBX/.cr/turns.jsonl"
  assert_output_contains '"exit":0,'
  assert_output_contains '"reason":"no result: Claude Code ended without one (exit 0)"'
}

@test "an is_error result counts as a failed turn" {
  setup_runner
  send "STUB_ERROR" >/dev/null
  idle
  run turn_field state
  assert_output failed
}

@test "a failed opening does not lose the first brief, which resumes the session it made" {
  setup_runner
  send "opening STUB_EXIT=1" >/dev/null
  send "first brief" >/dev/null
  idle
  run bash -c 'for c in "$CLAUDE_STUB_DIR"/calls/*; do sed -n 2p "$c/argv"; cat "$c/exit"; done'
  assert_output "--session-id
1
--resume
0"
}

@test "a brief after an opening that never made a session starts the session itself" {
  setup_runner
  send "opening STUB_CRASH" >/dev/null
  send "first brief" >/dev/null
  idle
  run bash -c 'for c in "$CLAUDE_STUB_DIR"/calls/*; do sed -n 2p "$c/argv"; cat "$c/exit"; done'
  assert_output "--session-id
1
--session-id
0"
}

@test "every prompt reaches Claude Code byte for byte, on stdin, never in argv" {
  setup_runner
  printf -- '-p --resume "x" $(id) `id` \\ \r\nsecond line ünï ✓\n' >p1.md
  printf 'no final newline' >p2.md
  python3 -c 'import sys; sys.stdout.write("".join("%d ünïcødé `x` \"q\"\n" % i for i in range(12000)))' >p3.md
  for p in p1 p2 p3; do send -f $p.md >/dev/null; done
  idle
  calls=("$CLAUDE_STUB_DIR"/calls/*)
  cmp p1.md "${calls[0]}/stdin"
  cmp p2.md "${calls[1]}/stdin"
  cmp p3.md "${calls[2]}/stdin"
  run cat "${calls[0]}/argv"
  assert_output <<'OUT'
-p
--session-id
7d3c1a52-0c57-4b8e-9d1e-5f2a40c9e111
--output-format
stream-json
--verbose
--permission-mode
acceptEdits
OUT
}

@test "killing the runner mid-turn and sending another brief goes on without losing the queue" {
  setup_runner
  send "slow STUB_SLEEP=2" >/dev/null
  send "queued one" >/dev/null
  turn_started 1 "$SBX"
  kill -9 "$(cat "$SBX/.cr/runner.pid")"
  send "after the kill" >/dev/null
  idle
  run prompts_seen
  assert_output "slow STUB_SLEEP=2
queued one
after the kill"
  [ ! -e "$CLAUDE_STUB_DIR/overlaps" ]
  run turn_field state
  assert_output "ok ok ok"
}

@test "a turn whose runner died is ended on the result its log holds, and only the new runner's watcher follows it" {
  setup_runner
  hold_stub
  send "EPIC wc-3: branch claude/wc-3-x, scope a, grants b STUB_BLOCK STUB_LAST=EPIC wc-3 BLOCKED need a key" >/dev/null
  turn_started 1 "$SBX"
  eventually "the turn's watcher" test -s "$SBX/.cr/queue/000001.watcher"
  stale=$(cat "$SBX/.cr/queue/000001.watcher")
  kill -9 "$(cat "$SBX/.cr/runner.pid")"
  in_sandbox kick
  eventually "the dead runner's watcher to go" bash -c 'state=$(sed "s/.*) //" "/proc/$1/stat" 2>/dev/null | cut -c1); [ -z "$state" ] || [ "$state" = Z ]' _ "$stale"
  release_stub
  idle
  run turn_field state
  assert_output blocked
  run turn_field exit_code
  assert_output 0
  run turn_field last_line
  assert_output "EPIC wc-3 BLOCKED need a key"
}

@test "the turn records hold number, prompt, first line, times, exit code, outcome, last line, cost, duration and denials" {
  setup_runner
  send "EPIC wc-3: branch claude/wc-3-x, scope a, grants b STUB_LAST=EPIC wc-3 BLOCKED need a key" >/dev/null
  idle
  run turns_json
  run python3 -c 'import json,sys
t = json.loads(sys.argv[1])[0]
for k in ("turn", "prompt", "first_line", "exit_code", "is_error", "last_line", "session_cost_usd", "spent_usd", "duration_ms", "permission_denials", "state"):
    print(k, t[k])
print(all(t[k].endswith("Z") for k in ("queued_at", "started_at", "ended_at")))' "$output"
  assert_output <<'OUT'
turn 1
prompt queue/000001.md
first_line EPIC wc-3: branch claude/wc-3-x, scope a, grants b STUB_LAST=EPIC wc-3 BLOCKED need a key
exit_code 0
is_error False
last_line EPIC wc-3 BLOCKED need a key
session_cost_usd 0.05
spent_usd 0.05
duration_ms 1500
permission_denials 0
state blocked
True
OUT
}

@test "the log has a marker of the runner's own at each turn's start and end" {
  setup_runner
  send "hello" >/dev/null
  idle
  run grep '"type":"cr-e2b"' "$SBX/.cr/log"
  [ "${#lines[@]}" -eq 2 ]
  [[ "${lines[0]}" == '{"type":"cr-e2b","event":"turn-start","turn":1,"try":1,"prompt":"queue/000001.md","first_line":"hello","at":"'*'"}' ]]
  [[ "${lines[1]}" == '{"type":"cr-e2b","event":"turn-end","turn":1,"exit":0,"result":true,"reason":null,"at":"'*'"}' ]]
}

@test "a first line with quotes, backslashes and tabs is kept as valid JSON" {
  setup_runner
  printf 'say "hi" \\ back\tslash\n' >q.md
  send -f q.md >/dev/null
  idle
  run turn_field first_line
  assert_output "$(printf 'say "hi" \\ back\tslash')"
}

@test "a second drainer leaves at once while one is running" {
  setup_runner
  hold_stub
  send "held STUB_BLOCK" >/dev/null
  turn_started 1 "$SBX"
  # the first turn cannot end until released: a drainer that waited for the
  # lock would still be waiting when the timeout kills it
  drain=$(PYTHONPATH="$ROOT" python3 -c 'import cr_e2b; print(cr_e2b.sandbox_command("drain"))')
  run timeout 3 env HOME="$SBX" bash -c "$drain"
  assert_success
  release_stub
  idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 1 ]
}

@test "a turn's records keep where its lines lie in the log, and how many denials it had" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_DENY=npm test\n' >denied.md
  start_worker denied.md
  wait_idle
  log="$(sandbox_home)/.cr/log"
  for turn in 1 2; do
    run cr-e2b log --sandbox sbx1 --turn "$turn" --raw
    assert_output "$(sed -n "/\"event\":\"turn-start\",\"turn\":$turn,/,/\"event\":\"turn-end\",\"turn\":$turn,/p" "$log")"
  done
  run cr-e2b status --sandbox sbx1
  assert_output_contains "denials   1"
  run grep -c '"event":"turn-end",.*"result":true' "$log"
  assert_output 2
}

@test "a peek of a worker that is not a fork, or has no agent version yet, writes nothing on stderr" {
  setup_runner
  run --separate-stderr in_sandbox peek recent -1 0 work
  assert_success
  [ -z "$stderr" ]
  run --separate-stderr in_sandbox range 0 -1 100
  [ -z "$stderr" ]
}

@test "a peek brings the last EPIC turn's records and the last turn's on, never the questions between" {
  setup_runner
  {
    echo '{"turn":1,"event":"queued","first_line":"EPIC wc-1: branch claude/wc-1, scope a"}'
    echo '{"turn":1,"event":"ended","state":"undelivered"}'
    for turn in 2 3 4; do
      echo "{\"turn\":$turn,\"event\":\"queued\",\"first_line\":\"how far along are you?\"}"
      echo "{\"turn\":$turn,\"event\":\"ended\",\"state\":\"ok\"}"
    done
    echo '{"turn":5,"event":"queued","first_line":"EPIC wc-5: branch \\tclaude/wc-5"}'
  } >"$SBX/.cr/turns.jsonl"
  run reply_field "$(in_sandbox peek recent -1 0)" records
  run bash -c 'base64 -d <<<"$1" | gunzip' _ "$output"
  assert_output '{"turn":1,"event":"queued","first_line":"EPIC wc-1: branch claude/wc-1, scope a"}
{"turn":1,"event":"ended","state":"undelivered"}
{"turn":4,"event":"queued","first_line":"how far along are you?"}
{"turn":4,"event":"ended","state":"ok"}
{"turn":5,"event":"queued","first_line":"EPIC wc-5: branch \\tclaude/wc-5"}'
}

@test "with CR_REMOTE_HEADS, commits pushed to where origin was pointed count as unpushed, in work and in save's bundle" {
  setup_runner
  make_repo
  rm -rf "$SBX/repo"
  git clone -q "$REPO" "$SBX/repo"
  git init -q --bare "$TEST_DIR/elsewhere.git"
  git -C "$SBX/repo" checkout -q -b claude/x
  git -C "$SBX/repo" commit -q --allow-empty -m "the work"
  git -C "$SBX/repo" remote set-url origin "file://$TEST_DIR/elsewhere.git"
  git -C "$SBX/repo" push -q origin claude/x
  # the caller's ls-remote of the real repository; the other sha is no commit here
  export CR_REMOTE_HEADS="$(git -C "$TEST_DIR/origin.git" rev-parse main) 1234567890123456789012345678901234567890"
  run reply_field "$(in_sandbox work)" on_remote
  assert_output false
  run reply_field "$(in_sandbox work)" unpushed
  assert_output "$(git -C "$SBX/repo" rev-parse HEAD) the work"
  in_sandbox save >/dev/null
  run git -C "$SBX/repo" bundle list-heads "$SBX/.cr/save/work.bundle"
  assert_output_contains "$(git -C "$SBX/repo" rev-parse HEAD) HEAD"
  # unset, the remote-tracking branches count as the remote, as before
  unset CR_REMOTE_HEADS
  run reply_field "$(in_sandbox work)" on_remote
  assert_output true
  run reply_field "$(in_sandbox work)" unpushed
  assert_output ""
}
