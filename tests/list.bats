#!/usr/bin/env bats
# `cr-e2b list`: every worker's state on one screen, once or --watch, --state,
# --markdown and --pause-settled.

load test_helper

make_worker_sandbox() { # profile repo
  python3 -c 'import sys, e2b; print(e2b.Sandbox.create(timeout=3600, metadata={"cr-e2b": "1", "profile": sys.argv[1], "repo": sys.argv[2], "session": "s"}).sandbox_id)' "$1" "$2" >"$TEST_DIR/made"
  install_runner "$(cat "$TEST_DIR/made")"
  sleep 0.01
}

# One more turn of the last fleet_worker, ended as given:
#   later_turn N FIRST_LINE LAST_LINE [IS_ERROR]
later_turn() {
  local home queued
  home=$(sandbox_home "$made")
  queued=$(printf %06d "$1")
  echo "$2" >"$home/.cr/queue/$queued.md"
  : >"$home/.cr/queue/$queued.ended"
  cat >>"$home/.cr/turns.jsonl" <<EOF
{"turn":$1,"event":"queued","at":"2026-11-29T11:00:00Z","prompt":"queue/$queued.md","first_line":"$2"}
{"turn":$1,"event":"started","at":"2026-11-29T11:00:01Z","try":1,"flag":"--resume","log_at":0}
{"turn":$1,"event":"result","result":{"type":"result","is_error":${4:-false},"result":"$3","total_cost_usd":0.5,"permission_denials":[]}}
{"turn":$1,"event":"ended","at":"2026-11-29T11:00:09Z","exit":0,"is_error":${4:-false},"denials":0,"reason":null,"log_end":0}
EOF
}

# The rows, with each sandbox's time left as N, the test's directory T and READY_SHA S.
rows() {
  printf '%s\n' "${lines[@]}" | sed -E 's/[0-9]+m[0-9]{2}s left/N left/' |
    sed "s|$TEST_DIR|T|g; s|${READY_SHA:-none}|S|g; s|${READY_SHA:0:7}|S|g"
}

a_fleet() {
  fleet_repo
  ready_worker
  fleet_worker blocked 0 false "EPIC wc-2 BLOCKED needs the staging key"
  fleet_worker idle 0 false "WORKER idle READY"
  fleet_worker failed 1 true "API Error: 500"
  fleet_worker stalled 143 null "" "stalled: no output for 900 s"
  fleet_worker undelivered 0 false "EPIC wc-3 READY 4b825dc642cb https://github.com/you/app/pull/8" "" "git push origin claude/wc-3"
  fleet_worker running 0 false "WORKER running READY"
  running_turn
  fleet_worker dead 0 false "WORKER dead READY"
  echo again >"$(sandbox_home "$made")/.cr/queue/000002.md"
  fleet_worker setup 0 false "WORKER setup READY"
  echo clone >"$(sandbox_home "$made")/.cr/setup-failed"
  fleet_worker paused 0 false "WORKER paused READY"
  pause_sandbox "$made"
  fleet_worker silent 0 false "WORKER silent READY"
  printf 'import time\ntime.sleep(30)\n' >"$(sandbox_home "$made")/.cr/cr_e2b.py"
  fleet_worker unverified 0 false "EPIC wc-4 READY 4b825dc642cb https://github.com/you/app/pull/9"
  fleet_worker rejected 0 false "EPIC wc-5 READY 4b825dc642cb https://github.com/you/app/pull/10" "" "" \
    "$(verdict ready false "claude/wc-5 is not on origin: push it" "check \`npm test\` failed (exit 1 after 3 s): 1 failing")"
  fleet_worker silence 0 false "WORKER silence READY" "" "" "$(verdict none false)"
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
}

assert_output_rows() {
  output=$(cat)
  assert_output <<'OUT'
sbx14  silence      -  1 turn   $0.50  N left  no verdict: WORKER silence READY
sbx13  rejected     -  1 turn   $0.50  N left  undelivered: claude/wc-5 is not on origin: push it (and 1 more reason)
sbx12  unverified   -  1 turn   $0.50  N left  undelivered: claude/wc-4 is not on T/origin
sbx11  silent       -  -        -      N left  unreachable: no answer in 2 s
sbx10  paused       -  -        -      N left  paused: not looked at from here yet
sbx9   setup        -  1 turn   $0.50  N left  setup failed: at step clone: nothing will run
sbx8   dead         -  1 turn   $0.50  N left  dead runner: turns are queued but no runner is alive (a brief restarts it)
sbx7   running      -  2 turns  $0.50  N left  running: turn 2 for 12m, last output 2m ago
sbx6   undelivered  -  1 turn   $0.50  N left  undelivered: denied git push origin claude/wc-3
sbx5   stalled      -  1 turn   $0.50  N left  stalled: no output for 900 s · done
sbx4   failed       -  1 turn   $0.50  N left  failed: API Error: 500
sbx3   idle         -  1 turn   $0.50  N left  idle
sbx2   blocked      -  1 turn   $0.50  N left  BLOCKED: needs the staging key
sbx1   ready        -  1 turn   $0.50  N left  READY certified: claude/wc-1 at S on T/origin https://github.com/you/app/pull/7
OUT
}

assert_output_lines() { output=$(cat); assert_output "$1"; }

sandbox_is() { [ "$(sandbox_state "$2")" = "$1" ]; }  # STATE ID

# The end of sbx1's life, as e2b's info gives it.
end_at() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end_at"])' "$FAKE_E2B_DIR/sandboxes/${1:-sbx1}/info.json"; }

@test "list shows every sandbox cr-e2b made, newest first, and no other" {
  make_worker_sandbox backend https://h/app.git
  python3 -c 'import e2b; e2b.Sandbox.create(timeout=60, metadata={"owner": "someone else"})'
  make_worker_sandbox docs https://h/app.git
  make_worker_sandbox frontend https://h/web.git
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b list
  assert_success
  output=$(printf '%s\n' "${lines[@]}" | sed -E 's/ [0-9]+m[0-9]{2}s left / N left /')
  assert_output <<'OUT'
sbx4  frontend  -  0 turns  $0.00  N left  idle
sbx3  docs      -  0 turns  $0.00  N left  idle
sbx1  backend   -  0 turns  $0.00  N left  idle
OUT
  run bash -c "grep -o '\"call\": \"[^\"]*\"' '$FAKE_E2B_DIR/calls.jsonl' | sort | uniq -c | tr -s ' '"
  assert_output " 3 \"call\": \"Sandbox.connect\"
 2 \"call\": \"Sandbox.list\"
 3 \"call\": \"commands.run\""
}

@test "list --json gives one document with a row per sandbox" {
  make_worker_sandbox backend https://h/app.git
  run cr-e2b list --json
  assert_success
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(sorted(d["sandboxes"][0]))' "$output"
  assert_output "['branch', 'certified', 'end_at', 'epics', 'exit_code', 'idle_seconds', 'inherited_usd', 'limited_until', 'max_cost_usd', 'owner', 'pr_url', 'profile', 'queued', 'reason', 'repo', 'running_seconds', 'sandbox_id', 'seconds_left', 'session_cost_usd', 'settled', 'spent_usd', 'started_at', 'state', 'turn', 'turns', 'work_at_risk', 'work_left', 'worker_state']"
}

@test "list with no workers prints nothing and succeeds" {
  run cr-e2b list
  assert_success
  assert_output ""
}

@test "on a terminal list has a header, or says there is no worker; wait and kill say they are done" {
  run script -qec "cr-e2b list" /dev/null
  assert_output_contains "no worker is running or paused (cr-e2b start makes one)"
  delivering_brief delivers.md
  start_worker delivers.md
  wait_idle
  run script -qec "cr-e2b list" /dev/null
  assert_output_contains "SANDBOX  PROFILE  BRANCH             TURNS    SPENT  LEFT         STATE"
  assert_output_contains "1 worker: \$0.10 spent with no caps, 0 over budget"
  run script -qec "cr-e2b wait --sandbox sbx1" /dev/null
  assert_output_contains "turn 2 READY certified: claude/wc-3-count at "
  run script -qec "cr-e2b kill --sandbox sbx1" /dev/null
  assert_output_contains "killed sandbox sbx1"
  run cr-e2b list
  assert_output ""
}

@test "list shows each worker's state in words, with its reason, newest first" {
  a_fleet
  export CR_E2B_PEEK_SECONDS=2
  run cr-e2b list
  assert_success
  rows | assert_output_rows
}

@test "on a terminal the workers that need a person come first, under a header" {
  a_fleet
  export CR_E2B_PEEK_SECONDS=2
  run script -qec "cr-e2b list --profile ready --profile blocked --profile stalled --profile idle" /dev/null
  output=$(rows | tr -d '\r')
  assert_output <<'OUT'
SANDBOX  PROFILE  BRANCH  TURNS   SPENT  LEFT         STATE
sbx2     blocked  -       1 turn  $0.50  N left  BLOCKED: needs the staging key
sbx5     stalled  -       1 turn  $0.50  N left  stalled: no output for 900 s · done
sbx3     idle     -       1 turn  $0.50  N left  idle
sbx1     ready    -       1 turn  $0.50  N left  READY certified: claude/wc-1 at S on T/origin https://github.com/you/app/pull/7
4 workers: $2.00 spent with no caps, 0 over budget
OUT
}

@test "list never resumes a paused worker to peek it, and peeks the others in one wave" {
  a_fleet
  export CR_E2B_PEEK_SECONDS=2
  run cr-e2b list --json
  assert_success
  [ "$(sandbox_state sbx10)" = paused ]
  run call_field Sandbox.connect sandbox_id
  refute_output_contains sbx10
  [ "${#lines[@]}" -eq 13 ]
}

@test "list --json gives every worker's state, reason, pull request and figures" {
  a_fleet
  export CR_E2B_PEEK_SECONDS=2
  run cr-e2b list --json --profile ready --profile running
  run python3 -c 'import json,sys
for r in json.loads(sys.argv[1])["sandboxes"]:
    print(r["sandbox_id"], r["state"], r["worker_state"], r["pr_url"], r["turns"], r["session_cost_usd"], r["turn"], r["running_seconds"] // 60 if r["running_seconds"] else None, r["exit_code"])' "$output"
  assert_output <<'OUT'
sbx7 running running None 2 0.5 2 12 0
sbx1 running READY https://github.com/you/app/pull/7 1 0.5 None None 0
OUT
}

@test "a worker whose turns fail on a key the model API refused names the key to check" {
  fleet_worker backend 1 true "Invalid API key · Please run /login"
  sed -i 's/"is_error":true,"result"/"is_error":true,"api_error_status":401,"result"/' "$(sandbox_home "$made")/.cr/turns.jsonl"
  run cr-e2b list
  assert_output_contains "failed: Invalid API key · Please run /login · the model API refused the worker's key (401): check ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN (cr-e2b doctor asks it)"
}

@test "a turn ended by --turn-limit is over limit, not stalled, in list and wait, and wait exits 4" {
  fleet_worker overran 143 null "" "over its limit of 16 s"
  run cr-e2b list
  assert_output_contains "over limit: over its limit of 16 s · done"
  run --separate-stderr cr-e2b wait --sandbox sbx1 --json
  assert_failure 4
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["outcome"], d["last_turn"]["state"])' "$output"
  assert_output "over-limit over-limit"
}

@test "questions after an undelivered EPIC turn leave list and wait on its outcome, and list names the unpushed work until it is out" {
  fleet_worker backend 0 false "EPIC wc-3 READY 4b825dc642cb https://github.com/you/app/pull/8" "" "git push origin claude/wc-3"
  make_repo
  git clone -q "$REPO" "$(sandbox_home sbx1)/repo"
  git -C "$(sandbox_home sbx1)/repo" checkout -q -b claude/wc-3
  git -C "$(sandbox_home sbx1)/repo" commit -q --allow-empty -m count
  for n in 2 3 4; do later_turn "$n" "what is left to do?" "nothing"; done
  run cr-e2b list
  rows | assert_output_lines "sbx1  backend  claude/wc-3  4 turns  \$0.50  N left  undelivered: denied git push origin claude/wc-3 · 1 unpushed commit"
  run --separate-stderr cr-e2b wait sbx1
  assert_failure 8
  [ "$stderr" = "cr-e2b: turn 1 ended but its work was not delivered: denied git push origin claude/wc-3 (see: cr-e2b diff --sandbox sbx1)" ]
  later_turn 5 "EPIC wc-3: branch claude/wc-3, scope ., grants -" "EPIC wc-3 BLOCKED needs the staging key"
  later_turn 6 "why?" "the key"
  run cr-e2b list
  assert_output_contains "  BLOCKED: needs the staging key · 1 unpushed commit"
  git -C "$(sandbox_home sbx1)/repo" push -q origin claude/wc-3
  run cr-e2b list
  [[ "$output" == *"  BLOCKED: needs the staging key" ]]
  later_turn 7 "and now?" "API Error: 500" true
  run cr-e2b wait sbx1
  assert_failure 4  # a failed question shows
}

@test "list shows the state of every worker that answers, however many never do" {
  fleet_repo
  python3 -c 'import sys, e2b
for _ in range(40):
    e2b.Sandbox.create(timeout=3600, metadata={"cr-e2b": "1", "profile": "w", "repo": sys.argv[1], "session": "s"})' "$FLEET_REPO"
  # the 33 e2b lists first never answer: more than list peeks at once, ahead of the 7 that do
  mapfile -t listed < <(python3 -c 'import e2b
pages = e2b.Sandbox.list()
while pages.has_next:
    for info in pages.next_items(): print(info.sandbox_id)')
  for sandbox in "${listed[@]:0:33}"; do : >"$FAKE_E2B_DIR/sandboxes/$sandbox/silent"; done
  for sandbox in "${listed[@]:33}"; do FLEET_SANDBOX=$sandbox fleet_worker w 0 false "WORKER w READY"; done
  export CR_E2B_PEEK_SECONDS=1
  run cr-e2b list
  assert_success
  shown=$output
  run grep -c '  idle$' <<<"$shown"
  assert_output 7
  run grep -c '  unreachable: no answer in 1 s$' <<<"$shown"
  assert_output 33
}

@test "each peek that does not answer is cut off at its own deadline, a late answer changes nothing, and a hung one is not started again" {
  # the calls that never answer hold every slot first: the others wait for one, and still answer
  run env PYTHONPATH="$ROOT" python3 -c 'import threading, time, cr_e2b
release = threading.Event()
def slow(i):
    release.wait(10)
    return f"late {i}"
began = time.monotonic()
calls = [lambda i=i: slow(i) for i in range(33)] + [lambda i=i: f"fast {i}" for i in range(7)]
answers = cr_e2b.in_parallel(calls, limit=32, timeout=1)
took = time.monotonic() - began
print(took < 8, sum(isinstance(a, TimeoutError) for a in answers), answers[33:35])  # not the 10 s
release.set(); time.sleep(0.3)
print(sum(isinstance(a, TimeoutError) for a in answers))'
  assert_output "True 33 ['fast 0', 'fast 1']
33"
  fleet_worker silent 0 false "WORKER silent READY"
  printf 'import time\ntime.sleep(8)\n' >"$(sandbox_home "$made")/.cr/cr_e2b.py"
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
  run env PYTHONPATH="$ROOT:$FIXTURES" CR_E2B_PEEK_SECONDS=1 python3 -c 'import cr_e2b
service = cr_e2b.Service()
infos = service.workers()
for _ in range(3):
    print(cr_e2b.peek_workers(service, infos, cr_e2b.Remotes())[0]["reason"])'
  assert_output "no answer in 1 s
no answer yet to an earlier look
no answer yet to an earlier look"
  run call_field Sandbox.connect sandbox_id
  [ "${#lines[@]}" -eq 1 ]
}

@test "list --state picks workers by state, in any case" {
  a_fleet
  export CR_E2B_PEEK_SECONDS=2
  run cr-e2b list --state blocked --state READY
  rows | cut -d' ' -f1 | assert_output_lines "sbx2
sbx1"
}

@test "list --state of no such state is a usage error naming the states; one that matches nothing says so" {
  a_fleet
  export CR_E2B_PEEK_SECONDS=2
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
  run --separate-stderr cr-e2b list --state bogus
  assert_failure 2
  assert_one_error_line
  assert_output_contains "cr-e2b: argument --state: not a worker's state: 'bogus' (one of: over budget, BLOCKED, "
  assert_output_contains ", READY, idle, cancelled, unconfirmed, paused, unreachable)"
  no_sdk_calls
  run --separate-stderr cr-e2b list --state over-budget --profile blocked
  assert_success
  assert_output ""
  [ "$stderr" = "cr-e2b: warning: no worker matches --profile blocked --state 'over budget'" ]
}

@test "list --markdown is the morning's report: a table worst first, links to the pull requests, the totals, nothing that breaks it" {
  github_repo
  github_api
  git -C "$TEST_DIR/src" checkout -q -b claude/wc-1
  git -C "$TEST_DIR/src" commit -q --allow-empty -m wc-1
  git -C "$TEST_DIR/src" push -q "$TEST_DIR/origin.git" claude/wc-1
  sha=$(git -C "$TEST_DIR/src" rev-parse HEAD)
  github_pulls "[$(pull 7 claude/wc-1 "$sha" OPEN main false SUCCESS:test)]"
  export FLEET_REPO=https://github.com/acme/demo.git
  fleet_worker docs 0 false 'EPIC wc-2 BLOCKED the key | <b>staging</b> [x](http://evil)'
  fleet_worker web 0 false "EPIC wc-1 READY $sha https://github.com/acme/demo/pull/7" "" "" "$(verdict ready true)"
  run bash -c 'cr-e2b list --markdown | sed -E "s/[0-9]+m[0-9]{2}s left/N left/"'
  assert_success
  assert_output <<OUT
| worker | profile | pull request | checks | spent | left | needs a person |
| --- | --- | --- | --- | --- | --- | --- |
| \`sbx1\` | docs | - | - | \$0.50 | N left | BLOCKED the key \\| \\<b\\>staging\\</b\\> \\[x\\]\\(http://evil\\) |
| \`sbx2\` | web | [#7](https://github.com/acme/demo/pull/7) | green | \$0.50 | N left | - |

2 workers: \$1.00 spent with no caps, 0 over budget
OUT
}

@test "list --watch, piped, prints a line per change of a worker's state and stops when all are idle" {
  delivering_brief slow.md
  echo STUB_SLEEP=2 >>slow.md
  start_worker slow.md
  run cr-e2b list --watch --interval 0.2 --until-idle
  assert_success
  # between two turns a look may catch the worker starting the next one, then running it
  output=$(printf '%s\n' "${lines[@]}" | grep -v '  starting' |
    sed -E 's/^[0-9]{2}:[0-9]{2}:[0-9]{2}  //; s/running: turn [0-9]+.*/running: turn N/' | uniq)
  assert_output "sbx1  backend  running: turn N
sbx1  backend  READY certified: claude/wc-3-count at $(git -C "$TEST_DIR/origin.git" rev-parse --short=7 claude/wc-3-count) on $TEST_DIR/origin https://git.example.com/you/app/pull/1"
}

@test "list --watch --until-idle exits with the code wait would give for the worst worker" {
  fleet_repo
  ready_worker
  fleet_worker blocked 0 false "EPIC wc-2 BLOCKED needs the staging key"
  run cr-e2b list --watch --until-idle --interval 0.1
  assert_failure 5
  fleet_worker undelivered 0 false "EPIC wc-3 READY x" "" "git push origin claude/wc-3"
  run cr-e2b list --watch --until-idle --interval 0.1
  assert_failure 8
  fleet_worker failed 1 true "API Error: 500"
  run cr-e2b list --watch --until-idle --interval 0.1
  assert_failure 4
}

@test "--until-idle without --watch is refused" {
  run --separate-stderr cr-e2b list --until-idle
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: --until-idle goes with --watch"
}

@test "list --watch rides out a network outage, as wait does" {
  export FAKE_E2B_FAIL=api-network:2
  run --separate-stderr cr-e2b list --watch --until-idle --interval 0.1
  assert_success
  [[ "$stderr" == "cr-e2b: warning: lost touch with e2b (cannot reach e2b (network): [Errno 111] Connection refused); retrying for up to 120 s"* ]]
  [[ "$stderr" == *"cr-e2b: warning: back in touch with e2b after "* ]]
}

@test "list --watch calls a worker a dead runner only when two looks in a row say so" {
  fleet_worker dead 0 false "WORKER dead READY"
  echo again >"$(sandbox_home "$made")/.cr/queue/000002.md"
  run cr-e2b list --watch --until-idle --interval 0.1
  assert_failure 1
  output=$(printf '%s\n' "${lines[@]}" | sed -E 's/^[0-9:]{8}  //')
  assert_output "sbx1  dead  starting: turns are queued and no runner is alive yet; looking again
sbx1  dead  dead runner: turns are queued but no runner is alive (a brief restarts it)"
}

@test "list --watch --pause-settled pauses a settled worker once it has been idle that long, not before, keeping its time left" {
  fleet_worker blocked 0 false "EPIC wc-2 BLOCKED needs the staging key"
  before=$(end_at)
  cr-e2b list --watch --until-idle --interval 0.2 --pause-settled 3 >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
  eventually "a first look" test -s "$TEST_DIR/out"
  sleep 1
  [ "$(sandbox_state sbx1)" = running ]
  status=0
  wait "$pid" || status=$?
  assert_failure 5  # --until-idle: the outcome it was paused for
  [ "$(sandbox_state sbx1)" = paused ]
  [ "$(end_at)" = "$before" ]
  run cat "$TEST_DIR/err"
  assert_output "cr-e2b: warning: sandbox sbx1 paused: settled (BLOCKED) and idle for 3 s; its time left kept, a brief resumes it"
  run sed -E 's/^[0-9:]{8}  //' "$TEST_DIR/out"
  assert_output "sbx1  blocked  BLOCKED: needs the staging key
sbx1  blocked  paused: BLOCKED: needs the staging key"
  run cr-e2b brief sbx1 --brief brief.md
  assert_success
  [ "$(sandbox_state sbx1)" = running ]
}

@test "--pause-settled leaves running a worker with a queued brief or a running turn, a READY whose pull request is not green yet, and a colleague's" {
  github_repo
  github_api
  for n in 1 2; do
    git -C "$TEST_DIR/src" checkout -q -b "claude/wc-$n" main
    git -C "$TEST_DIR/src" commit -q --allow-empty -m "wc-$n"
    git -C "$TEST_DIR/src" push -q "$TEST_DIR/origin.git" "claude/wc-$n"
    sha[n]=$(git -C "$TEST_DIR/src" rev-parse HEAD)
  done
  github_pulls "[$(pull 7 claude/wc-1 "${sha[1]}" OPEN main false PENDING "$(date -u +%Y-%m-%dT%H:%M:%SZ)"), $(pull 8 claude/wc-2 "${sha[2]}" OPEN main false SUCCESS)]"
  FLEET_REPO=https://github.com/acme/demo.git
  fleet_worker green 0 false "EPIC wc-2 READY ${sha[2]} https://github.com/acme/demo/pull/8"
  fleet_worker pending 0 false "EPIC wc-1 READY ${sha[1]} https://github.com/acme/demo/pull/7"
  fleet_worker running 0 false "EPIC wc-3 BLOCKED needs the staging key"
  running_turn
  fleet_worker queued 0 false "EPIC wc-3 BLOCKED needs the staging key"
  echo next >"$(sandbox_home "$made")/.cr/queue/000002.md"
  bash -c 'exec -a drain sleep 60' &
  echo $! >"$(sandbox_home "$made")/.cr/runner.pid"
  FLEET_OWNER=colleague@example.com fleet_worker theirs 0 false "EPIC wc-3 BLOCKED needs the staging key"
  cr-e2b list --watch --interval 0.2 --pause-settled 1 >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
  eventually "sbx1 paused" sandbox_is paused sbx1
  # the looks go on: the others, all seen as long as sbx1, are due with it or never
  sleep 1
  kill "$pid"  # its exit is not what this test is about
  wait "$pid" || true
  run cat "$TEST_DIR/err"
  assert_output "cr-e2b: warning: sandbox sbx1 paused: settled (READY) and idle for 1 s; its time left kept, a brief resumes it"
  for sandbox in sbx2 sbx3 sbx4 sbx5; do
    [ "$(sandbox_state "$sandbox")" = running ]
  done
}

@test "a settled worker e2b will not pause is tried three looks in all, then left running, and the watch ends" {
  fleet_worker blocked 0 false "EPIC wc-2 BLOCKED needs the staging key"
  FAKE_E2B_FAIL=pause-refused run --separate-stderr timeout 20 cr-e2b list --watch --until-idle --interval 0.2 --pause-settled 0
  assert_failure 5
  [ "${#stderr_lines[@]}" -eq 3 ]
  [ "${stderr_lines[2]}" = "cr-e2b: warning: sandbox sbx1 is settled (BLOCKED) but could not be paused: sandbox sbx1: failed to pause sandbox sbx1; after 3 tries it is left running" ]
  [ "$(sandbox_state sbx1)" = running ]
}
