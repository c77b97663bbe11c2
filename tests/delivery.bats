#!/usr/bin/env bats
# The work gets out: default rules that let the worker push and open its pull
# request, a denied push made loud, `diff`, and a `kill` that never loses
# unpushed or uncommitted work unless told to. The worker's clone is a real git
# repository whose origin is a real bare one (see make_repo).

load test_helper

workdir() { echo "$(sandbox_home)/repo"; }

# A commit on the worker's epic branch, in its clone, not pushed.
commit_in_worker() { # content [subject]
  git -C "$(workdir)" checkout -q -B claude/wc-3-count
  echo "$1" >"$(workdir)/count.txt"
  git -C "$(workdir)" add count.txt
  git -C "$(workdir)" commit -qm "${2:-count words}"
}

idle_worker() {
  start_worker
  wait_idle
}

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

@test "extend that would shorten the life of a worker holding an unpushed commit refuses as kill does; --force shortens it" {
  idle_worker
  commit_in_worker 42
  pause_sandbox
  run --separate-stderr cr-e2b extend sbx1 --timeout 60
  assert_failure 9
  [[ "$output" == "" ]]
  [[ "$stderr" == *"cr-e2b: sandbox sbx1 holds work that would be lost if its life ended sooner: 1 unpushed commit; push it or save it (cr-e2b kill --save DIR), or shorten it anyway with --force" ]]
  [[ "$stderr" == *"sandbox sbx1 was paused: resumed for this look, its time left kept, and paused again"* ]]
  [ "$(sandbox_state)" = paused ]
  run call_field Sandbox.set_timeout timeout
  assert_output ""
  run cr-e2b extend sbx1 --timeout 7200
  assert_success
  run cr-e2b extend sbx1 --timeout 60 --force
  assert_success
  [[ "$output" == "sandbox sbx1 paused, 1m00s left (until "* ]]
  run call_field Sandbox.set_timeout timeout
  assert_output "7200
60"
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

@test "kill of a paused sandbox with nothing to lose kills it" {
  idle_worker
  pause_sandbox
  run cr-e2b kill --sandbox sbx1
  assert_success
  run call_field Sandbox.kill sandbox_id
  assert_output '"sbx1"'
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

@test "kill --force kills in one call without looking" {
  idle_worker
  commit_in_worker 42
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b kill --sandbox sbx1 --force
  assert_success
  run calls
  assert_output Sandbox.kill
}

@test "diff shows the branch, unpushed commits, uncommitted files and the change against the integration branch, in three calls" {
  idle_worker
  commit_in_worker 42
  echo new >"$(workdir)/notes.txt"
  sha=$(git -C "$(workdir)" rev-parse HEAD)
  base=$(git -C "$(workdir)" rev-parse origin/main)
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run cr-e2b diff --sandbox sbx1
  assert_success
  assert_output <<OUT
branch    claude/wc-3-count, not pushed
unpushed  1 commit
          ${sha:0:12} count words
changed   1 file not committed
          ?? notes.txt
against   origin/main at ${base:0:12}

diff --git a/count.txt b/count.txt
new file mode 100644
index 0000000..d81cc07
--- /dev/null
+++ b/count.txt
@@ -0,0 +1 @@
+42
diff --git a/notes.txt b/notes.txt
new file mode 100644
index 0000000..3e75765
--- /dev/null
+++ b/notes.txt
@@ -0,0 +1 @@
+new
OUT
  run calls
  assert_output "Sandbox.get_info
Sandbox.connect
commands.run"
}

@test "diff --stat summarises the change and --json gives it to programs" {
  idle_worker
  commit_in_worker 42
  run cr-e2b diff --sandbox sbx1 --stat
  assert_success
  assert_output_contains " count.txt | 1 +"
  assert_output_contains " 1 file changed, 1 insertion(+)"
  run cr-e2b diff --sandbox sbx1 --json
  assert_success
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1])
print(sorted(d)); print(d["branch"], d["pushed"], len(d["unpushed"]), d["changes"], d["integration_branch"])' "$output"
  assert_output <<'OUT'
['base', 'branch', 'changes', 'diff', 'git', 'head', 'integration_branch', 'on_remote', 'pushed', 'sandbox_id', 'unpushed', 'workdir']
claude/wc-3-count False 1 [] main
OUT
}

# Each command's output, as the fake recorded it: "N MAX", the number of
# commands and the longest output.
command_outputs() {
  python3 -c 'import json,sys
out = [len(c["stdout"]) for c in map(json.loads, open(sys.argv[1])) if c["call"] == "commands.run"]
print(len(out), max(out))' "$FAKE_E2B_DIR/calls.jsonl"
}

@test "a diff bigger than a piece reaches a pipe byte for byte, in pieces of a command each" {
  idle_worker
  python3 -c 'import random; r = random.Random(5); print("\n".join("%032x" % r.getrandbits(128) for _ in range(2000)))' \
    >"$(workdir)/big.txt"
  head -c 30000 /dev/urandom >"$(workdir)/blob.bin"
  rm "$FAKE_E2B_DIR/calls.jsonl"
  CR_E2B_CHUNK_BYTES=4096 cr-e2b diff --sandbox sbx1 | LC_ALL=C sed '1,/^$/d' >change.patch
  git clone -q "$TEST_DIR/origin.git" restored
  git -C restored apply "$PWD/change.patch"
  cmp restored/big.txt "$(workdir)/big.txt"
  cmp restored/blob.bin "$(workdir)/blob.bin"
  read -r commands longest < <(command_outputs)
  [ "$commands" -gt 10 ]
  [ "$longest" -lt 8192 ]
}

# Puts a filter (sed expression) over what the sandbox side answers to work.
filter_runner() {
  local side
  side="$(sandbox_home)/.cr"
  mv "$side/cr_e2b.py" "$side/real_cr_e2b.py"
  printf '%s\n' "$1" >"$side/filter"
  cat >"$side/cr_e2b.py" <<'PY'
import contextlib, io, os, subprocess, sys
import real_cr_e2b
def sandbox_main(argv):
    if argv[:1] != ["work"]:
        return real_cr_e2b.sandbox_main(argv)
    with contextlib.redirect_stdout(io.StringIO()) as answer:
        code = real_cr_e2b.sandbox_main(argv)
    with open(os.path.join(os.path.dirname(__file__), "filter")) as handle:
        line = handle.read().strip()
    sys.stdout.write(subprocess.run(["sed", "-E", line], input=answer.getvalue(), capture_output=True, text=True).stdout)
    return code
PY
}

@test "diff refuses a change file the sandbox names outside its own, and asks for nothing more" {
  idle_worker
  echo change >>"$(workdir)/README"
  filter_runner 's/"diff_file":"[^"]*"/"diff_file":"..\/..\/etc\/passwd"/'
  CR_E2B_CHUNK_BYTES=16 run --separate-stderr cr-e2b diff --sandbox sbx1
  assert_failure 1
  [ "$stderr" = "cr-e2b: sandbox sbx1: unreadable answer from the runner" ]
  run grep -c diffpiece "$FAKE_E2B_DIR/calls.jsonl"
  assert_output 0
}

@test "diff of a worker that an older cr-e2b started says so" {
  idle_worker
  echo change >>"$(workdir)/README"
  older_sandbox
  run --separate-stderr cr-e2b diff --sandbox sbx1
  assert_failure 1
  [ "$stderr" = "cr-e2b: sandbox sbx1 was started by an older cr-e2b: $OLDER" ]
}

@test "a key in a diff is masked where a piece cuts it" {
  idle_worker
  for _ in $(seq 400); do printf '%s' "$MODEL_KEY_VALUE"; done >"$(workdir)/keys.txt"
  CR_E2B_CHUNK_BYTES=1000 run cr-e2b diff --sandbox sbx1
  assert_success
  refute_output_contains "${MODEL_KEY_VALUE:0:12}"
  [ "$(grep -o '\[redacted\]' <<<"$output" | wc -l)" -eq 400 ]
  CR_E2B_CHUNK_BYTES=1000 cr-e2b diff --sandbox sbx1 >piped.patch
  [ "$(grep -o '\[redacted\]' piped.patch | wc -l)" -eq 400 ]
  run grep -c "${MODEL_KEY_VALUE:0:12}" piped.patch
  assert_failure 1
}

@test "diff of a sandbox whose clone failed says so and exits 1" {
  make_sandbox
  run cr-e2b diff --sandbox sbx1
  assert_failure 1
  assert_output "cr-e2b: sandbox sbx1: no git repository in repo (did setup fail at clone?)"
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

agent_args() {
  run --separate-stderr cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md --dry-run --json "$@"
  assert_success
  run python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["agent_args"]))' <<<"$output"
}

@test "by default the worker may edit, run git and open a pull request, and --allow adds a rule" {
  agent_args
  assert_output "--permission-mode acceptEdits --allowedTools Bash(git:*) Bash(gh pr create:*) Bash(gh pr view:*) Bash(gh pr list:*) --settings /home/user/.cr/settings.json"
  agent_args --allow 'Bash(npm test:*)' --allow WebFetch
  assert_output "--permission-mode acceptEdits --allowedTools Bash(git:*) Bash(gh pr create:*) Bash(gh pr view:*) Bash(gh pr list:*) --allowedTools Bash(npm test:*) --allowedTools WebFetch --settings /home/user/.cr/settings.json"
}

@test "--agent-args replaces the default, and --allow adds to it" {
  agent_args --agent-args='--permission-mode plan' --allow 'Bash(make:*)' --gate-tries 0
  assert_output "--permission-mode plan --allowedTools Bash(make:*)"
}

@test "--allow with something that is not a tool rule exits 2 before any call" {
  run cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md --allow 'git push'
  assert_failure 2
  assert_output "cr-e2b: --allow takes a tool rule such as 'Bash(npm test:*)': 'git push'"
  no_sdk_calls
}

steps() {
  run --separate-stderr cr-e2b start --repo "$1" --profile backend --brief brief.md --dry-run --json
  run python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin)["steps"]))' <<<"$output"
}

@test "setup gets the GitHub CLI only for a github.com repository with a token" {
  steps https://github.com/you/app.git
  assert_output "git-identity clone install queue launch"
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  steps https://github.com/you/app.git
  assert_output "git-auth git-identity clone install pr-tool queue launch"
  steps https://git.example.com/you/app.git
  assert_output "git-auth git-identity clone install queue launch"
}

# The setup script's functions, run for real here with a stub curl that serves
# a GitHub CLI release archive (or fails).
run_pr_tool() {
  SBX="$TEST_DIR/sbx"
  setup_plan '["pr-tool", "git-identity"]' '"git_name": "A", "git_email": "a@b"'
  cat >"$TEST_DIR/bin/curl" <<'STUB'
#!/bin/bash
[ -n "${CURL_FAILS:-}" ] && { echo "curl: (6) Could not resolve host: github.com" >&2; exit 6; }
[ "$1 $2" = "-fsSL -o" ] || { echo "stub curl: unexpected arguments: $*" >&2; exit 2; }
name=$(basename "$4" .tar.gz)
work=$(mktemp -d "$(dirname "$3")/stub.XXXXXX") && mkdir -p "$work/$name/bin"
printf '#!/bin/sh\necho "gh version 2.62.0 (stub)"\n' >"$work/$name/bin/gh" && chmod +x "$work/$name/bin/gh"
tar -czf "$3" -C "$work" "$name"
STUB
  chmod +x "$TEST_DIR/bin/curl"
  GIT_CONFIG_GLOBAL="$SBX/.gitconfig" run in_sandbox setup
}

@test "the pr-tool step installs the GitHub CLI into ~/.local/bin when the template lacks it" {
  run_pr_tool
  assert_success
  [[ "$output" =~ '"warnings":[],"ms":{"pr-tool":'[0-9]+',"git-identity":' ]]
  run "$TEST_DIR/sbx/.local/bin/gh" --version
  assert_output "gh version 2.62.0 (stub)"
}

@test "a failed GitHub CLI install is reported as a warning and setup goes on" {
  export CURL_FAILS=1
  run_pr_tool
  assert_success
  assert_output_contains '"warnings":[["pr-tool","curl: (6) Could not resolve host: github.com"]]'
  assert_output_contains '"git-identity":'
}

@test "start warns when the GitHub CLI cannot be installed, and the worker still starts" {
  make_repo; with_claude
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE" CURL_FAILS=1 LOCAL_ORIGIN="$REPO"
  export FAKE_E2B_PASS=CLAUDE_STUB_DIR,CURL_FAILS,LOCAL_ORIGIN
  run_pr_tool
  # git in this sandbox clones the local repository whatever the URL says.
  cat >"$TEST_DIR/bin/git" <<'STUB'
#!/bin/bash
[ "$1" = clone ] && set -- clone -q "$LOCAL_ORIGIN" "${!#}"
exec /usr/bin/git "$@"
STUB
  chmod +x "$TEST_DIR/bin/git"
  run cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md --workdir repo
  assert_success
  assert_output_contains "cr-e2b: warning: could not install the GitHub CLI, so the worker can push its branch but not open its pull request: curl: (6) Could not resolve host: github.com"
  assert_output_contains "sandbox  sbx1"
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
