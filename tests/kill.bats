#!/usr/bin/env bats
# `cr-e2b kill`: never losing unpushed or uncommitted work unless told to
# (--save, --force), paused sandboxes, and many workers at once.

load test_helper

kill_calls() {
  run calls
  assert_output <<'OUT'
Sandbox.get_info
Sandbox.connect
commands.run
Sandbox.kill
OUT
}

@test "kill of a worker whose work is all pushed looks once inside, then kills it and says so" {
  idle_worker
  commit_in_worker 42
  git -C "$(workdir)" push -q origin claude/wc-3-count
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run --separate-stderr cr-e2b kill --sandbox sbx1
  assert_success
  assert_output "killed sandbox sbx1"
  [ "$stderr" = "" ]
  kill_calls
}

@test "kill refuses to lose an unpushed commit, says how to keep it, and exits 9" {
  idle_worker
  commit_in_worker 42
  run cr-e2b kill --sandbox sbx1
  assert_failure 9
  assert_output "cr-e2b: sandbox sbx1 holds work that would be lost: 1 unpushed commit; keep it with --save DIR, or drop it with --force"
  run calls
  refute_output_contains Sandbox.kill
}

@test "kill refuses to lose an uncommitted change or an untracked file" {
  idle_worker
  echo more >>"$(workdir)/README"
  echo new >"$(workdir)/notes.txt"
  run cr-e2b kill --sandbox sbx1
  assert_failure 9
  assert_output "cr-e2b: sandbox sbx1 holds work that would be lost: 1 uncommitted change, 1 untracked file; keep it with --save DIR, or drop it with --force"
}

@test "kill of a sandbox whose clone failed says there is no repository and kills it" {
  make_sandbox
  run --separate-stderr cr-e2b kill --sandbox sbx1
  assert_success
  assert_output "killed sandbox sbx1"
  [ "$stderr" = "cr-e2b: warning: no git repository in repo (did setup fail at clone?): no work of the worker's to lose" ]
  kill_calls
}

@test "kill refuses when it cannot look inside the sandbox, and --force still kills" {
  make_sandbox
  rm "$(sandbox_home)/.cr/cr_e2b.py"
  run --separate-stderr cr-e2b kill --sandbox sbx1
  assert_failure 9
  assert_one_error_line
  assert_output_contains "cr-e2b: cannot look inside sandbox sbx1 for unsaved work ("
  assert_output_contains "); --force kills it anyway"
  run cr-e2b kill --sandbox sbx1 --force
  assert_success
}

@test "kill of a paused sandbox with nothing to lose kills it" {
  idle_worker
  pause_sandbox
  run cr-e2b kill --sandbox sbx1
  assert_success
  run call_field Sandbox.kill sandbox_id
  assert_output '"sbx1"'
}

@test "kill of a paused sandbox holding work looks inside and leaves it paused; --force kills it as it is" {
  idle_worker
  commit_in_worker 42
  pause_sandbox
  run --separate-stderr cr-e2b kill --sandbox sbx1
  assert_failure 9
  assert_one_error_line
  assert_output_contains "cr-e2b: sandbox sbx1 holds work that would be lost: 1 unpushed commit"
  assert_output_contains "; it is paused again"
  [ "$(sandbox_state)" = paused ]
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b kill --sandbox sbx1 --force
  assert_success
  run calls
  assert_output Sandbox.kill
  run call_field Sandbox.kill state
  assert_output '"paused"'
}

@test "kill of a paused sandbox leaves it paused even when e2b is slow to tell its state" {
  idle_worker
  commit_in_worker 42
  pause_sandbox
  # asked at the same time as the connect that resumes it, the state would come back running
  export FAKE_E2B_SLOW=Sandbox.get_info:1
  run --separate-stderr cr-e2b kill --sandbox sbx1
  assert_failure 9
  [[ "$stderr" == *"; it is paused again" ]]
  [ "$(sandbox_state)" = paused ]
}

@test "kill --save keeps unpushed commits in a bundle that git fetch restores, then kills" {
  idle_worker
  commit_in_worker 42
  commit_in_worker 43 "count more words"
  sha=$(git -C "$(workdir)" rev-parse HEAD)
  run cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_success
  [ "${lines[0]}" = "saved into $TEST_DIR/saved:" ]
  [[ "${lines[1]}" =~ ^"  work.bundle "\ +[0-9]+" bytes  2 unpushed commits; git fetch $TEST_DIR/saved/work.bundle 'refs/heads/*:refs/remotes/saved/*' HEAD:refs/remotes/saved/HEAD"$ ]]
  [ ! -e "$TEST_DIR/saved/uncommitted.patch" ]
  git clone -q "$TEST_DIR/origin.git" "$TEST_DIR/restored"
  git -C "$TEST_DIR/restored" fetch -q "$TEST_DIR/saved/work.bundle" 'refs/heads/*:refs/remotes/saved/*'
  [ "$(git -C "$TEST_DIR/restored" rev-parse refs/remotes/saved/claude/wc-3-count)" = "$sha" ]
  run cr-e2b status --sandbox sbx1
  assert_failure 3
}

@test "kill --save of a worker on a detached HEAD (mid-rebase) keeps that commit, and its restore line brings it back" {
  idle_worker
  commit_in_worker 42
  git -C "$(workdir)" checkout -q --detach
  echo 43 >"$(workdir)/count.txt"
  git -C "$(workdir)" commit -qam "picked mid-rebase"
  sha=$(git -C "$(workdir)" rev-parse HEAD)
  run cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_success
  restore=$(sed -n 's/.* unpushed commits\{0,1\}; \(git fetch .*\)$/\1/p' <<<"${lines[1]}")
  git clone -q "$TEST_DIR/origin.git" "$TEST_DIR/restored"
  (cd "$TEST_DIR/restored" && eval "$restore -q")
  git -C "$TEST_DIR/restored" cat-file -e "$sha^{commit}"
  [ "$(git -C "$TEST_DIR/restored" rev-parse saved/HEAD)" = "$sha" ]
}

@test "kill --save keeps uncommitted, untracked and binary changes in a patch that git apply restores" {
  idle_worker
  echo more >>"$(workdir)/README"
  echo new >"$(workdir)/notes.txt"
  printf 'bin\000\001\377ary' >"$(workdir)/blob.bin"
  run cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_success
  [[ "${lines[1]}" =~ ^"  uncommitted.patch "\ +[0-9]+" bytes  3 changed files; git apply $TEST_DIR/saved/uncommitted.patch"$ ]]
  [ ! -e "$TEST_DIR/saved/work.bundle" ]
  git clone -q "$TEST_DIR/origin.git" "$TEST_DIR/restored"
  git -C "$TEST_DIR/restored" apply "$TEST_DIR/saved/uncommitted.patch"
  for f in README notes.txt blob.bin; do cmp "$(workdir)/$f" "$TEST_DIR/restored/$f"; done
}

@test "kill --save keeps the log, the turn records and the session transcript, with keys masked" {
  idle_worker
  echo "the agent printed $MODEL_KEY_VALUE" >>"$(sandbox_home)/.cr/log"
  run cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_success
  run ls "$TEST_DIR/saved"
  assert_output <<'OUT'
session.jsonl
turns.jsonl
worker.log
OUT
  grep -q "the agent printed \[redacted\]" "$TEST_DIR/saved/worker.log"
  cmp "$(sandbox_home)/.cr/turns.jsonl" "$TEST_DIR/saved/turns.jsonl"
  run grep -rl -e "$MODEL_KEY_VALUE" -e "$E2B_KEY_VALUE" "$TEST_DIR/saved"
  assert_failure 1
}

@test "kill --save whose archive arrives damaged keeps the worker, saves nothing, says to try again and exits 7" {
  idle_worker
  commit_in_worker 42
  echo more >>"$(workdir)/README"
  FAKE_E2B_FAIL=read-damaged:save.tar.gz run cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_failure 7
  assert_output "cr-e2b: sandbox sbx1: the archive of its work arrived damaged (cut short); nothing was saved into $TEST_DIR/saved and the sandbox was not killed; try again"
  run ls -A "$TEST_DIR/saved"
  assert_output ""
  [ "$(sandbox_state)" = running ]
  run cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_success
  [ "$(sandbox_state)" = killed ]
}

@test "kill --save whose archive arrives whole but for its last bytes is damaged too: nothing is killed" {
  idle_worker
  commit_in_worker 42
  FAKE_E2B_FAIL=read-short:save.tar.gz:8 run cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_failure 7
  assert_output "cr-e2b: sandbox sbx1: the archive of its work arrived damaged (cut short); nothing was saved into $TEST_DIR/saved and the sandbox was not killed; try again"
  run ls -A "$TEST_DIR/saved"
  assert_output ""
  [ "$(sandbox_state)" = running ]
}

@test "kill --save of a paused sandbox whose archive arrives damaged pauses it again" {
  idle_worker
  commit_in_worker 42
  pause_sandbox
  FAKE_E2B_FAIL=read-damaged:save.tar.gz run --separate-stderr cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_failure 7
  [ "$(sandbox_state)" = paused ]
}

@test "kill --save of a paused sandbox resumes it, saves and kills it" {
  idle_worker
  commit_in_worker 42
  pause_sandbox
  run cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_success
  [ -s "$TEST_DIR/saved/work.bundle" ]
  run calls
  assert_output_contains "Sandbox.get_info
Sandbox.connect
commands.run
files.read
Sandbox.kill"
  run call_field Sandbox.connect timeout
  [[ "$output" =~ ^[0-9]+$ ]]  # given back its time in the connect itself
}

@test "kill --save into a file, under a file or over an earlier save exits 2 before any call" {
  make_sandbox
  run cr-e2b kill --sandbox sbx1 --save brief.md
  assert_failure 2
  assert_output "cr-e2b: --save brief.md is not a directory"
  run --separate-stderr cr-e2b kill --sandbox sbx1 --save brief.md/saved
  assert_failure 2
  assert_one_error_line
  mkdir saved && : >saved/worker.log
  run cr-e2b kill --sandbox sbx1 --save saved
  assert_failure 2
  assert_output "cr-e2b: --save saved already holds a save (worker.log); choose an empty directory"
  run cr-e2b kill --sandbox sbx1 --save other --force
  assert_failure 2
  no_sdk_calls
}

@test "kill --save with a bad selection or no key exits 2 and makes no folder" {
  run --separate-stderr cr-e2b kill --save "$TEST_DIR/saved"
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: give the sandboxes' ids (ID ..., or --sandbox ID each) or --all"
  [ ! -e "$TEST_DIR/saved" ]
  run --separate-stderr cr-e2b kill --sandbox sbx1 --profile docs --save "$TEST_DIR/saved"
  assert_failure 2
  [ ! -e "$TEST_DIR/saved" ]
  unset E2B_API_KEY
  run --separate-stderr cr-e2b kill --sandbox sbx1 --save "$TEST_DIR/saved"
  assert_failure 2
  [ ! -e "$TEST_DIR/saved" ]
  no_sdk_calls
}

@test "kill --force kills in one call without looking" {
  idle_worker
  commit_in_worker 42
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b kill --sandbox sbx1 --force
  assert_success
  run calls
  assert_output Sandbox.kill
}

@test "kill of an unknown sandbox is one line and exit 3" {
  run cr-e2b kill --sandbox nosuch
  assert_failure 3
  assert_output "cr-e2b: no such sandbox: nosuch (unknown, expired or killed)"
}

@test "kill over several workers kills those with nothing to lose and names those it keeps" {
  start_worker
  wait_idle
  fleet_worker docs 0 false "WORKER docs READY"
  git -C "$(sandbox_home sbx1)/repo" commit -q --allow-empty -m "not pushed"
  run --separate-stderr cr-e2b kill --all
  assert_failure 9
  [ "$(sandbox_state sbx1)" = running ]
  [ "$(sandbox_state sbx2)" = killed ]
  assert_output "killed sandbox sbx2"
  [[ "$stderr" == *"cr-e2b: sandbox sbx1 holds work that would be lost: 1 unpushed commit; keep it with --save DIR, or drop it with --force"* ]]
  run cr-e2b kill --all --save "$TEST_DIR/saved"
  assert_success
  [ -s "$TEST_DIR/saved/sbx1/work.bundle" ]
  [ "$(sandbox_state sbx1)" = killed ]
}

@test "kill over several workers prints each one's line in order, whatever went wrong with one" {
  fleet_worker a 0 false "WORKER a READY"
  # its save is not an archive: one worker's failure hides no other's line
  cat >"$(sandbox_home "$made")/.cr/cr_e2b.py" <<'PY'
import json, os
def sandbox_main(argv):
    if argv[:1] != ["save"]:
        return 1
    with open(os.path.expanduser("~/.cr/save.tar.gz"), "w") as handle:
        handle.write("junk\n")
    print(json.dumps({"work": {"workdir": "repo", "git": False}}))
    return 0
PY
  fleet_worker b 0 false "WORKER b READY"
  fleet_worker c 0 false "WORKER c READY"
  run --separate-stderr cr-e2b kill --sandbox sbx1 --sandbox sbx2 --sandbox sbx3 --save "$TEST_DIR/saved"
  assert_failure 7
  [[ "$stderr" == *"sandbox sbx1: the archive of its work arrived damaged (not a gzip file); nothing was saved into $TEST_DIR/saved/sbx1 and the sandbox was not killed; try again"* ]]
  assert_output_contains "killed sandbox sbx2"
  assert_output_contains "killed sandbox sbx3"
  [ "$(sandbox_state sbx1)" = running ]
  [ "$(sandbox_state sbx3)" = killed ]
}

@test "Ctrl-C during a kill over several workers names those killed and those that may still run" {
  fleet_worker a 0 false "WORKER a READY"
  fleet_worker b 0 false "WORKER b READY"
  export FAKE_E2B_SLOW=Sandbox.kill:30
  cr-e2b kill --sandbox sbx1 --sandbox sbx2 --force >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
  eventually "a slow kill" test -e "$FAKE_E2B_DIR/slow-Sandbox.kill"
  kill -INT "$pid"
  status=0
  wait "$pid" || status=$?
  assert_failure 130
  run cat "$TEST_DIR/err"
  assert_output "cr-e2b: interrupted (SIGINT): killed none yet; sbx1, sbx2 may still be running (cr-e2b list shows them)"
}

@test "a sandbox whose start was cut short before its setup shows as never set up, and kill --all ends it" {
  fleet_worker docs 0 false "WORKER docs READY"
  python3 -c 'import e2b; e2b.Sandbox.create(timeout=3600, metadata={"cr-e2b": "1", "profile": "backend", "repo": "https://h/app.git"})'
  run cr-e2b list
  assert_output_contains "sbx2  backend  -  -       -      59m59s left  setup failed: never set up: its start was cut short before the clone; nothing of a worker is in it"
  run --separate-stderr cr-e2b status --sandbox sbx2
  assert_failure 1
  [ "$stderr" = "cr-e2b: sandbox sbx2 was never set up: its start was cut short before the clone, and nothing of a worker is in it; cr-e2b kill --sandbox sbx2 ends it" ]
  run --separate-stderr cr-e2b kill --all
  assert_success
  [ "$(sandbox_state sbx1)" = killed ]
  [ "$(sandbox_state sbx2)" = killed ]
}

@test "kill --force over several workers kills them all, one call each" {
  fleet_worker a 0 false "WORKER a READY"
  fleet_worker b 0 false "WORKER b READY"
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b kill --sandbox sbx1 --sandbox sbx2 --force
  assert_success
  run calls
  assert_output "Sandbox.kill
Sandbox.kill"
}
