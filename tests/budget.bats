#!/usr/bin/env bats
# What a worker may spend: start --max-cost, each run given what is left, the
# queue held once the cap is spent, and `budget` raising it or setting the watch.

load test_helper

# .cr/watch as start writes it: NAME VALUE ...
watch() {
  : >"$SBX/.cr/watch"
  while [ $# -gt 0 ]; do printf '%s %s\n' "$1" "$2" >>"$SBX/.cr/watch"; shift 2; done
}

cap() { printf '%s\n' "$1" >"$SBX/.cr/max-cost"; }
compact() { python3 -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1])))' "$1"; }

# A field of the runner's header (what every look at the worker reads), in $SBX or sandbox HOME.
header() { # NAME [HOME]
  local SBX=${2:-$SBX}
  reply_field "$(in_sandbox peek recent -1 0)" "$1"
}

# Until the runner has let go of a queue it holds for the budget.
held_queue() { eventually "the queue held" runner_holds "${1:-$SBX}"; }
runner_holds() { [ "$(header runner "$1") $(header over_budget "$1")" = "false true" ]; }

# The --max-budget-usd each call of the stub was given, a line each ("-": none).
budgets_given() {
  local c
  for c in "$CLAUDE_STUB_DIR"/calls/*; do
    sed -n '/^--max-budget-usd$/{n;p;q;}' "$c/argv" | grep . || echo -
  done
}

# The spent records: "TURN TRY BY USD" lines.
spent_records() {
  sed -n 's/^{"turn":\([0-9]*\),"event":"spent","try":\([0-9]*\),"log_at":[0-9]*,"by":"\([a-z]*\)","usd":\([0-9.]*\)}$/\1 \2 \3 \4/p' \
    "${1:-$SBX}/.cr/turns.jsonl"
}

# Each try's limits of turn 1: "TRY NEXT_TRY TRIES WAIT REASON" lines.
limits() {
  turns_json | python3 -c 'import json, sys
for l in json.load(sys.stdin)[0]["limits"]: print(l["try"], l["next_try"], l["tries"], l["wait_seconds"], l["reason"])'
}

# A worker of the fake started on GitHub with the pull request's watch on, its
# .cr/watch as start writes it: watched_worker. Its id is in $made, its home in $home.
watched_worker() {
  made=$(python3 -c 'import e2b; print(e2b.Sandbox.create(timeout=3600, metadata={"cr-e2b": "1",
    "profile": "backend", "repo": "https://github.com/acme/demo.git", "session": "s", "gate_tries": "3",
    "ci_rounds": "3", "ci_settle": "300"}).sandbox_id)')
  install_runner "$made"
  home=$(sandbox_home "$made")
  printf 'github 1\nci_rounds 3\nci_poll 60\nci_settle 300\nci_timeout 3600\n' >"$home/.cr/watch"
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
}

@test "a turn that reaches the cap ends over budget, and the brief queued behind it is held, neither dropped nor run" {
  setup_runner
  cap 0.15
  send "first STUB_COST=0.1" >/dev/null
  idle
  hold_stub
  send "second STUB_BLOCK" >/dev/null
  turn_started 2 "$SBX"
  send "third" >/dev/null
  release_stub
  held_queue
  run turn_field state
  assert_output "ok over-budget queued"
  run turn_field reason
  assert_output 'None over budget: spent $0.2000 of its $0.15 cap None'
  run budgets_given
  assert_output "0.150000
0.050000"
  run prompts_seen
  assert_output "first STUB_COST=0.1
second STUB_BLOCK"
  [ ! -e "$SBX/.cr/queue/000003.dropped" ]
  run header held
  assert_output 1
}

@test "raising the cap runs each held brief once, in order, with what is left of the new cap" {
  setup_runner
  cap 0.1
  send "first STUB_COST=0.1" >/dev/null
  held_queue
  send "second" >/dev/null
  send "third" >/dev/null
  run reply_field "$(in_sandbox budget)" spent max_cost over_budget held released inherited
  assert_output "0.1 0.1 true 2 0 {}"
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 1 ]
  run reply_field "$(in_sandbox budget add 0.5)" max_cost released
  assert_output "0.6 2"
  in_sandbox kick  # a second kick, as a retried raise would send, runs nothing twice
  idle
  run prompts_seen
  assert_output "first STUB_COST=0.1
second
third"
  run budgets_given
  assert_output "0.100000
0.500000
0.400000"
  run turn_field state
  assert_output "over-budget ok ok"
}

@test "the spend counts every run: a try after a limit, and a turn a watchdog ended, priced from its log" {
  setup_runner
  watch turn_idle 1 on_limit wait limit_tries 3 limit_backoff 1 limit_margin 0
  send "first STUB_COST=0.1" >/dev/null
  idle
  send "hangs STUB_HANG" >/dev/null
  idle
  send "limited STUB_LIMIT=1,1" >/dev/null
  idle
  run spent_records
  assert_output "1 1 result 0.100000
2 1 tokens 0.100000
3 1 tokens 0.000000
3 2 result 0.100000"
  run header spent
  assert_output 0.3
  run header max_cost
  assert_output null
}

@test "a runner that takes over a turn counts its run once, however often it is recovered" {
  setup_runner
  send "first STUB_COST=0.1" >/dev/null
  idle
  # the dead runner's record of the try is there, its spent record too
  sed -i '/"event":"ended"/d' "$SBX/.cr/turns.jsonl"
  rm "$SBX/.cr/queue/000001.ended"
  in_sandbox drain
  in_sandbox drain
  run spent_records
  assert_output "1 1 result 0.100000"
}

@test "a refused resume and its retry are two runs, each counted: the retry's cost is not skipped" {
  setup_runner
  send "first" >/dev/null
  idle
  send "second STUB_REFUSE=1 STUB_COST=0.1" >/dev/null
  idle
  run spent_records
  assert_output "1 1 result 0.050000
2 1 tokens 0.000000
2 1 result 0.100000"
  run header spent
  assert_output 0.15
}

@test "after a refused resume, a limit and a takeover, each run is counted once" {
  setup_runner
  watch on_limit wait limit_tries 3 limit_backoff 1 limit_margin 0
  send "first" >/dev/null
  idle
  send "second STUB_REFUSE=1 STUB_LIMIT=1,1" >/dev/null
  idle
  # the dead runner's records of the turn's runs are there, their spent records too
  sed -i '/"turn":2,"event":"ended"/d' "$SBX/.cr/turns.jsonl"
  rm "$SBX/.cr/queue/000002.ended"
  in_sandbox drain
  run spent_records
  assert_output "1 1 result 0.050000
2 1 tokens 0.000000
2 1 tokens 0.000000
2 2 result 0.050000"
}

@test "a run a watchdog ended is priced from every token of its usage, a nested object before output_tokens or not" {
  setup_runner
  watch turn_idle 1
  send "first" >/dev/null
  idle
  send "hangs STUB_HANG STUB_OUTPUT=9000" >/dev/null
  idle
  # 1,000 tokens in and 9,000 out at the first run's $0.05 for 1,010 tokens
  run spent_records
  assert_output "1 1 result 0.050000
2 1 tokens 0.495049"
}

@test "a run that stops on a cap raised while it ran goes on under the new cap, its record naming the cap it was given" {
  setup_runner
  cap 0.1
  hold_stub
  send "first STUB_COST=0.1 STUB_BLOCK" >/dev/null
  turn_started 1 "$SBX"
  run reply_field "$(in_sandbox budget add 1)" max_cost
  assert_output 1.1
  release_stub
  idle
  run turn_field state
  assert_output ok
  run budgets_given
  assert_output "0.100000
1.000000"
  run limits
  assert_output '1 2 2 0 given $0.1000 of a $0.10 cap, raised to $1.10 since'
  run prompts_seen
  assert_output "first STUB_COST=0.1 STUB_BLOCK
(cr-e2b) The last request stopped on its budget, which has been raised since. Carry on with the same task from where you left off."
  run spent_records
  assert_output "1 1 result 0.100000
1 2 result 0.100000"
}

@test "a run that stops on its cap, not raised, ends the turn over budget naming that cap" {
  setup_runner
  cap 0.1
  hold_stub
  send "first STUB_COST=0.1 STUB_BLOCK" >/dev/null
  turn_started 1 "$SBX"
  run in_sandbox budget set 0.05
  release_stub
  idle
  run turn_field reason
  assert_output 'over budget: spent $0.1000 of its $0.10 cap'
}

@test "each stop the verdict gate blocked is paid for: a turn blocked twice costs three requests" {
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nSTUB_LAST=EPIC wc-3 READY 1234abcd https://git.example.com/you/app/pull/7\n' >false.md
  start_worker false.md --gate-tries 2 --max-cost 5
  wait_idle
  run spent_records "$(sandbox_home)"
  assert_output "1 1 result 0.050000
2 1 result 0.150000"
  run cr-e2b status --sandbox sbx1
  assert_output_contains 'spent     $0.2000 of $5.00'
}

@test "start --max-cost caps the worker: the opening and every brief run with what is left" {
  start_worker brief.md --max-cost 0.08 --gate-tries 0
  wait_idle
  [ "$(cat "$(sandbox_home)/.cr/max-cost")" = 0.080000 ]
  run budgets_given
  assert_output "0.080000
0.030000"
  run --separate-stderr cr-e2b wait --sandbox sbx1
  assert_failure 4
  assert_output ""
  [ "$stderr" = 'cr-e2b: turn 2 ended over budget: spent $0.1000 of its $0.08 cap (cr-e2b budget --add USD raises it)' ]
  run cr-e2b status --sandbox sbx1 --json
  run python3 -c 'import json, sys; s = json.loads(sys.argv[1])
print(s["spent_usd"], s["max_cost_usd"], s["worker"]["state"], s["last_turn"]["state"], s["last_turn"]["spent_usd"])' "$output"
  assert_output "0.1 0.08 over-budget over-budget 0.05"
  run cr-e2b status --sandbox sbx1
  assert_output_contains 'spent     $0.1000 of $0.08, over budget'
}

@test "a brief to a worker over its budget is queued and held, in one line, until budget raises the cap" {
  start_worker brief.md --max-cost 0.08 --gate-tries 0
  wait_idle
  printf 'A question STUB_LAST=answered\n' >more.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief more.md
  assert_success
  assert_output 'queued as turn 3, 0 ahead of it; held until the budget is raised: spent $0.1000 of its $0.08 cap (cr-e2b budget --sandbox sbx1 --add USD)'
  held_queue "$(sandbox_home)"
  run --separate-stderr cr-e2b wait --sandbox sbx1 --timeout 20 --interval 0.2
  assert_failure 4
  [ "$stderr" = 'cr-e2b: turn 2 ended over budget: spent $0.1000 of its $0.08 cap, 1 brief held (cr-e2b budget --add USD raises it)' ]
  run cr-e2b status --sandbox sbx1
  assert_output_contains 'worker    over budget: spent $0.1000 of its $0.08 cap, 1 brief held (cr-e2b budget --add USD raises it)'
  run cr-e2b budget --sandbox sbx1
  assert_output '$0.1000 spent of the $0.08 cap, over budget: 1 brief held'
  run cr-e2b budget --sandbox sbx1 --add 1
  assert_output '$0.1000 spent of the $1.08 cap; 1 held brief runs now'
  wait_idle
  # the question ran; the EPIC turn its cap stopped still stands
  run --separate-stderr cr-e2b wait --sandbox sbx1
  assert_failure 4
  [ "$stderr" = 'cr-e2b: turn 2 ended over budget: spent $0.1000 of its $0.08 cap; the cap is raised since: a brief of its epic carries the work on' ]
  [ "$(cat "$CLAUDE_STUB_DIR"/calls/*/stdin | grep -c '^A question')" -eq 1 ]
  run cr-e2b budget --sandbox sbx1 --max-cost 2 --json
  run compact "$output"
  assert_output '{"sandbox_id": "sbx1", "spent_usd": 0.15, "max_cost_usd": 2.0, "over_budget": false, "held": 0, "released": 0, "inherited_usd": {}}'
}

@test "budget says only the held briefs a raise releases: a turn that runs was never held" {
  make_repo
  with_claude
  printf 'Count the words. STUB_BLOCK\n' >block.md
  hold_stub
  run cr-e2b start --repo "$REPO" --profile backend --brief block.md --workdir repo --gate-tries 0 --max-cost 0.3
  assert_success
  turn_started 2
  run cr-e2b budget --sandbox sbx1 --max-cost 0.45
  assert_success
  assert_output '$0.0500 spent of the $0.45 cap'
  run cr-e2b budget --sandbox sbx1 --add 1 --json
  run compact "$output"
  assert_output '{"sandbox_id": "sbx1", "spent_usd": 0.05, "max_cost_usd": 1.45, "over_budget": false, "held": 0, "released": 0, "inherited_usd": {}}'
  release_stub
  wait_idle
}

@test "budget checks its dollars before any call, and --add needs a cap to add to" {
  make_sandbox
  for bad in 0 -1 abc 1e3 .; do
    run --separate-stderr cr-e2b budget --sandbox sbx1 --add "$bad"
    assert_failure 2
    assert_one_error_line
    assert_output_contains "--add takes dollars, a number over 0: '$bad'"
  done
  run --separate-stderr cr-e2b budget --sandbox sbx1 --max-cost 1 --add 1
  assert_failure 2
  no_sdk_calls
  run --separate-stderr cr-e2b budget --sandbox sbx1 --add 1
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: sandbox sbx1 has no cap to add to: set one with --max-cost USD"
  run cr-e2b budget --sandbox sbx1
  assert_output '$0.0000 spent with no cap'
}

@test "start refuses a cap of 0 or less, or not a number, before any call; control-room.json gives one" {
  rejects "--max-cost takes dollars, a number over 0: '0'" "${ok_args[@]}" --max-cost 0
  rejects "--max-cost takes dollars, a number over 0: '-5'" "${ok_args[@]}" --max-cost=-5
  rejects "--max-cost takes dollars, a number over 0: 'lots'" "${ok_args[@]}" --max-cost lots
  echo '{"max_cost": "5"}' >control-room.json
  rejects "control-room.json: max_cost takes dollars, a number over 0: '5'" "${ok_args[@]}"
  echo '{"max_cost": 2.5}' >control-room.json
  run cr-e2b start "${ok_args[@]}" --dry-run
  assert_output_contains 'budget     $2.50 over all turns (--max-budget-usd: what is left of it)'
  run cr-e2b start "${ok_args[@]}" --dry-run --max-cost 1
  assert_output_contains 'budget     $1.00 over all turns'
  rm control-room.json
  run cr-e2b start "${ok_args[@]}" --dry-run
  assert_output_contains 'budget     no cap (--max-cost sets one)'
}

@test "list shows each worker's spend of its cap, over budget first on a terminal, and adds them up" {
  start_worker brief.md --max-cost 0.08 --gate-tries 0
  wait_idle
  run cr-e2b start --repo "$REPO" --profile docs --brief brief.md --workdir repo --gate-tries 0
  wait_idle sbx2
  run script -qec "cr-e2b list" /dev/null
  output=$(printf '%s\n' "${lines[@]}" | tr -d '\r' | sed -E 's/[0-9]+m[0-9]{2}s left/N left/')
  assert_output <<'OUT'
SANDBOX  PROFILE  BRANCH  TURNS    SPENT        LEFT         STATE
sbx1     backend  main    2 turns  $0.10/$0.08  N left  over budget: spent $0.1000 of its $0.08 cap (cr-e2b budget --add USD raises it)
sbx2     docs     main    2 turns  $0.10        N left  no verdict: WORKER stub READY
2 workers: $0.20 spent of $0.08 in caps (1 uncapped), 1 over budget
OUT
  run cr-e2b list --json
  run python3 -c 'import json, sys; d = json.loads(sys.argv[1])
print(d["totals"])
print([(r["sandbox_id"], r["spent_usd"], r["max_cost_usd"], r["worker_state"], r["exit_code"]) for r in d["sandboxes"]])' "$output"
  assert_output "{'workers': 2, 'spent_usd': 0.2, 'uncounted': 0, 'max_cost_usd': 0.08, 'capped': 1, 'uncapped': 1, 'over_budget': 1}
[('sbx2', 0.1, None, 'no verdict', 8), ('sbx1', 0.1, 0.08, 'over budget', 4)]"
}

@test "start under a profile that has workers says in one line what they have spent" {
  start_worker brief.md --gate-tries 0
  wait_idle
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --max-cost 3 --gate-tries 0 --check true
  assert_success
  [ "$stderr" = "cr-e2b: warning: profile backend's 1 other worker has spent \$0.10; this cap is this worker's own" ] || { echo "$stderr"; false; }
  run --separate-stderr cr-e2b start --repo "$REPO" --profile docs --brief brief.md --workdir repo --max-cost 3 --gate-tries 0 --check true
  assert_success
  [ -z "$stderr" ]
}

@test "fork's copies inherit the cap and the spend so far, and say so" {
  start_worker brief.md --max-cost 1 --gate-tries 0
  wait_idle
  run cr-e2b fork --sandbox sbx1 --count 2
  assert_success
  assert_output_contains 'each copy inherits the $1.00 cap and the $0.1000 spent so far'
  run cr-e2b budget --sandbox sbx2 --json
  run compact "$output"
  assert_output '{"sandbox_id": "sbx2", "spent_usd": 0.1, "max_cost_usd": 1.0, "over_budget": false, "held": 0, "released": 0, "inherited_usd": {"sbx1": 0.1}}'
}

@test "list and start count a fork's inherited spend once, its copies' caps beyond it, through forks of forks" {
  start_worker brief.md --max-cost 1 --gate-tries 0
  wait_idle
  run cr-e2b fork --sandbox sbx1 --count 2
  assert_success
  # what a run of sbx2's own adds (the fake's copies cannot resume the session)
  echo '{"turn":2,"event":"spent","try":2,"log_at":99999,"by":"result","usd":0.050000}' >>"$(sandbox_home sbx2)/.cr/turns.jsonl"
  run cr-e2b fork --sandbox sbx2 --count 1
  assert_success
  # sbx1's $0.10 in every copy, sbx2's $0.05 in sbx4; caps $1 and, beyond what each inherited, $0.90, $0.90, $0.85
  run cr-e2b list --json
  run python3 -c 'import json, sys; d = json.loads(sys.argv[1])
print(d["totals"]["workers"], d["totals"]["spent_usd"], d["totals"]["max_cost_usd"])
print(sorted((r["sandbox_id"], r["spent_usd"], r["inherited_usd"]) for r in d["sandboxes"]))' "$output"
  assert_output "4 0.15 3.65
[('sbx1', 0.1, {}), ('sbx2', 0.15, {'sbx1': 0.1}), ('sbx3', 0.1, {'sbx1': 0.1}), ('sbx4', 0.15, {'sbx1': 0.1, 'sbx2': 0.05})]"
  run script -qec "cr-e2b list" /dev/null
  run tail -n 1 <<<"$(printf '%s\n' "${lines[@]}" | tr -d '\r')"
  assert_output '4 workers: $0.15 spent of $3.65 in caps, 0 over budget'
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --max-cost 3 --gate-tries 0 --check true
  assert_success
  [ "$stderr" = "cr-e2b: warning: profile backend's 4 other workers have spent \$0.15 of \$3.65 in caps; this cap is this worker's own" ] || { echo "$stderr"; false; }
}

@test "budget sets a running worker's pull request watch, the last line of a setting winning, and the watch goes by it" {
  watched_worker
  run --separate-stderr cr-e2b budget --sandbox "$made" --ci-rounds 1 --ci-poll 1 --ci-timeout 1
  assert_success
  [ -z "$stderr" ]
  assert_output '$0.0000 spent with no cap
watch     ci_rounds 1, ci_poll 1, ci_settle 300, ci_timeout 1'
  run grep -c '^ci_rounds ' "$home/.cr/watch"
  assert_output 2
  # the watch of a pull request gh cannot read gives up after the new --ci-timeout, not the old
  echo brief >"$home/.cr/queue/000002.md"
  : >"$home/.cr/queue/000002.ended"
  mkdir -p "$home/.cr/ci-targets"
  printf '2\nhttps://github.com/acme/demo/pull/12\n%s\n%s\n' "$home/.cr/queue/000002" "$(date +%s)" >"$home/.cr/ci-targets/wc-3"
  mkdir -p "$home/.local/bin"
  ln -sf "$FIXTURES/gh" "$home/.local/bin/gh"
  HOME="$home" run timeout 20 bash -c "$(sandbox_line watch)"
  assert_success
  run grep -c '"state":"unreadable"' "$home/.cr/turns.jsonl"
  assert_output 1
  run cr-e2b budget --sandbox "$made" --json
  run compact "$output"
  assert_output "{\"sandbox_id\": \"$made\", \"spent_usd\": 0.0, \"max_cost_usd\": null, \"over_budget\": false, \"held\": 0, \"released\": 0, \"inherited_usd\": {}, \"ci_rounds\": 1, \"ci_poll\": 1, \"ci_settle\": 300, \"ci_timeout\": 1}"
}

@test "a --ci-settle under start's is set, and budget says that wait still asks GitHub's quiet for start's" {
  watched_worker
  run --separate-stderr cr-e2b budget --sandbox "$made" --ci-settle 60
  assert_success
  assert_output_contains "ci_settle 60"
  [ "$stderr" = "cr-e2b: warning: wait still calls a pull request no CI only once GitHub has shown nothing new on it for 300 s, start's --ci-settle (e2b's metadata, which cannot change)" ]
}

@test "budget cannot turn the watch off, nor set one a worker was started without, and says so before touching the sandbox" {
  watched_worker
  run --separate-stderr cr-e2b budget --sandbox "$made" --ci-rounds 0
  assert_failure 2
  assert_one_error_line
  no_sdk_calls
  make_sandbox
  run --separate-stderr cr-e2b budget --sandbox sbx2 --ci-poll 30
  assert_failure 2
  assert_one_error_line
  [ "$stderr" = "cr-e2b: sandbox sbx2 has no pull request watch to change (start turns it on, on GitHub, with the gate: --ci-rounds)" ]
  run calls
  assert_output "Sandbox.get_info"
  [ ! -e "$(sandbox_home sbx2)/.cr/watch" ]
}
