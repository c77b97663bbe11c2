#!/usr/bin/env bats
# A night with no one there: lifetimes that end in a pause, the runner's
# watchdogs, and usage limits ridden out in the same session.

load test_helper

# .cr/watch as start writes it, with these settings: NAME VALUE ...
watch() {
  : >"$SBX/.cr/watch"
  while [ $# -gt 0 ]; do printf '%s %s\n' "$1" "$2" >>"$SBX/.cr/watch"; shift 2; done
}

turn_reasons() {
  turns_json | python3 -c 'import json,sys; print("\n".join(str(t["reason"]) for t in json.load(sys.stdin)))'
}

# The limited records of turn 1, as "try next_try of wait" lines.
limits_of_turn_one() {
  turns_json | python3 -c 'import json,sys
for l in json.load(sys.stdin)[0]["limits"]: print(l["try"], l["next_try"], l["tries"], l["wait_seconds"], l["reason"])'
}

session_file() { echo "$SBX/.claude/projects/$(echo "$SBX/repo" | sed 's/[^A-Za-z0-9]/-/g')/7d3c1a52-0c57-4b8e-9d1e-5f2a40c9e111.jsonl"; }

# A runner whose clock is e2b's after a resume once $TEST_DIR/jump exists: an
# hour on. Each look at the clock after the jump is noted in $TEST_DIR/looks.
drain_with_jumping_clock() {
  (cd "$SBX" && HOME="$SBX" python3 -I -c 'import os, sys, time
sys.path.insert(0, sys.argv[1])
import cr_e2b
real = time.time
def jumped():
    if not os.path.exists(sys.argv[2]):
        return real()
    with open(sys.argv[3], "a") as looks:
        looks.write("\n")
    return real() + 3600
time.time = jumped
sys.exit(cr_e2b.sandbox_main(["drain"]))' "$SBX/.cr" "$TEST_DIR/jump" "$TEST_DIR/looks" >>"$TEST_DIR/drain.out" 2>&1 &)
}

# When the runner takes a limit to reset, from TEXT alone (nothing: no time in it).
reset_time() {
  PYTHONPATH="$ROOT" python3 -c 'import sys, cr_e2b; print(cr_e2b.reset_time(sys.argv[1]) or "")' "$1"
}

# How the runner judges the run whose output is FILE, ended with exit CODE:
# "IS_ERROR|LIMIT|WAKE" (judged CODE FILE).
judged() {
  PYTHONPATH="$ROOT" python3 -c 'import json, sys, cr_e2b
run = cr_e2b.read_run(open(sys.argv[2], "rb"))
limit, wake = cr_e2b.run_limit(run, int(sys.argv[1]))
print("|".join([json.dumps(cr_e2b.is_error_of(run["result"])), limit or "", str(wake or "")]))' "$1" "$2"
}

@test "at the end of its lifetime e2b pauses the sandbox by default, or kills it with --on-timeout kill or control-room.json" {
  start_worker
  run call_field Sandbox.create lifecycle
  assert_output '{"on_timeout": "pause"}'
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --on-timeout kill
  assert_success
  run call_field Sandbox.create lifecycle
  assert_output '{"on_timeout": "kill"}'
  rm "$FAKE_E2B_DIR/calls.jsonl"
  echo '{"on_timeout": "kill"}' >control-room.json
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo
  assert_success
  run call_field Sandbox.create lifecycle
  assert_output '{"on_timeout": "kill"}'
}

@test "a worker e2b paused at its lifetime's end keeps its row: the last look's turn, queue and spend, and why" {
  hold_stub
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nSTUB_BLOCK\n' >held.md
  start_worker held.md
  turn_started 2
  run cr-e2b list
  end_of_life
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b list
  assert_output_contains "paused: at its lifetime's end with work left: turn 2 running"
  run cr-e2b status --sandbox sbx1
  assert_output_contains "worker    paused at its lifetime's end with work left: turn 2 running"
  run calls
  assert_output "Sandbox.list
Sandbox.get_info"
  release_stub
}

@test "reconnecting to a running sandbox asks for no more life than it has" {
  make_sandbox
  run cr-e2b log --sandbox sbx1
  run call_field Sandbox.connect timeout
  assert_output null
}

@test "a turn silent for --turn-idle is ended with all it started, and the next brief resumes the session" {
  setup_runner
  watch turn_idle 1
  send "hangs STUB_HANG" >/dev/null
  send "next" >/dev/null
  idle
  run turn_field state
  assert_output "stalled ok"
  run turn_reasons
  assert_output "stalled: no output for 1 s
None"
  run stub_children
  [ "${#lines[@]}" -eq 2 ]
  none_alive "${lines[@]}"
  run bash -c 'for c in "$CLAUDE_STUB_DIR"/calls/*; do sed -n 2p "$c/argv"; done'
  assert_output "--session-id
--resume"
}

@test "a turn busy when its sandbox was paused goes on after the resume: the clock's jump is a pause, not silence" {
  setup_runner
  watch turn_idle 60 turn_limit 120
  hold_stub
  printf 'busy STUB_BLOCK\n' >"$SBX/.cr/inbox/busy.md"
  in_sandbox enqueue "$SBX/.cr/inbox/busy.md" >/dev/null
  drain_with_jumping_clock
  turn_started 1 "$SBX"
  : >"$TEST_DIR/jump"
  # two looks after the jump: the watchdog has judged the one that saw it
  eventually "the watchdog's looks after the pause" bash -c '[ "$(wc -l <"$1")" -ge 2 ]' _ "$TEST_DIR/looks"
  [ ! -s "$SBX/.cr/queue/000001.stopped" ]
  release_stub
  idle
  run turn_field state
  assert_output ok
  run cat "$SBX/.cr/queue/000001.ran"
  [ "$output" -lt 60 ]
}

@test "a process of the turn that left its session (setsid) is ended with it, by cancel and by a watchdog" {
  setup_runner
  send "escapes STUB_ESCAPE" >/dev/null
  turn_started 1 "$SBX"
  eventually "both children" bash -c '[ "$(wc -l <"$1"/calls/*/children)" -eq 2 ]' _ "$CLAUDE_STUB_DIR"
  run reply_field "$(in_sandbox cancel)" cancelled ended
  assert_output "1 true"
  run stub_children
  none_alive "${lines[@]}"
  watch turn_idle 1
  send "escapes again STUB_ESCAPE" >/dev/null
  idle
  run turn_field state
  assert_output "cancelled stalled"
  run stub_children
  [ "${#lines[@]}" -eq 4 ]
  none_alive "${lines[@]}"
}

@test "what a turn leaves running when Claude Code exits, a setsid child too, is ended before the turn ends" {
  setup_runner
  send 'leaves STUB_RUN=(setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! >"$CLAUDE_STUB_DIR/left")' >/dev/null
  idle
  run cat "$CLAUDE_STUB_DIR/left"
  assert_success
  none_alive "$output"
}

@test "a turn that keeps printing is ended by --turn-limit" {
  setup_runner
  watch turn_idle 2 turn_limit 3
  send "STUB_TRICKLE" >/dev/null
  idle
  run turn_field state
  assert_output over-limit
  run turn_reasons
  assert_output "over its limit of 3 s"
  # A line every 0.2 s: even on a loaded machine it printed more than twice.
  run grep -c tick "$SBX/.cr/log"
  [ "$output" -gt 2 ]
}

@test "--turn-limit bounds the whole turn: a try after a limit has only what is left of it" {
  setup_runner
  # each try works 3 s: the second passes the 5 s only when the first one's time counts
  watch turn_limit 5 on_limit wait limit_tries 3 limit_backoff 60 limit_margin 0
  send "STUB_LIMIT=1,1 STUB_WORK=3" >/dev/null
  idle
  run turn_field state
  assert_output over-limit
  run turn_field tries
  assert_output 2
}

@test "without watchdog settings a silent turn is left to run" {
  setup_runner
  hold_stub
  send "held STUB_BLOCK" >/dev/null
  turn_started 1 "$SBX"
  sleep 2
  run turn_field state
  assert_output running
  release_stub
  idle
}

@test "a usage limit that resets in 2 s parks the turn, which goes on in the same session and succeeds, its brief seen once" {
  setup_runner
  watch on_limit wait limit_tries 8 limit_backoff 60 limit_margin 0
  send "EPIC wc-3: branch claude/wc-3-x, scope a, grants b STUB_LIMIT=1,2 MARK-once" >/dev/null
  eventually "the turn to park" grep -q '"event":"limited"' "$SBX/.cr/turns.jsonl"
  run turn_field state
  assert_output limited
  idle
  run turn_field state
  assert_output ok
  run limits_of_turn_one
  [[ "$output" == "1 2 8 "[123]" usage limit (429)" ]]
  run prompts_seen
  assert_output "EPIC wc-3: branch claude/wc-3-x, scope a, grants b STUB_LIMIT=1,2 MARK-once
(cr-e2b) The last request stopped on a usage limit, which has reset since. Carry on with the same task from where you left off."
  run grep -c MARK-once "$(session_file)"
  assert_output 1
  run bash -c 'for c in "$CLAUDE_STUB_DIR"/calls/*; do sed -n 2p "$c/argv"; done'
  assert_output "--session-id
--resume"
}

@test "a limit hit before the session took the brief sends the brief again, so that it is seen once" {
  setup_runner
  watch on_limit wait limit_tries 8 limit_backoff 60 limit_margin 0
  send "first STUB_LIMIT=1,1,early MARK-early" >/dev/null
  idle
  run turn_field state
  assert_output ok
  run prompts_seen
  assert_output "first STUB_LIMIT=1,1,early MARK-early
first STUB_LIMIT=1,1,early MARK-early"
  run grep -c MARK-early "$(session_file)"
  assert_output 1
}

@test "eight usage limits in a row end the turn with the last reason, and the next brief runs" {
  setup_runner
  watch on_limit wait limit_tries 8 limit_backoff 60 limit_margin 0
  send "STUB_LIMIT=8,1" >/dev/null
  send "after" >/dev/null
  idle
  run turn_field state
  assert_output "failed ok"
  run turn_reasons
  assert_output "usage limit (429) after 8 tries
None"
  run turn_field tries
  assert_output "8 1"
  run limits_of_turn_one
  [ "${#lines[@]}" -eq 7 ]
  [[ "${lines[6]}" == "7 8 8 "* ]]
}

@test "a limit with no reset time waits --limit-backoff, doubling each try" {
  setup_runner
  watch on_limit wait limit_tries 3 limit_backoff 1 limit_margin 0
  send "STUB_LIMIT=2,0" >/dev/null
  idle
  run limits_of_turn_one
  assert_output "1 2 3 1 rate limit (429)
2 3 3 2 rate limit (429)"
  run turn_field state
  assert_output ok
}

@test "--on-limit stop fails the turn at the first limit" {
  setup_runner
  watch on_limit stop limit_tries 8 limit_backoff 60 limit_margin 0
  send "STUB_LIMIT=1,2" >/dev/null
  idle
  run turn_field state
  assert_output failed
  run turn_reasons
  assert_output "usage limit (429) after 1 try"
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 1 ]
}

@test "a resume refused while the session runs as a background agent is tried again with the same prompt" {
  setup_runner
  send "opening" >/dev/null
  idle
  send "second STUB_REFUSE=1 MARK-refused" >/dev/null
  idle
  run prompts_seen
  assert_output "opening
second STUB_REFUSE=1 MARK-refused
second STUB_REFUSE=1 MARK-refused"
  run turn_field state
  assert_output "ok ok"
  run grep -c MARK-refused "$(session_file)"
  assert_output 1
  run grep -c '"event":"turn-retry"' "$SBX/.cr/log"
  assert_output 1
}

@test "a runner that dies while a turn is parked leaves it parked for the next runner" {
  setup_runner
  watch on_limit wait limit_tries 8 limit_backoff 60 limit_margin 0
  send "STUB_LIMIT=1,3 MARK-parked" >/dev/null
  eventually "the turn to park" test -s "$SBX/.cr/queue/000001.parked"
  kill -9 "$(cat "$SBX/.cr/runner.pid")"
  in_sandbox kick
  idle
  run turn_field state
  assert_output ok
  run grep -c MARK-parked "$(session_file)"
  assert_output 1
}

@test "start writes the watchdogs and the limit policy for the runner" {
  start_worker brief.md --turn-idle 60 --turn-limit 7200 --on-limit stop --limit-backoff 30 --limit-tries 3 \
    --gate-tries 5 --check-timeout 50
  run cat "$(sandbox_home)/.cr/watch"
  assert_output <<'OUT'
turn_idle 60
turn_limit 7200
on_limit stop
limit_backoff 30
limit_tries 3
limit_margin 30
gate_tries 5
check_timeout 50
github 0
ci_rounds 3
ci_poll 60
ci_settle 300
ci_timeout 3600
OUT
}

@test "by default a turn is ended after 900 s of silence, has no time limit, waits out 8 limits from 60 s, and its READY is checked up to 3 times" {
  start_worker
  run cat "$(sandbox_home)/.cr/watch"
  assert_output <<'OUT'
turn_idle 900
turn_limit 0
on_limit wait
limit_backoff 60
limit_tries 8
limit_margin 30
gate_tries 3
check_timeout 600
github 0
ci_rounds 3
ci_poll 60
ci_settle 300
ci_timeout 3600
OUT
}

@test "a backoff over an hour, or a negative watchdog, is refused before any call" {
  rejects "--limit-backoff is at most 3600 s" "${ok_args[@]}" --limit-backoff 7200
  rejects "argument --turn-idle: not a whole number of 0 or more: '-1'" "${ok_args[@]}" --turn-idle -1
  rejects "argument --on-limit: invalid choice: 'retry'" "${ok_args[@]}" --on-limit retry
}

@test "status, log and wait --json say why the watchdog ended a turn, and wait exits 4" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_HANG\n' >hang.md
  start_worker hang.md --turn-idle 1
  wait_idle
  run cr-e2b status --sandbox sbx1
  assert_output_contains "last turn 2 stalled (Claude Code exit 143): no output for 1 s"
  run cr-e2b log --sandbox sbx1 --turn 2
  assert_output_contains "--- turn 2 ended: stalled: no output for 1 s · Claude Code exit 143"
  run --separate-stderr cr-e2b wait --sandbox sbx1 --json
  assert_failure 4
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["outcome"], d["last_turn"]["state"], d["last_turn"]["reason"])' "$output"
  assert_output "stalled stalled stalled: no output for 1 s"
  run --separate-stderr cr-e2b wait --sandbox sbx1
  assert_failure 4
  assert_one_error_line
  assert_output "cr-e2b: turn 2 ended: stalled: no output for 1 s"
}

@test "while parked on a limit, status says until when and which try, wait keeps waiting and a brief queues behind" {
  # it resets after the sandbox's hour of life is over
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_LIMIT=1,5000\n' >limit.md
  start_worker limit.md
  eventually "the turn to park" grep -q '"event":"limited"' "$(sandbox_home)/.cr/turns.jsonl"
  until=$(python3 -c 'import json,sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "limited": print(e["until"])' "$(sandbox_home)/.cr/turns.jsonl")
  format=%H:%M
  [ "$(TZ=UTC date -d "$until" +%F)" = "$(TZ=UTC date +%F)" ] || format="%b %d %H:%M"
  shown=$(TZ=UTC date -d "$until" +"$format")
  run env TZ=UTC cr-e2b status --sandbox sbx1
  assert_output_contains "worker    limited until $shown (try 2 of 8): usage limit (429) on turn 2"
  run cr-e2b wait --sandbox sbx1 --timeout 1 --interval 0.2
  assert_failure 6
  run cr-e2b brief --sandbox sbx1 --brief brief.md
  assert_output "queued as turn 3, 1 ahead of it"
  run cr-e2b log --sandbox sbx1 --turn 2
  assert_output_contains "--- turn 2 try 1 of 8: usage limit (429); goes on at "
  run cr-e2b status --sandbox sbx1 --turns
  assert_output_contains "     try 1 of 8 "
  assert_output_contains "          the sandbox's lifetime ends first: cr-e2b extend --sandbox sbx1 --timeout SECONDS"
}

@test "a reset time given only as text is taken in its own time zone, the next such time" {
  run reset_time "You've hit your session limit · resets 4:50pm (Europe/Berlin)"
  expected=$(TZ=Europe/Berlin date -d 4:50pm +%s)
  [ "$expected" -gt "$(date +%s)" ] || expected=$((expected + 86400))
  assert_output "$expected"
  run reset_time "no time here"
  assert_output ""
}

@test "a limit is told from its result: usage limits with their reset, a plain 429, an overload, and not a success" {
  printf '%s\n' '{"type":"result","is_error":true,"result":"Claude AI usage limit reached|1764590000"}' >a.log
  printf '%s\n' '{"type":"result","is_error":true,"api_error_status":529,"result":"API Error: 529 overloaded_error"}' >b.log
  printf '%s\n' 'API Error: 429 rate_limit_error' >c.log
  printf '%s\n' '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1764590000}}' \
    '{"type":"result","is_error":false,"result":"done"}' >d.log
  printf '%s\n' '{"type":"result","is_error":true,"result":"the tests are overloaded with fixtures"}' >e.log
  run eval 'for try in "1 a" "1 b" "1 c" "0 d" "1 e"; do read -r rc name <<<"$try"; judged "$rc" "$name.log"; done'
  assert_output <<'OUT'
true|usage limit (429)|1764590000
true|overloaded (529)|
null|rate limit (429)|
false||
true||
OUT
}
