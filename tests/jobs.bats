#!/usr/bin/env bats
# The README's GitHub Actions workflow: what its jobs declare, read from its
# YAML, and what their steps' scripts do, run for real (as GitHub runs them,
# `bash -e`) against a stub cr-e2b.

load test_helper

# Runs the Python on stdin with the README's workflow in hand: `w` (its `on`
# under "on"), `jobs`, `step(job, name)`, and `commands(job, verb)`, each
# cr-e2b command of that verb in the job's scripts as a list of words.
in_workflow() {
  python3 -c 'import re, shlex, sys, yaml
text = open(sys.argv[1], encoding="utf-8").read()
section = text[text.index("## Running it from GitHub Actions"):]
w = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))
w["on"] = w.pop(True, w.get("on"))  # YAML 1.1 reads the key on as true
jobs = w["jobs"]
def step(job, name):
    return next(s for s in jobs[job]["steps"] if s.get("name") == name)
def commands(job, verb):
    script = "\n".join(s.get("run", "") for s in jobs[job]["steps"]).replace("\\\n", " ")
    return [shlex.split(line[line.index("cr-e2b " + verb):], comments=True)
            for line in script.splitlines() if "cr-e2b " + verb + " " in line]
def option(words, name):
    return words[words.index(name) + 1] if name in words else None
exec(sys.stdin.read())' "$ROOT/README.md"
}

# A cr-e2b that records each call in $TEST_DIR/calls-made and answers as a
# worker would: start --json prints the sandbox id; a brief named bad.md is
# refused; one named queued.md waits for a slot, which a list --mine
# --watch --until-idle --pause-settled frees (at most 10 s); wait exits $STUB_WAIT_EXIT.
stub_cr_e2b() {
  cat >"$TEST_DIR/bin/cr-e2b" <<'SH'
#!/usr/bin/env bash
printf '%s\n' "$*" >>"$STUB_DIR/calls-made"
case $1 in
  start)
    while [ $# -gt 0 ] && [ "$1" != --brief ]; do shift; done
    cp "$2" "$STUB_DIR/brief-seen"
    case $2 in
      *bad.md) echo "cr-e2b: the brief's first line is not 'EPIC <id>: branch ...'" >&2; exit 2 ;;
      *queued.md) for _ in $(seq 200); do [ -e "$STUB_DIR/slot-freed" ] && break; "$STUB_DIR/sys/sleep" 0.05; done
        [ -e "$STUB_DIR/slot-freed" ] || { echo "cr-e2b: no sandbox slot freed" >&2; exit 7; } ;;
    esac
    [[ " $* " == *" --json "* ]] && echo '{"sandbox_id": "sbx1", "session_id": "9b30a883"}'
    echo "start of $2 returned" >>"$STUB_DIR/calls-made" ;;
  list)
    [[ " $* " == *" --mine --watch --until-idle --pause-settled "* ]] && touch "$STUB_DIR/slot-freed" ;;
  wait) exit "${STUB_WAIT_EXIT:-0}" ;;
esac
exit 0
SH
  # jq as a runner has it, for the one question the jobs ask of it
  cat >"$TEST_DIR/bin/jq" <<'SH'
#!/bin/sh
[ "$1 $2" = "-r .sandbox_id" ] || exit 3
exec python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sandbox_id"])' "$3"
SH
  # the fleet's loop sleeps between its looks: not for long here
  printf '#!/bin/sh\nexec "%s/sys/sleep" 0.05\n' "$TEST_DIR" >"$TEST_DIR/bin/sleep"
  chmod +x "$TEST_DIR/bin/cr-e2b" "$TEST_DIR/bin/jq" "$TEST_DIR/bin/sleep"
  export STUB_DIR="$TEST_DIR" GITHUB_ENV="$TEST_DIR/github-env"
  : >"$GITHUB_ENV"
}

# Runs a step's script as GitHub does: run_step JOB STEP-NAME
run_step() {
  in_workflow <<PY >"$TEST_DIR/step.sh"
print(step("$1", "$2")["run"])
PY
  run --separate-stderr bash -e "$TEST_DIR/step.sh"
}

@test "the workflow's own token can only read the repository" {
  run in_workflow <<'PY'
print(w["permissions"])
print([name for name, job in jobs.items() if "permissions" in job])
PY
  assert_output "{'contents': 'read'}
[]"
}

@test "a label starts one worker, a dispatched brief one worker, and a dispatch without a brief the fleet alone" {
  # GitHub's expressions compare a missing value as '', and || and && as Python's or and and
  run in_workflow <<'PY'
def started(event, label=None, brief=None):
    values = {"github.event_name": event, "github.event.label.name": label, "inputs.brief": brief}
    def runs(condition):
        for name, value in values.items():
            condition = condition.replace(name, repr(value or ""))
        return eval(condition.replace("||", " or ").replace("&&", " and "))
    return [name for name, job in jobs.items() if runs(job["if"])]
print(sorted(w["on"]), w["on"]["issues"]["types"], w["on"]["workflow_dispatch"]["inputs"]["brief"]["required"])
print(started("issues", label="worker"), started("issues", label="bug"))
print(started("workflow_dispatch", brief="EPIC wc-3: branch claude/wc-3-x"), started("workflow_dispatch", brief=""))
PY
  assert_output "['issues', 'workflow_dispatch'] ['labeled'] False
['work'] []
['work'] ['fleet']"
}

@test "one worker runs per issue, and a relabel waits for it: the work job's concurrency group is the issue's" {
  run in_workflow <<'PY'
concurrency = jobs["work"]["concurrency"]
if not isinstance(concurrency, dict):
    concurrency = {"group": concurrency}
print("github.event.issue.number" in concurrency["group"], concurrency.get("cancel-in-progress", False))
PY
  assert_output "True False"
}

@test "the jobs start workers on the repository's own checkout, so its control-room.json holds their checks" {
  run in_workflow <<'PY'
for name, job in jobs.items():
    first = job["steps"][0]
    print(name, first["uses"].split("@")[0], first.get("with", {}).get("repository"))
    print(name, [w for start in commands(name, "start") for w in start if w in ("--check", "--setup", "--max-cost")])
PY
  assert_output "work actions/checkout None
work []
fleet actions/checkout None
fleet []"
}

@test "every worker keeps its keys out of the sandbox, which reaches only the hosts named" {
  run in_workflow <<'PY'
for name in jobs:
    for start in commands(name, "start"):
        print(name, option(start, "--secrets"), option(start, "--allow-out") is not None, "--no-internet" in start)
PY
  assert_output "work edge True False
fleet edge True False"
}

@test "no step's script interpolates an expression: the issue's text reaches it only through the environment" {
  run in_workflow <<'PY'
print([s.get("name") for job in jobs.values() for s in job["steps"] if "${{" in s.get("run", "")])
print(sorted(k for k, v in jobs["work"]["env"].items() if "issue" in v))
PY
  assert_output "[]
['ISSUE', 'ISSUE_BODY', 'ISSUE_TITLE']"
}

@test "what is not delivered is saved and uploaded on failure and on cancel, a timeout's included" {
  run in_workflow <<'PY'
for name, job in jobs.items():
    for s in job["steps"]:
        if "--save" in s.get("run", "") or "upload-artifact" in s.get("uses", ""):
            print(name, s.get("name") or s["uses"].split("@")[0], "failure()" in s["if"], "cancelled()" in s["if"])
PY
  assert_output "work Keep undelivered work True True
work actions/upload-artifact True True
fleet Keep undelivered work True True
fleet actions/upload-artifact True True"
}

@test "the jobs' times fit e2b's Hobby plan and GitHub's: each wait ends before its sandboxes, and the job after" {
  # Hobby: a sandbox lives at most an hour; a GitHub-hosted job runs at most 6 h
  run in_workflow <<'PY'
for name, job in jobs.items():
    lifetimes = {int(option(s, "--timeout")) for s in commands(name, "start")}
    queued = max(int(option(s, "--queue") or 0) for s in commands(name, "start"))
    waits = [int(option(s, "--timeout")) for s in commands(name, "wait")]
    print(name, lifetimes, max(waits[-1:]) < min(lifetimes), queued + waits[-1] < job["timeout-minutes"] * 60 <= 6 * 3600)
PY
  assert_output "work {3600} True True
fleet {3600} True True"
}

@test "a failed start fails its step with start's own error, and nothing reads its empty output" {
  stub_cr_e2b
  export ISSUE_BODY="Count the words." ISSUE=7 ISSUE_TITLE="Count words" BRIEF_INPUT=
  printf '#!/bin/sh\necho "cr-e2b: step clone failed" >&2\nexit 1\n' >"$TEST_DIR/bin/cr-e2b"
  run_step work "Start the worker"
  assert_failure 1
  [ "$stderr" = "cr-e2b: step clone failed" ]
  [ ! -s "$GITHUB_ENV" ]
}

@test "an issue's worker gets the issue as its brief, byte for byte, and its id passes to the next steps" {
  stub_cr_e2b
  export ISSUE=7 ISSUE_TITLE="Count words: \$(touch pwned) 'quoted'" BRIEF_INPUT=
  export ISSUE_BODY=$'Split on "any" whitespace;\n`rm -rf /` is text, and so is $HOME.'
  run_step work "Start the worker"
  assert_success
  run cat "$TEST_DIR/brief-seen"
  assert_output <<'OUT'
EPIC issue-7: branch claude/issue-7-count-words-touch-pwned-quoted, scope ., grants -
Count words: $(touch pwned) 'quoted'

Split on "any" whitespace;
`rm -rf /` is text, and so is $HOME.
OUT
  [ ! -e pwned ]
  run cat "$GITHUB_ENV"
  assert_output "SANDBOX=sbx1"
}

@test "a worker whose READY is certified is killed at once; any other ending leaves it to the saving step" {
  stub_cr_e2b
  export SANDBOX=sbx1
  run_step work "Wait for its READY, then end it"
  assert_success
  run tail -n 1 "$TEST_DIR/calls-made"
  assert_output "kill --sandbox sbx1 --force"
  rm "$TEST_DIR/calls-made"
  STUB_WAIT_EXIT=5 run_step work "Wait for its READY, then end it"
  assert_failure 5
  run grep -c '^kill' "$TEST_DIR/calls-made"
  assert_output 0
  run_step work "Keep undelivered work"
  run tail -n 1 "$TEST_DIR/calls-made"
  assert_output "kill --sandbox sbx1 --save saved"
}

@test "the fleet waits, pausing settled workers, while a start queues for a slot, then waits for every worker it started" {
  stub_cr_e2b
  mkdir briefs
  for name in api queued docs; do cp brief.md "briefs/$name.md"; done
  run_step fleet "Start, wait for and end a worker per brief"
  assert_success
  # the queued start got its slot from a watch that pauses settled workers
  # (a list: it never resumes a paused worker to look at it, as a wait would)
  run grep -m 1 -n -- '^list --mine --watch --until-idle --pause-settled 300' "$TEST_DIR/calls-made"
  [ "${output%%:*}" -lt "$(grep -n 'start of briefs/queued.md returned' "$TEST_DIR/calls-made" | cut -d: -f1)" ]
  # the last wait, which the job's result is, begins once every start has returned
  run grep -n -e 'start of briefs/queued.md returned' -e '--timeout 3000' "$TEST_DIR/calls-made"
  [ "${lines[0]#*:}" = "start of briefs/queued.md returned" ]
  [ "${lines[1]#*:}" = "wait --all --pause-settled 300 --timeout 3000" ]
  run tail -n 1 "$TEST_DIR/calls-made"
  assert_output "kill --all --force"
  run grep -c '^start .*--queue' "$TEST_DIR/calls-made"
  assert_output 3
}

@test "a fleet brief that does not start fails the job by name, after the others are waited for and ended" {
  stub_cr_e2b
  mkdir briefs
  for name in api bad docs; do cp brief.md "briefs/$name.md"; done
  run_step fleet "Start, wait for and end a worker per brief"
  assert_failure 1
  assert_output_contains "::error::not started: briefs/bad.md"
  [ "$stderr" = "cr-e2b: the brief's first line is not 'EPIC <id>: branch ...'" ]
  run tail -n 2 "$TEST_DIR/calls-made"
  assert_output "wait --all --pause-settled 300 --timeout 3000
kill --all --force"
}

@test "a fleet that is not all delivered keeps its workers for the saving step" {
  stub_cr_e2b
  mkdir briefs
  cp brief.md briefs/api.md
  STUB_WAIT_EXIT=8 run_step fleet "Start, wait for and end a worker per brief"
  assert_failure 8
  run grep -c '^kill' "$TEST_DIR/calls-made"
  assert_output 0
  run_step fleet "Keep undelivered work"
  run tail -n 1 "$TEST_DIR/calls-made"
  assert_output "kill --all --save saved"
}
