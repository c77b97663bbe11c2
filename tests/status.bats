#!/usr/bin/env bats
# `cr-e2b status`: one worker at a glance, its turns, its work, its denials.

load test_helper

# sbx1 after the five turns of the recorded stream, all ended.
with_history() {
  make_sandbox
  local home n
  home=$(sandbox_home)
  cp "$FIXTURES/streams/worker.log" "$home/.cr/log"
  cp "$FIXTURES/streams/turns.jsonl" "$home/.cr/turns.jsonl"
  # what the runner counted of turns 1 to 3 (4 and 5 ended without a result)
  printf '{"turn":%s,"event":"spent","try":1,"by":"result","usd":%s}\n' 1 0.1019 2 0.1544 3 0.1527 >>"$home/.cr/turns.jsonl"
  for n in 1 2 3 4 5; do
    echo prompt >"$home/.cr/queue/00000$n.md"
    : >"$home/.cr/queue/00000$n.ended"
  done
}

# Turn 6 queued behind nothing: a runner would start it.
queue_turn_six() {
  local home
  home=$(sandbox_home)
  echo "status?" >"$home/.cr/queue/000006.md"
  echo '{"turn":6,"event":"queued","at":"2026-11-29T10:10:00Z","prompt":"queue/000006.md","first_line":"status?"}' >>"$home/.cr/turns.jsonl"
}

fake_live_runner() {
  bash -c 'exec -a drain sleep 60' &
  echo $! >"$(sandbox_home)/.cr/runner.pid"
}

@test "status shows the sandbox, the worker idle, the last turn, cost and denials" {
  with_history
  run cr-e2b status --sandbox sbx1
  assert_success
  [[ "${lines[0]}" =~ ^"sandbox   sbx1 (running, "[0-9]+m[0-9]{2}s" left)"$ ]]
  output=$(printf '%s\n' "${lines[@]:1}")
  assert_output <<'OUT'
profile   backend
repo      https://git.example.com/team/app.git
session   9b30a883-73ad-4531-bba2-05e112cdb160
worker    idle
last turn 5 failed (Claude Code exit 137): (no final line)
epic      wc-3 (turn 2): undelivered denied git push origin claude/wc-3-count
epic      wc-4 (turn 4): BLOCKED need write access to docs/
work      no git repository in repo (did setup fail at clone?)
spent     $0.4090 (no cap)
denials   1
OUT
}

@test "status costs three calls: info, connect and one command" {
  with_history
  run cr-e2b status --sandbox sbx1
  run calls
  assert_output "Sandbox.get_info
Sandbox.connect
commands.run"
}

@test "status shows the turn running, for how long, when its last output came, and how many are queued" {
  with_history
  queue_turn_six
  home=$(sandbox_home)
  echo "{\"turn\":6,\"event\":\"started\",\"at\":\"$(date -u -d '-750 seconds' +%Y-%m-%dT%H:%M:%SZ)\",\"flag\":\"--resume\"}" >>"$home/.cr/turns.jsonl"
  echo "later" >"$home/.cr/queue/000007.md"
  echo '{"turn":7,"event":"queued","at":"2026-11-29T10:10:02Z","prompt":"queue/000007.md","first_line":"later"}' >>"$home/.cr/turns.jsonl"
  touch -d '-150 seconds' "$home/.cr/log"
  fake_live_runner
  run cr-e2b status --sandbox sbx1
  assert_output_contains "worker    running turn 6 for 12m, last output 2m ago, 1 queued"
  run cr-e2b status --sandbox sbx1 --json
  run python3 -c 'import json,sys; w = json.loads(sys.argv[1])["worker"]; print(w["running_seconds"] // 60, w["idle_seconds"] // 60)' "$output"
  assert_output "12 2"
}

@test "status calls a worker dead when turns are queued and no runner is alive" {
  with_history
  queue_turn_six
  run cr-e2b status --sandbox sbx1
  assert_output_contains "worker    dead: turns are queued but no runner is alive (a brief restarts it)"
}

@test "status of a paused sandbox does not resume it" {
  with_history
  pause_sandbox
  run cr-e2b status --sandbox sbx1
  assert_success
  [[ "${lines[0]}" == "sandbox   sbx1 (paused, "* ]]
  assert_output_contains "worker    paused; not looked at from here yet (a brief or cr-e2b resume carries it on)"
  run calls
  assert_output Sandbox.get_info
}

@test "status --json has the documented fields" {
  with_history
  run cr-e2b status --sandbox sbx1 --json
  assert_success
  run python3 -c 'import json,sys
d = json.loads(sys.argv[1])
print(sorted(d))
print(sorted(d["worker"]))
print(sorted(d["last_turn"]))
print(d["state"], d["worker"]["state"], d["last_turn"]["turn"], d["session_cost_usd"], d["spent_usd"], d["max_cost_usd"], d["permission_denials"], d["turns"], d["work"])' "$output"
  assert_output <<'OUT'
['agent_version', 'checks', 'end_at', 'epics', 'fork', 'gate_tries', 'last_turn', 'max_cost_usd', 'owner', 'permission_denials', 'profile', 'repo', 'rounds', 'sandbox_id', 'seconds_left', 'session_cost_usd', 'session_id', 'spent_usd', 'start_max_cost_usd', 'started_at', 'state', 'turns', 'work', 'worker']
['held', 'idle_seconds', 'inherited_usd', 'limited', 'max_cost_usd', 'over_budget', 'queued', 'running_seconds', 'setup', 'since', 'spent_usd', 'state', 'turn']
['api_error_status', 'certified', 'ci', 'ci_rounds', 'denied', 'denied_delivery', 'dropped', 'duration_ms', 'ended_at', 'exit_code', 'first_line', 'is_error', 'last_line', 'limited', 'limits', 'permission_denials', 'prompt', 'queued_at', 'reason', 'session_cost_usd', 'spent_usd', 'started_at', 'state', 'tries', 'try_started_at', 'turn', 'verdict', 'verified']
running idle 5 0.152688 0.409 None 1 5 {'workdir': 'repo', 'git': False}
OUT
}

@test "status --json gives dollars to six places, never a float's noise" {
  with_history
  echo '{"turn":6,"event":"queued","at":"2026-11-29T10:10:00Z","prompt":"queue/000006.md","first_line":"x"}' >>"$(sandbox_home)/.cr/turns.jsonl"
  echo '{"turn":6,"event":"result","result":{"type":"result","is_error":false,"result":"done","total_cost_usd":0.5776319999999999}}' >>"$(sandbox_home)/.cr/turns.jsonl"
  echo '{"turn":6,"event":"ended","at":"2026-11-29T10:10:09Z","exit":0,"is_error":false,"denials":0,"log_end":0}' >>"$(sandbox_home)/.cr/turns.jsonl"
  run cr-e2b status --sandbox sbx1 --json
  refute_output_contains 99999
  run python3 -c 'import json,sys; d = json.loads(sys.argv[1]); print(d["session_cost_usd"], d["last_turn"]["session_cost_usd"])' "$output"
  assert_output "0.577632 0.577632"
}

@test "status --turns lists every turn, and --json gives them as turn_list" {
  with_history
  run cr-e2b status --sandbox sbx1 --turns
  assert_success
  output=$(printf '%s\n' "${lines[@]}" | grep '^turn ')
  assert_output <<'OUT'
turn 1    ok          # You are the backend worker of a control room (Claude Code exit 0): WORKER backend READY
turn 2    undelivered EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/ (Claude Code exit 0): EPIC wc-3 READY 4b825dc642cb6eb9a060e54bf8d69288fbee4904 https://git.example.com/team/app/pull/7
turn 3    failed      are you stuck? (Claude Code exit 1): API Error: 529 mock error 529. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:43267).
turn 4    blocked     EPIC wc-4: branch claude/wc-4-docs, scope docs/, grants - (Claude Code exit 0): EPIC wc-4 BLOCKED need write access to docs/
turn 5    failed      one more thing (Claude Code exit 137): (no final line)
OUT
  run cr-e2b status --sandbox sbx1 --turns --json
  run python3 -c 'import json,sys; print([t["turn"] for t in json.loads(sys.argv[1])["turn_list"]])' "$output"
  assert_output "[1, 2, 3, 4, 5]"
}

@test "status keeps the cost of the last turn that reported one, after turns that did not" {
  with_history
  echo '{"turn":6,"event":"queued","at":"2026-11-29T10:10:00Z","prompt":"queue/000006.md","first_line":"x"}' >>"$(sandbox_home)/.cr/turns.jsonl"
  echo '{"turn":6,"event":"ended","at":"2026-11-29T10:10:09Z","exit":null,"is_error":null,"denials":0,"log_end":0}' >>"$(sandbox_home)/.cr/turns.jsonl"
  run cr-e2b status --sandbox sbx1 --json
  run python3 -c 'import json,sys; d = json.loads(sys.argv[1]); print(d["last_turn"]["state"], d["session_cost_usd"])' "$output"
  assert_output "lost 0.152688"
}

@test "status of an unknown sandbox is one line and exit 3" {
  run --separate-stderr cr-e2b status --sandbox nosuch
  assert_failure 3
  assert_one_error_line
}

@test "status --json of a gone sandbox says gone, and exits 3" {
  run bash -c 'cr-e2b status --sandbox nosuch --json 2>/dev/null'
  assert_failure 3
  run python3 -c 'import json,sys; print(json.loads(sys.argv[1]))' "$output"
  assert_output "{'sandbox_id': 'nosuch', 'state': 'gone'}"
}

@test "status calls an epic whose turn runs running, not failed" {
  hold_stub
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nSTUB_BLOCK\n' >held.md
  start_worker held.md
  turn_started 2
  run cr-e2b status --sandbox sbx1
  release_stub
  assert_output_contains "epic      wc-3 (turn 2): running"
}

@test "status of a live worker after start and a brief" {
  delivering_brief delivers.md
  start_worker delivers.md
  wait_idle
  head=$(git -C "$(sandbox_home)/repo" rev-parse HEAD)
  run cr-e2b status --sandbox sbx1
  assert_output_contains "worker    idle"
  assert_output_contains "last turn 2 ok (Claude Code exit 0): EPIC wc-3 READY $head https://git.example.com/you/app/pull/1
verdict   READY verified in the sandbox: claude/wc-3-count at ${head:0:12} pushed, pull request not checked (not GitHub, or no gh), no checks"
  assert_output_contains "spent     \$0.1000 (no cap)"
}

@test "status has a work line: branch, pushed or not, unpushed commits, changed files" {
  idle_worker
  commit_in_worker 42
  echo more >>"$(workdir)/README"
  run cr-e2b status --sandbox sbx1
  assert_output_contains "work      claude/wc-3-count, not pushed, 1 unpushed commit, 1 changed file"
  git -C "$(workdir)" checkout -q README
  git -C "$(workdir)" push -q origin claude/wc-3-count
  run cr-e2b status --sandbox sbx1
  assert_output_contains "work      claude/wc-3-count, pushed, 0 unpushed commits, 0 changed files"
}

@test "status names the gate, its checks and the cap start gave, from e2b's metadata, whatever the sandbox's files say" {
  delivering_brief ok.md
  start_worker ok.md --check true --gate-tries 2 --max-cost 5
  wait_idle
  home=$(sandbox_home)
  sed -i 's/^gate_tries .*/gate_tries 0/' "$home/.cr/watch"
  : >"$home/.cr/checks"
  run cr-e2b budget --sandbox sbx1 --max-cost 7
  assert_success
  run cr-e2b status --sandbox sbx1
  assert_output_contains "gate      on, 2 tries; checks true"
  assert_output_contains " of \$7.00 (started with a \$5.00 cap)"
  run cr-e2b status --sandbox sbx1 --json
  run python3 -c 'import json, sys; s = json.loads(sys.argv[1]); print(s["gate_tries"], s["checks"], s["start_max_cost_usd"])' "$output"
  assert_output "2 ['true'] 5.0"
}

@test "status names the rule each denial of the last turn hit, and the --allow that would permit it" {
  printf 'What do the tests say?\nSTUB_DENY=npm test -- --watch\n' >q.md
  start_worker q.md
  wait_idle
  run cr-e2b status --sandbox sbx1
  assert_success
  assert_output_contains "denied    npm test -- --watch
          rule: in acceptEdits mode a Bash command runs only when an allow rule matches it, and none does; start --allow 'Bash(npm test:*)' would permit it"
  run cr-e2b status --sandbox sbx1 --json
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1])["last_turn"]["denied"]; print(d)' "$output"
  assert_output "[{'tool': 'Bash', 'input': 'npm test -- --watch', 'rule': 'in acceptEdits mode a Bash command runs only when an allow rule matches it, and none does', 'allow': ['Bash(npm test:*)']}]"
}

@test "a denial that a deny rule of --agent-args made names it, and no --allow" {
  printf 'Fetch it.\nSTUB_DENY=curl -s https://example.com/x\n' >q.md
  start_worker q.md --agent-args "--permission-mode acceptEdits --disallowedTools 'Bash(curl:*)'" --allow 'Bash(curl:*)'
  wait_idle
  run cr-e2b status --sandbox sbx1
  assert_output_contains "denied    curl -s https://example.com/x
          rule: the deny rule Bash(curl:*) (--agent-args) refuses it, whatever is allowed"
  refute_output_contains "would permit it"
}

@test "a denial of a command an allow rule of cr-e2b's matches names that rule, and the project's rules or a hook" {
  printf 'Push it.\nSTUB_DENY=git push origin main\n' >q.md
  start_worker q.md
  wait_idle
  run cr-e2b status --sandbox sbx1
  assert_output_contains "denied    git push origin main
          rule: Bash(git:*) allows it, so no rule of cr-e2b's refused it: a deny rule of the project's (.claude/settings.json) or a hook did"
}

@test "a denial's rule is found for each command of a compound one, a fetched host and an edit outside the clone" {
  run env PYTHONPATH="$ROOT" python3 -c 'import cr_e2b
flags = ["--permission-mode", "acceptEdits", "--allowedTools", "Bash(git:*)", "Bash(npm run build *)"]
for tool, target in (("Bash", "git add . && npm run build && make check 2>&1 | tail -n 3"),
                     ("WebFetch", "https://docs.example.com/a"), ("Write", "/etc/hosts"),
                     ("mcp__github__create_issue", "{}")):
    print(cr_e2b.explain_denial({"tool": tool, "input": target}, flags))
print(cr_e2b.explain_denial({"tool": "Bash", "input": "ls"}, ["--dangerously-skip-permissions"]))'
  assert_success
  assert_output <<'OUT'
("in acceptEdits mode a Bash command runs only when an allow rule matches it, and none does (none matches 'make check')", ['Bash(make check:*)', 'Bash(tail:*)'])
('in acceptEdits mode WebFetch runs only when an allow rule matches it, and none does', ['WebFetch(domain:docs.example.com)'])
('in acceptEdits mode a file edit outside the working directory runs only when an allow rule matches it, and none does', ['Edit(//etc/hosts)'])
('in acceptEdits mode mcp__github__create_issue runs only when an allow rule matches it, and none does', ['mcp__github__create_issue'])
("no rule of cr-e2b's refused it: a deny rule of the project's (.claude/settings.json) or a hook did", [])
OUT
}

@test "status after 1000 turns brings at most 16 KB and still counts every turn and denial" {
  with_turns 1000
  [ "$(wc -c <"$(sandbox_home)/.cr/turns.jsonl")" -gt 2800000 ]
  run cr-e2b status --sandbox sbx1
  assert_success
  assert_output_contains "last turn 1000 ok (Claude Code exit 0): turn 1000 done"
  assert_output_contains 'spent     $5005.0000 (no cap)'
  assert_output_contains "denials   100"
  run cr-e2b status --sandbox sbx1 --json
  run python3 -c 'import json,sys; print(json.loads(sys.argv[1])["turns"])' "$output"
  assert_output 1000
  rm "$FAKE_E2B_DIR/calls.jsonl"
  cr-e2b status --sandbox sbx1 >/dev/null
  [ "$(bytes_down)" -le 16384 ]
}

@test "status, list and wait --help name every field their --json gives, a turn's and the verdict's included" {
  delivering_brief delivers.md
  start_worker delivers.md
  wait_idle
  check_fields() { # VERB JSON_OPTIONS...: a turn's fields are named in status --help
    local help
    help=$({ cr-e2b "$1" --help; cr-e2b status --help; } | tr -s ' \n' ' ')
    cr-e2b "$@" --json | python3 -c 'import json, sys
d = json.load(sys.stdin)
def keys(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from keys(x)
    elif isinstance(v, list):
        for x in v:
            yield from keys(x)
print("\n".join(sorted(set(keys(d)))))' | while read -r key; do
      [[ "$help" == *"$key"* ]] || { echo "cr-e2b $1 --help does not name $key" >&2; return 1; }
    done
  }
  check_fields status --sandbox sbx1 --turns
  check_fields list
  check_fields wait --sandbox sbx1
}
