#!/usr/bin/env bats
# The GitHub Actions workflows in examples/: what their jobs declare, read from
# their YAML, and their steps' scripts run for real against a stub cr-e2b.

load test_helper

# Runs the Python on stdin once per workflow named (examples/NAME.yml), with
# it in hand: `name`, `text`, `w` (its `on` under "on"), `jobs`,
# `step(job, name)`, `commands(job, verb)` (each cr-e2b command of that verb
# in the job's scripts, as a list of words), `option(words, name)`, and
# `started(event=..., schedule=..., label=..., brief=...)`: the jobs whose
# `if` lets them run on that event.
in_workflow() {
  python3 -c 'import re, shlex, sys, yaml
code = sys.stdin.read()
def step(job, name):
    return next(s for s in jobs[job]["steps"] if s.get("name") == name)
def commands(job, verb):
    script = "\n".join(s.get("run", "") for s in jobs[job]["steps"]).replace("\\\n", " ")
    return [shlex.split(line[line.index("cr-e2b " + verb):], comments=True)
            for line in script.splitlines() if "cr-e2b " + verb + " " in line]
def option(words, name):
    return words[words.index(name) + 1] if name in words else None
# GitHub expressions compare a missing value as an empty string, and || and && as or and and
CONTEXT = {"github.event_name": "event", "github.event.schedule": "schedule",
           "github.event.label.name": "label", "inputs.brief": "brief"}
def started(**given):
    def runs(condition):
        for name, key in CONTEXT.items():
            condition = condition.replace(name, repr(given.get(key) or ""))
        return eval(condition.replace("||", " or ").replace("&&", " and "))
    return [job for job in jobs if runs(jobs[job]["if"])]
for name in sys.argv[2:]:
    text = open(f"{sys.argv[1]}/{name}.yml", encoding="utf-8").read()
    w = yaml.safe_load(text)
    w["on"] = w.pop(True, w.get("on"))  # YAML 1.1 reads the key on as true
    jobs = w["jobs"]
    exec(code)' "$ROOT/examples" "$@"
}

# A cr-e2b that records each call in $TEST_DIR/calls-made and answers as a
# worker would: start --json prints the sandbox id; a brief named bad.md is
# refused; one named slow.md takes 1.1 s; one named queued.md waits for a slot,
# which a supervise --mine --once ... --pause-settled frees (at most 10 s);
# list --markdown prints a table; wait exits $STUB_WAIT_EXIT; kill --save DIR
# leaves a log in DIR (in DIR/sbx1 with --all).
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
      *slow.md) "$STUB_DIR/sys/sleep" 1.1 ;;
      *queued.md) for _ in $(seq 200); do [ -e "$STUB_DIR/slot-freed" ] && break; "$STUB_DIR/sys/sleep" 0.05; done
        [ -e "$STUB_DIR/slot-freed" ] || { echo "cr-e2b: no sandbox slot freed" >&2; exit 7; } ;;
    esac
    [[ " $* " == *" --json "* ]] && echo '{"sandbox_id": "sbx1", "session_id": "9b30a883"}'
    echo "start of $2 returned" >>"$STUB_DIR/calls-made" ;;
  supervise)
    [[ " $* " == *" --mine --once "*" --pause-settled "* ]] && touch "$STUB_DIR/slot-freed" ;;
  list)
    [[ " $* " == *" --markdown "* ]] && printf '| worker | state |\n| --- | --- |\n| sbx1 | BLOCKED: which \\| table? |\n' ;;
  wait) exit "${STUB_WAIT_EXIT:-0}" ;;
  kill)
    saved=$(sed -n 's/.*--save \([^ ]*\).*/\1/p' <<<"$*")
    if [ -n "$saved" ]; then
      [[ " $* " == *" --all "* ]] && saved=$saved/sbx1
      mkdir -p "$saved" && echo "EPIC wc-3 BLOCKED which table?" >"$saved/log"
    fi ;;
esac
exit 0
SH
  # jq as a runner has it, for the one question the jobs ask of it
  cat >"$TEST_DIR/bin/jq" <<'SH'
#!/bin/sh
[ "$1 $2" = "-r .sandbox_id" ] || exit 3
exec python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sandbox_id"])' "$3"
SH
  # the evening's loop sleeps between its rounds: not for long here
  printf '#!/bin/sh\nexec "%s/sys/sleep" 0.05\n' "$TEST_DIR" >"$TEST_DIR/bin/sleep"
  chmod +x "$TEST_DIR/bin/cr-e2b" "$TEST_DIR/bin/jq" "$TEST_DIR/bin/sleep"
  export STUB_DIR="$TEST_DIR" GITHUB_ENV="$TEST_DIR/github-env" GITHUB_STEP_SUMMARY="$TEST_DIR/summary.md"
  : >"$GITHUB_ENV"
}

# Runs a step's script as GitHub does: run_step WORKFLOW JOB STEP-NAME
run_step() {
  in_workflow "$1" <<PY >"$TEST_DIR/step.sh"
print(step("$2", "$3")["run"])
PY
  run --separate-stderr bash -e "$TEST_DIR/step.sh"
}

# The briefs/ of a repository, one brief.md under each name given.
briefs() {
  mkdir briefs
  for name in "$@"; do cp brief.md "briefs/$name.md"; done
}

@test "the example GitHub Actions workflows parse as YAML and name only verbs and options that exist" {
  run python3 - "$ROOT"/examples/*.yml <<'PY'
import re, sys, yaml
for path in sys.argv[1:]:
    jobs = yaml.safe_load(open(path, encoding="utf-8"))["jobs"]
    steps = [step for each in jobs.values() for step in each["steps"]]
    script = "\n".join(step.get("run", "") for step in steps).replace("\\\n", " ")
    for verb, rest in re.findall(r"cr-e2b ([a-z]+) ([^\n|;]*)", script):
        print(verb, *[w.split("=")[0] for w in rest.split() if w.startswith("--")])
PY
  assert_success
  [ "${#lines[@]}" -ge 11 ]
  verbs_have_options "${lines[@]}"
}

@test "the workflows' own token can only read the repository" {
  run in_workflow worker night <<'PY'
print(name, w["permissions"], [job for job in jobs.values() if "permissions" in job])
PY
  assert_output "worker {'contents': 'read'} []
night {'contents': 'read'} []"
}

@test "a label starts one worker, and a dispatched brief one worker" {
  run in_workflow worker <<'PY'
print(sorted(w["on"]), w["on"]["issues"]["types"], w["on"]["workflow_dispatch"]["inputs"]["brief"]["required"])
print(started(event="issues", label="worker"), started(event="issues", label="bug"))
print(started(event="workflow_dispatch", brief="EPIC wc-3: branch claude/wc-3-x"))
PY
  assert_output "['issues', 'workflow_dispatch'] ['labeled'] True
['work'] []
['work']"
}

@test "one worker runs per issue, and a relabel waits for it: the work job's concurrency group is the issue's" {
  run in_workflow worker <<'PY'
concurrency = jobs["work"]["concurrency"]
if not isinstance(concurrency, dict):
    concurrency = {"group": concurrency}
print("github.event.issue.number" in concurrency["group"], concurrency.get("cancel-in-progress", False))
PY
  assert_output "True False"
}

@test "each of the night's jobs runs on its own trigger: the evening's cron or a dispatch, the night's ticks, the morning's cron" {
  run in_workflow night <<'PY'
for schedule in w["on"]["schedule"]:
    print(repr(schedule["cron"]), started(event="schedule", schedule=schedule["cron"]))
print(w["on"]["workflow_dispatch"], started(event="workflow_dispatch"))
PY
  assert_output "'0 20 * * 1-5' ['evening']
'5,20,35,50 0-6,20-23 * * *' ['night']
'0 7 * * 2-6' ['morning']
None ['evening']"
}

@test "a night's ticks come at most 15 minutes apart from its evening to its morning, and none in the hour after a morning" {
  # GitHub replaces a run waiting for the concurrency group with a newer one:
  # a tick due while the morning waits would cancel the morning
  run in_workflow night <<'PY'
import datetime
def matches(field, value):
    for part in field.split(","):
        span, _, step = part.partition("/")
        low, _, high = ("0-59" if span == "*" else span).partition("-")
        if int(low) <= value <= int(high or low) and (value - int(low)) % int(step or 1) == 0:
            return True
    return False
def fires(cron, t):
    values = (t.minute, t.hour, t.day, t.month, (t.weekday() + 1) % 7)  # cron's Sunday is 0
    return all(matches(field, value) for field, value in zip(cron.split(), values))
crons = {started(event="schedule", schedule=s["cron"])[0]: s["cron"] for s in w["on"]["schedule"]}
monday = datetime.datetime(2026, 1, 5)
week = [monday + datetime.timedelta(minutes=m) for m in range(8 * 24 * 60)]
times = {job: [t for t in week if fires(cron, t)] for job, cron in crons.items()}
for evening in (t for t in times["evening"] if t < monday + datetime.timedelta(days=7)):
    morning = min(t for t in times["morning"] if t > evening)
    marks = [evening] + [t for t in times["night"] if evening < t < morning] + [morning]
    print(evening.strftime("%a %H:%M"), morning.strftime("%a %H:%M"),
          max(b - a for a, b in zip(marks, marks[1:])) <= datetime.timedelta(minutes=15))
print([m.strftime("%a") for m in times["morning"] if any(m <= t < m + datetime.timedelta(hours=1) for t in times["night"])])
PY
  assert_output "Mon 20:00 Tue 07:00 True
Tue 20:00 Wed 07:00 True
Wed 20:00 Thu 07:00 True
Thu 20:00 Fri 07:00 True
Fri 20:00 Sat 07:00 True
[]"
}

@test "the night's jobs share one owner and the records kept of its workers, each job restoring the latest and saving its own whatever its outcome" {
  run in_workflow night <<'PY'
print(w["env"]["CR_E2B_OWNER"], w["env"]["CR_E2B_STATE"])
print([job for job in jobs.values() if "CR_E2B_OWNER" in job.get("env", {}) or "CR_E2B_STATE" in job.get("env", {})])
for job, spec in jobs.items():
    steps = spec["steps"]
    restore = next(n for n, s in enumerate(steps) if s.get("uses", "").startswith("actions/cache/restore@"))
    save = next(n for n, s in enumerate(steps) if s.get("uses", "").startswith("actions/cache/save@"))
    first_run = next(n for n, s in enumerate(steps) if "cr-e2b " in s.get("run", ""))
    kept, saved = steps[restore]["with"], steps[save]["with"]
    print(job, restore < first_run, save == len(steps) - 1, steps[save]["if"],
          kept["path"] == saved["path"] == "${{ env.CR_E2B_STATE }}", kept["key"] == saved["key"],
          "${{ github.run_id }}" in kept["key"], kept["key"].startswith(kept["restore-keys"]))
PY
  assert_output "night@\${{ github.repository }} \${{ github.workspace }}/.cr-e2b-state
[]
evening True True always() True True True True
night True True always() True True True True
morning True True always() True True True True"
}

@test "the night's runs never interleave: one concurrency group for them all, none cancelled in progress" {
  run in_workflow night <<'PY'
print(w["concurrency"])
print([job for job in jobs.values() if "concurrency" in job])
PY
  assert_output "{'group': 'cr-e2b-night', 'cancel-in-progress': False}
[]"
}

@test "the jobs start workers on the repository's own checkout, so its control-room.json holds their checks" {
  run in_workflow worker night <<'PY'
for job, spec in jobs.items():
    first = spec["steps"][0]
    print(job, first["uses"].split("@")[0], first.get("with", {}).get("repository"),
          [w for start in commands(job, "start") for w in start if w in ("--check", "--setup", "--max-cost")])
PY
  assert_output "work actions/checkout None []
evening actions/checkout None []
night actions/checkout None []
morning actions/checkout None []"
}

@test "every job installs cr-e2b pinned, at the tag or commit CR_E2B_REF names, before it runs it" {
  run in_workflow worker night <<'PY'
print(name, bool(re.fullmatch(r"v\d+\.\d+\.\d+|[0-9a-f]{40}", w["env"]["CR_E2B_REF"])))
for job, spec in jobs.items():
    installs = [n for n, s in enumerate(spec["steps"]) if re.search(r"\bpip", s.get("run", ""))]
    first_run = next(n for n, s in enumerate(spec["steps"]) if "cr-e2b " in s.get("run", ""))
    print(job, [spec["steps"][n]["run"] for n in installs], installs[0] < first_run)
PY
  assert_output "worker True
work ['pipx install \"git+https://github.com/you/cr-e2b.git@\$CR_E2B_REF\"'] True
night True
evening ['pipx install \"git+https://github.com/you/cr-e2b.git@\$CR_E2B_REF\"'] True
night ['pipx install \"git+https://github.com/you/cr-e2b.git@\$CR_E2B_REF\"'] True
morning ['pipx install \"git+https://github.com/you/cr-e2b.git@\$CR_E2B_REF\"'] True"
}

@test "every worker has its keys in its sandbox's environment, never at the unverified edge, and reaches only the hosts named" {
  run in_workflow worker night <<'PY'
print(name, "edge" in text)
for job in jobs:
    for start in commands(job, "start"):
        print(job, option(start, "--secrets"), option(start, "--allow-out") is not None, "--no-internet" in start)
PY
  assert_output "worker False
work None True False
night False
evening None True False"
}

@test "no step's script interpolates an expression: the issue's text reaches it only through the environment" {
  run in_workflow worker night <<'PY'
print(name, [s.get("name") for job in jobs.values() for s in job["steps"] if "${{" in s.get("run", "")])
print(name, sorted(k for job in jobs.values() for k, v in job.get("env", {}).items() if "issue" in v))
PY
  assert_output "worker []
worker ['ISSUE', 'ISSUE_BODY', 'ISSUE_TITLE']
night []
night []"
}

@test "a worker's job that does not deliver saves its log, records and question and uploads them, on failure and on cancel, a timeout's included" {
  run in_workflow worker <<'PY'
for s in jobs["work"]["steps"]:
    if "--save" in s.get("run", "") or "upload-artifact" in s.get("uses", ""):
        print(s.get("name") or s["uses"].split("@")[0], "failure()" in s["if"], "cancelled()" in s["if"])
PY
  assert_output "Save its log, records and question, and what it did not push True True
actions/upload-artifact True True"
}

@test "a worker's lifetime is Hobby's hour at most, paused at its end, and each wait ends before its sandboxes and its job, within GitHub's 6 h" {
  # Hobby: a sandbox runs at most an hour at a time; a GitHub-hosted job runs at most 6 h
  run in_workflow worker night <<'PY'
for job, spec in jobs.items():
    starts, job_time = commands(job, "start"), spec["timeout-minutes"] * 60
    lifetimes = {int(option(s, "--timeout")) for s in starts}
    waits = [int(option(s, "--timeout")) for s in commands(job, "wait")]
    print(job, lifetimes, {option(s, "--on-timeout") for s in starts}, job_time <= 6 * 3600,
          all(wait < min(lifetimes, default=job_time) and wait < job_time for wait in waits))
PY
  assert_output "work {3600} {'pause'} True True
evening {3600} {'pause'} True True
night set() set() True True
morning set() set() True True"
}

@test "a failed start fails its step with start's own error, and nothing reads its empty output" {
  stub_cr_e2b
  export ISSUE_BODY="Count the words." ISSUE=7 ISSUE_TITLE="Count words" BRIEF_INPUT=
  printf '#!/bin/sh\necho "cr-e2b: step clone failed" >&2\nexit 1\n' >"$TEST_DIR/bin/cr-e2b"
  run_step worker work "Start the worker"
  assert_failure 1
  [ "$stderr" = "cr-e2b: step clone failed" ]
  [ ! -s "$GITHUB_ENV" ]
}

@test "an issue's worker gets the issue as its brief, byte for byte, and its id passes to the next steps" {
  stub_cr_e2b
  export ISSUE=7 ISSUE_TITLE="Count words: \$(touch pwned) 'quoted'" BRIEF_INPUT=
  export ISSUE_BODY=$'Split on "any" whitespace;\n`rm -rf /` is text, and so is $HOME.'
  run_step worker work "Start the worker"
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

@test "a worker whose READY is certified is killed at once; any other ending is saved, its log with it" {
  stub_cr_e2b
  export SANDBOX=sbx1
  run_step worker work "Wait for its READY, then end it"
  assert_success
  run tail -n 1 "$TEST_DIR/calls-made"
  assert_output "kill --sandbox sbx1 --force"
  rm "$TEST_DIR/calls-made"
  STUB_WAIT_EXIT=5 run_step worker work "Wait for its READY, then end it"
  assert_failure 5
  run grep -c '^kill' "$TEST_DIR/calls-made"
  assert_output 0
  run_step worker work "Save its log, records and question, and what it did not push"
  run tail -n 1 "$TEST_DIR/calls-made"
  assert_output "kill --sandbox sbx1 --save saved"
  [ -s saved/log ]
}

@test "the evening pauses settled workers while a start waits for a slot, and ends once every start has returned" {
  stub_cr_e2b
  briefs api queued docs
  run_step night evening "Start a worker per brief"
  assert_success
  # the queued start got its slot from a supervise round that pauses settled workers
  run grep -m 1 -n -- '^supervise --mine --once --interval 60 --pause-settled 300$' "$TEST_DIR/calls-made"
  [ "${output%%:*}" -lt "$(grep -n 'start of briefs/queued.md returned' "$TEST_DIR/calls-made" | cut -d: -f1)" ]
  run grep -c '^start .*--queue' "$TEST_DIR/calls-made"
  assert_output 3
  run grep -c '^start of briefs/.* returned$' "$TEST_DIR/calls-made"
  assert_output 3
  run grep -c -e '^wait' -e '^kill' "$TEST_DIR/calls-made"
  assert_output 0
}

@test "the evening's starts share one wait for slots which, with a start's setup, fits the evening's time and GitHub's 6 h" {
  stub_cr_e2b
  briefs api slow zdocs
  run_step night evening "Start a worker per brief"
  assert_success
  # what the next start may wait is what the slow one left
  run sed -n 's/^start .*--queue \([0-9]*\) .*/\1/p' "$TEST_DIR/calls-made"
  [ "${#lines[@]}" -eq 3 ]
  [ "${lines[2]}" -lt "${lines[0]}" ]
  queue=${lines[0]}
  # a start's setup has 30 minutes; the supervise loop's last round a minute
  run in_workflow night <<'PY'
print(jobs["evening"]["timeout-minutes"] * 60)
PY
  [ $((queue + 1800 + 60)) -le "$output" ]
  [ "$output" -le 21600 ]
}

@test "an evening brief that does not start fails the job by name, after the others have started" {
  stub_cr_e2b
  briefs api bad docs
  run_step night evening "Start a worker per brief"
  assert_failure 1
  assert_output_contains "::error::not started: briefs/bad.md"
  [ "$stderr" = "cr-e2b: the brief's first line is not 'EPIC <id>: branch ...'" ]
  run grep -c '^start of briefs/.*returned' "$TEST_DIR/calls-made"
  assert_output 2
}

@test "a night's tick is one supervise round over the night's workers, which knows the next tick is 15 minutes away" {
  stub_cr_e2b
  run_step night night "Carry the workers on"
  assert_success
  run cat "$TEST_DIR/calls-made"
  assert_output "supervise --mine --once --interval 900 --pause-settled 600"
  # the cron's period, and the tick ends within it
  run in_workflow night <<'PY'
tick = next(s["cron"] for s in w["on"]["schedule"] if started(event="schedule", schedule=s["cron"]) == ["night"])
minutes = [int(m) for m in tick.split()[0].split(",")]
print({b - a for a, b in zip(minutes, minutes[1:] + [minutes[0] + 60])}, jobs["night"]["timeout-minutes"] < 15)
PY
  assert_output "{15} True"
}

@test "the morning writes the fleet's Markdown to the run's summary page and ends with wait's exit code" {
  stub_cr_e2b
  echo "## Earlier step" >"$GITHUB_STEP_SUMMARY"
  STUB_WAIT_EXIT=5 run_step night morning "Report the night, ending with its outcome"
  assert_failure 5
  run cat "$GITHUB_STEP_SUMMARY"
  assert_output "## Earlier step
| worker | state |
| --- | --- |
| sbx1 | BLOCKED: which \\| table? |"
  run cat "$TEST_DIR/calls-made"
  assert_output "list --mine --markdown
wait --all --timeout 60"
  run_step night morning "Report the night, ending with its outcome"
  assert_success
}

@test "the morning saves every worker, BLOCKED ones included, ends it, and uploads what it saved, whatever the outcome" {
  stub_cr_e2b
  run in_workflow night <<'PY'
saving = step("morning", "Save and end every worker")
upload = next(s for s in jobs["morning"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
print(saving["if"], upload["if"], upload["with"]["path"])
PY
  assert_output "always() always() saved/"
  STUB_WAIT_EXIT=5 run_step night morning "Report the night, ending with its outcome"
  run_step night morning "Save and end every worker"
  assert_success
  run tail -n 1 "$TEST_DIR/calls-made"
  assert_output "kill --all --save saved"
  run cat saved/sbx1/log
  assert_output "EPIC wc-3 BLOCKED which table?"
}
