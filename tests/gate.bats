#!/usr/bin/env bats
# The verdict gate: a READY counts only once the sandbox has checked it, run by
# the stub Claude Code as its Stop hook, in the worker's clone, against a real origin.

load test_helper

BRANCH=claude/wc-3-count
COMMIT="git checkout -q -B $BRANCH && date +%s%N >count.txt && git add count.txt && git commit -qm count"
PUSH="git push -q origin $BRANCH"
SAY_READY='echo "EPIC wc-3 READY $(git rev-parse HEAD) https://git.example.com/you/app/pull/1"'

# A brief of epic wc-3 whose stub worker does what the KEY=VALUE lines say.
brief() { # FILE [LINE...]
  local file=$1
  shift
  { echo "EPIC wc-3: branch $BRANCH, scope src/, grants tests/"; printf '%s\n' "$@"; } >"$file"
}

# A worker on that brief, run until idle; then wait's exit code and message.
gated() { # FILE [start options...]
  start_worker "$@"
  wait_idle
  run cr-e2b wait --sandbox sbx1 --interval 0.2
}

# What the gate recorded for turn N (default 2), as JSON.
verdict_of() {
  PYTHONPATH="$ROOT" python3 -c 'import json, sys, cr_e2b
turns = cr_e2b.fold_records(open(sys.argv[1]).read().splitlines())
turn = [t for t in turns if t["turn"] == int(sys.argv[2])][0]
print(json.dumps({"state": turn["state"], "verdict": turn["verdict"], **(turn["verified"] or {})}))' \
    "$(sandbox_home)/.cr/turns.jsonl" "${1:-2}"
}

field() { python3 -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1])[sys.argv[2]]))' "$1" "$2"; }

# Each block's feedback as the stub worker received it, the blocks apart by "---".
feedback() { cat "$CLAUDE_STUB_DIR"/calls/*/feedback 2>/dev/null; }
blocks() { feedback | grep -c '^---$'; }

# One block's first reason, for a worker that does RUN and says SAY.
first_reason() { # RUN [SAY [start options...]]
  brief claim.md "STUB_RUN=$1" "STUB_SAY=${2:-$SAY_READY}"
  gated claim.md --gate-tries 1 "${@:3}"
  assert_failure 8
  run verdict_of
  run python3 -c 'import json, sys; print(json.loads(sys.argv[1])["reasons"][0])' "$output"
}

# A GitHub CLI that answers `gh pr view` with the line in ~/pr (the sandbox
# user's home): "STATE HEAD_SHA BASE HEAD_BRANCH", as its --jq asks. It is in
# ~/.local/bin of a template's home, where a build puts it, so that a gh of
# this machine's own is not the one asked.
gh_stub() {
  local home="$FAKE_E2B_DIR/templates/gh-tools/home"
  mkdir -p "$home/.local/bin"
  echo '{"template_id": "tpl-gh-tools", "ready": true}' >"$FAKE_E2B_DIR/templates/gh-tools/template.json"
  cat >"$home/.local/bin/gh" <<'STUB'
#!/bin/bash
[ "$1" = --version ] && { echo "gh version 2.62.0 (stub)"; exit 0; }
[ "$1 $2" = "pr view" ] || { echo "stub gh: unexpected $*" >&2; exit 2; }
grep -q . "$HOME/pr" || { echo "no pull requests found for $3" >&2; exit 1; }
cat "$HOME/pr"
STUB
  chmod +x "$home/.local/bin/gh"
  make_repo
  # every git in this sandbox, the gate's too, finds github.com/you/app in the local repository
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="url.$REPO.insteadOf" GIT_CONFIG_VALUE_0=https://github.com/you/app.git
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE" FAKE_E2B_PASS=CLAUDE_STUB_DIR,GIT_CONFIG_COUNT,GIT_CONFIG_KEY_0,GIT_CONFIG_VALUE_0
}

# A worker on github.com whose pull request is as PR says (HEAD for the commit).
on_github() { # PR [start options...]
  gh_stub
  brief gh.md "STUB_RUN=$COMMIT && $PUSH && echo \"$1\" | sed \"s/HEAD/\$(git rev-parse HEAD)/\" >~/pr" \
    "STUB_SAY=echo \"EPIC wc-3 READY \$(git rev-parse HEAD) ${PR_URL:-https://github.com/you/app/pull/7}\""
  with_claude
  run cr-e2b start --repo https://github.com/you/app.git --profile backend --brief gh.md --workdir repo \
    --template "${GH_TEMPLATE:-gh-tools}" --ci-rounds 0 "${@:2}"
  assert_success
  wait_idle
  # what the sandbox's gh said is what GitHub says to the caller (whose git
  # reaches the same origin, by the config gh_stub exports)
  github_api
  read -r state head base branch <"$(sandbox_home)/pr" || true
  [ -z "$state" ] || github_pulls "[$(pull 7 "$branch" "$head" "$state" "$base")]" you/app
  run --separate-stderr cr-e2b wait --sandbox sbx1
}

@test "a READY that holds is verified in the clone: wait exits 0, status and list say so" {
  brief ok.md "STUB_RUN=$COMMIT && $PUSH" "STUB_SAY=$SAY_READY"
  gated ok.md --check 'test -s count.txt'
  assert_success
  head=$(git -C "$TEST_DIR/origin.git" rev-parse "$BRANCH")
  run verdict_of
  run python3 -c 'import json, sys; v = json.loads(sys.argv[1])
print(v["state"], v["verdict"], v["ok"], v["by"], v["blocks"], v["head"], v["branch"], v["pr_checked"], v["reasons"])
print([(c["command"], c["exit_code"], c["seconds"] is not None) for c in v["checks"]])' "$output"
  assert_output "ok ready True hook 0 $head $BRANCH False []
[('test -s count.txt', 0, True)]"
  [ "$(blocks)" -eq 0 ]
  run cr-e2b status --sandbox sbx1
  assert_output_contains "verdict   READY verified in the sandbox: $BRANCH at ${head:0:12} pushed, pull request not checked (not GitHub, or no gh), checks test -s count.txt exit 0 in "
  run cr-e2b list
  assert_output_contains "READY certified: $BRANCH at ${head:0:7} on $TEST_DIR/origin https://git.example.com/you/app/pull/1"
  run cr-e2b log --sandbox sbx1 --turn 2
  assert_output_contains "    check  test -s count.txt"
  assert_output_contains "--- turn 2 verdict: READY verified, $BRANCH at ${head:0:12}, 1 check passed"
}

@test "a READY for a commit that was never made is blocked --gate-tries times, then the turn is undelivered and wait exits 8" {
  brief false.md "STUB_LAST=EPIC wc-3 READY 1234abcd https://git.example.com/you/app/pull/7"
  gated false.md
  assert_failure 8
  assert_output "cr-e2b: turn 2 ended but its work was not delivered: the clone is on main, not on the brief's branch $BRANCH (and 2 more reasons) (see: cr-e2b status --sandbox sbx1)"
  [ "$(blocks)" -eq 3 ]
  feedback | grep -q '^cr-e2b.s verdict gate checked "EPIC wc-3 READY 1234abcd https://git.example.com/you/app/pull/7" in the clone (try 3 of 3) and it does not hold:$'
  run verdict_of
  run field "$output" reasons
  assert_output "[\"the clone is on main, not on the brief's branch $BRANCH\", \"the verdict's commit 1234abcd is not HEAD ($(git -C "$TEST_DIR/origin.git" rev-parse main))\", \"$BRANCH is not on $REPO: push it (git push -u origin $BRANCH)\"]"
  run cr-e2b list
  assert_output_contains "undelivered: the clone is on main, not on the brief's branch $BRANCH (and 2 more reasons)"
  run cr-e2b log --sandbox sbx1 --turn 2
  assert_output_contains " !! verdict gate, block 1 of 3: the clone is on main, not on the brief's branch $BRANCH
                                the verdict's commit 1234abcd is not HEAD"
  assert_output_contains "--- turn 2 verdict: READY did not hold: the clone is on main"
  assert_output_contains "--- turn 2 undelivered · 1.5 s"
}

@test "what git says on stderr while the repository answers (its trace here, a redirect's warning live) is not read as the answer" {
  brief ok.md "STUB_RUN=$COMMIT && $PUSH" "STUB_SAY=$SAY_READY"
  GIT_TRACE=1 FAKE_E2B_PASS=CLAUDE_STUB_DIR,GIT_TRACE gated ok.md 2>/dev/null
  assert_success
}

@test "a READY for a commit that is not pushed is blocked until the worker pushes it, then verified in the same turn" {
  brief unpushed.md "STUB_RUN=$COMMIT" "STUB_SAY=$SAY_READY" "STUB_ON_FEEDBACK=$PUSH"
  gated unpushed.md
  assert_success
  [ "$(blocks)" -eq 1 ]
  feedback | grep -qxF -- "- $BRANCH is not on $REPO: push it (git push -u origin $BRANCH)"
  run verdict_of
  run python3 -c 'import json, sys; v = json.loads(sys.argv[1]); print(v["state"], v["ok"], v["blocks"])' "$output"
  assert_output "ok True 1"
  # one run of Claude Code for turn 2: the worker fixed it in the same turn
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 2 ]
}

@test "a READY with tracked changes left uncommitted is blocked" {
  first_reason "$COMMIT && $PUSH && echo more >>README"
  assert_output "1 tracked file has changes that are not committed: README"
}

@test "a READY from another branch than the brief's is blocked" {
  first_reason "git checkout -q -b claude/other && echo x >x && git add x && git commit -qm x && git push -q origin claude/other"
  assert_output "the clone is on claude/other, not on the brief's branch $BRANCH"
}

@test "a READY whose sha is not HEAD is blocked, and so is one that is not a commit id" {
  first_reason "$COMMIT && $PUSH" 'echo "EPIC wc-3 READY $(git rev-parse main) https://h/pr/1"'
  assert_output "the verdict's commit $(git -C "$TEST_DIR/origin.git" rev-parse main) is not HEAD ($(git -C "$TEST_DIR/origin.git" rev-parse "$BRANCH"))"
  rm -rf "$FAKE_E2B_DIR" "$TEST_DIR/src" "$TEST_DIR/origin.git" "$CLAUDE_STUB_DIR" && mkdir -p "$FAKE_E2B_DIR" "$CLAUDE_STUB_DIR"
  first_reason "$COMMIT && $PUSH" 'echo "EPIC wc-3 READY HEAD https://h/pr/1"'
  assert_output "the verdict's commit 'HEAD' is not a commit id (7 to 40 hex digits)"
}

@test "a READY whose last commit did not reach origin is blocked" {
  first_reason "$COMMIT && $PUSH && echo again >count.txt && git commit -qam again"
  pushed=$(git -C "$TEST_DIR/origin.git" rev-parse "$BRANCH")
  assert_output "$BRANCH on $REPO is at ${pushed:0:12}, not at HEAD $(git -C "$(sandbox_home)/repo" rev-parse --short=12 HEAD): push it (git push origin $BRANCH)"
}

@test "a git of the worker's own first on its PATH does not make an unpushed READY hold" {
  # it answers any ls-remote with HEAD, as if the branch were pushed
  cat >"$TEST_DIR/own-git" <<STUB
#!/bin/bash
for a; do [ "\$a" = ls-remote ] && { printf '%s\trefs/heads/$BRANCH\n' "\$($(command -v git) -C ~/repo rev-parse HEAD)"; exit 0; }; done
exec $(command -v git) "\$@"
STUB
  first_reason "$COMMIT && mkdir -p ~/.local/bin && cp '$TEST_DIR/own-git' ~/.local/bin/git && chmod +x ~/.local/bin/git"
  assert_output "$BRANCH is not on $REPO: push it (git push -u origin $BRANCH)"
}

@test "a branch pushed to where origin was pointed, not to the repository start was given, is not verified" {
  git init -q --bare "$TEST_DIR/elsewhere.git"
  first_reason "$COMMIT && git remote set-url origin 'file://$TEST_DIR/elsewhere.git' && $PUSH"
  git -C "$TEST_DIR/elsewhere.git" rev-parse -q --verify "$BRANCH"
  assert_output "$BRANCH is not on $REPO: push it (git push -u $REPO $BRANCH)"
}

@test "a READY that names another epic is blocked" {
  first_reason "$COMMIT && $PUSH" 'echo "EPIC wc-9 READY $(git rev-parse HEAD) https://h/pr/1"'
  assert_output "the verdict names epic wc-9, but this turn's brief is epic wc-3"
}

@test "a background task still running blocks the stop, and the READY holds once it is gone" {
  brief bg.md "STUB_RUN=$COMMIT && $PUSH" "STUB_SAY=$SAY_READY" "STUB_BACKGROUND=npm run dev"
  gated bg.md
  assert_success
  [ "$(blocks)" -eq 1 ]
  feedback | grep -q '^- background tasks of this turn still run (npm run dev): wait for them or stop them$'
}

@test "a failing project check blocks READY with its last lines, and the worker's fix makes it pass" {
  brief check.md "STUB_RUN=$COMMIT && $PUSH" "STUB_SAY=$SAY_READY" \
    "STUB_ON_FEEDBACK=echo fixed >count.txt && git commit -qam fix && $PUSH"
  gated check.md --check 'grep -q fixed count.txt || { echo "FAIL test_count"; echo "1 failed, 3 passed"; exit 1; }' \
    --check 'true'
  assert_success
  [ "$(blocks)" -eq 1 ]
  feedback | grep -q '^- check `grep -q fixed count.txt || { echo "FAIL test_count"; echo "1 failed, 3 passed"; exit 1; }` failed (exit 1 after 0 s): FAIL test_count | 1 failed, 3 passed$'
  run verdict_of
  run python3 -c 'import json, sys; print([(c["command"], c["exit_code"]) for c in json.loads(sys.argv[1])["checks"]])' "$output"
  assert_output "[('grep -q fixed count.txt || { echo \"FAIL test_count\"; echo \"1 failed, 3 passed\"; exit 1; }', 0), ('true', 0)]"
}

@test "the checks run in a clean checkout of HEAD: a file the worker did not commit is not there" {
  first_reason "$COMMIT && echo 'echo ok' >lib.sh && echo '. ./lib.sh' >test.sh && git add test.sh && git commit -qm test && $PUSH" \
    "$SAY_READY" --check 'bash test.sh'
  assert_output_contains "check \`bash test.sh\` failed (exit 1 after "
  assert_output_contains "lib.sh: No such file or directory"
}

@test "a failing check that printed nothing says so, with no colon left dangling" {
  first_reason "$COMMIT && $PUSH" "$SAY_READY" --check false
  assert_output "check \`false\` failed (exit 1 after 0 s), printing nothing"
}

@test "the checks' clean checkout has the clone's ignored files, as the project's setup would make them" {
  brief deps.md "STUB_RUN=$COMMIT && echo deps/ >.gitignore && mkdir deps && echo 'echo dep' >deps/dep.sh && echo 'echo ok' >lib.sh && printf '. ./lib.sh\n. deps/dep.sh\n' >test.sh && git add .gitignore lib.sh test.sh && git commit -qm test && $PUSH" \
    "STUB_SAY=$SAY_READY"
  gated deps.md --check 'bash test.sh' --gate-tries 1
  assert_success
  run git -C "$(sandbox_home)/repo" worktree list --porcelain
  assert_output_contains "worktree $(sandbox_home)/repo"
  refute_output_contains "gate-tree"
}

@test "a check that runs past --check-timeout is ended and fails" {
  first_reason "$COMMIT && $PUSH" "$SAY_READY" --check 'echo started; sleep 30' --check-timeout 1
  assert_output "check \`echo started; sleep 30\` did not finish within 1 s: started"
}

@test "what the gate tells the worker and records is masked and at most 2 KB" {
  first_reason "$COMMIT && $PUSH" "$SAY_READY" \
    --check 'echo "key $ANTHROPIC_API_KEY"; head -c 5000 /dev/zero | tr "\0" x; echo; exit 1'
  assert_output_contains "key [redacted] | xxxxxxxx"
  [ "${#output}" -le 2048 ]
  [ "$(feedback | wc -c)" -le 2600 ]
  run grep -rl "$MODEL_KEY_VALUE" "$(sandbox_home)/.cr/turns.jsonl" "$(sandbox_home)/.cr/log" "$CLAUDE_STUB_DIR"/calls/*/feedback
  assert_failure 1
}

@test "a turn of an EPIC brief with no verdict line is asked for it once, then recorded as no verdict: wait exits 8" {
  gated brief.md
  assert_failure 8
  assert_output "cr-e2b: turn 2 ended without a verdict line (EPIC <id> READY <sha> <pr-url>, or BLOCKED): WORKER stub READY"
  [ "$(blocks)" -eq 1 ]
  feedback | grep -q "^End with one standalone line: EPIC wc-3 READY <full-sha> <pr-url> once the work is committed and pushed and its pull request is open, or EPIC wc-3 BLOCKED <reason>.$"
  run cr-e2b status --sandbox sbx1
  assert_output_contains "last turn 2 no-verdict (Claude Code exit 0): WORKER stub READY
verdict   none given after block 1 of 3
          this turn of brief EPIC wc-3 ended without its verdict line"
  run cr-e2b list
  assert_output_contains "no verdict: WORKER stub READY"
}

@test "a READY that did not hold, followed by no verdict even when asked, is undelivered on the READY's reasons" {
  brief turns.md 'STUB_SAY=if [ -e ~/said ]; then echo "I looked again."; else touch ~/said; echo "EPIC wc-3 READY 1234abcd https://h/pr/1"; fi'
  gated turns.md
  assert_failure 8
  [ "$(blocks)" -eq 2 ]
  run verdict_of
  run python3 -c 'import json, sys; v = json.loads(sys.argv[1]); print(v["state"], v["verdict"], v["reasons"][0])' "$output"
  assert_output "undelivered ready the clone is on main, not on the brief's branch $BRANCH"
}

@test "a BLOCKED verdict passes the gate as it is, and wait exits 5" {
  brief blocked.md "STUB_LAST=EPIC wc-3 BLOCKED needs the staging key"
  gated blocked.md
  assert_failure 5
  [ "$(blocks)" -eq 0 ]
  run verdict_of
  run python3 -c 'import json, sys; v = json.loads(sys.argv[1]); print(v["state"], v["verdict"])' "$output"
  assert_output "blocked blocked"
}

@test "the opening and questions are not gated" {
  start_worker
  wait_idle
  printf 'What does count_words do?\n' >question.md
  run cr-e2b brief --sandbox sbx1 --brief question.md
  wait_idle
  run verdict_of 1
  assert_output '{"state": "ok", "verdict": null}'
  run verdict_of 3
  assert_output '{"state": "ok", "verdict": null}'
  run bash -c 'cat "$CLAUDE_STUB_DIR"/calls/*/feedback | grep -c "^---$"'
  assert_output 1  # turn 2's brief, asked for its verdict
}

@test "--gate-tries 0 turns the gate off: a READY is not checked in the sandbox, only from here" {
  brief false.md "STUB_LAST=EPIC wc-3 READY 1234abcd https://git.example.com/you/app/pull/7"
  gated false.md --gate-tries 0
  assert_failure 8
  [ ! -e "$(sandbox_home)/.cr/checks" ]
  [ ! -e "$(sandbox_home)/.cr/settings.json" ]
  [ "$(blocks)" -eq 0 ]
  run cr-e2b list
  assert_output_contains "undelivered: $BRANCH is not on $TEST_DIR/origin"
  run cr-e2b status --sandbox sbx1
  assert_output_contains "verdict   not checked in the sandbox (--gate-tries 0)"
  delivering_brief ok.md
  run cr-e2b brief --sandbox sbx1 --brief ok.md
  wait_idle
  run cr-e2b wait --sandbox sbx1
  assert_success
  run cr-e2b list
  assert_output_contains "READY certified: $BRANCH at "
}

@test "where the hook cannot run, the runner checks the verdict after the turn" {
  brief nohook.md STUB_NO_HOOKS "STUB_LAST=EPIC wc-3 READY 1234abcd https://git.example.com/you/app/pull/7"
  gated nohook.md
  assert_failure 8
  run verdict_of
  run python3 -c 'import json, sys; v = json.loads(sys.argv[1]); print(v["state"], v["by"], v["blocks"], v["reasons"][0])' "$output"
  assert_output "undelivered after 0 the clone is on main, not on the brief's branch $BRANCH"
  brief holds.md STUB_NO_HOOKS "STUB_RUN=$COMMIT && $PUSH" "STUB_SAY=$SAY_READY"
  run cr-e2b brief --sandbox sbx1 --brief holds.md
  wait_idle
  run cr-e2b wait --sandbox sbx1
  assert_success
  run verdict_of 3
  run python3 -c 'import json, sys; v = json.loads(sys.argv[1]); print(v["state"], v["by"])' "$output"
  assert_output "ok after"
}

@test "a turn Claude Code ends over the gate's blocks is undelivered, with the last reasons" {
  # Claude Code lets a turn end after 9 blocks in a row; the gate would allow 20
  brief false.md "STUB_LAST=EPIC wc-3 READY 1234abcd https://git.example.com/you/app/pull/7"
  gated false.md --gate-tries 20
  assert_failure 8
  [ "$(blocks)" -eq 9 ]
  run verdict_of
  run python3 -c 'import json, sys; v = json.loads(sys.argv[1]); print(v["state"], v["by"], v["reasons"][0])' "$output"
  assert_output "undelivered after the clone is on main, not on the brief's branch $BRANCH"
}

@test "on GitHub the pull request must be open, from HEAD on the brief's branch, against the integration branch" {
  PR_URL=https://GitHub.com/you/App/pull/7 on_github "OPEN HEAD main $BRANCH"
  assert_success
  run verdict_of
  run python3 -c 'import json, sys; v = json.loads(sys.argv[1]); print(v["pr_checked"], v["pull_request"])' "$output"
  assert_output "True https://GitHub.com/you/App/pull/7"
}

@test "on GitHub a pull request of another repository blocks READY, whatever gh says of it" {
  PR_URL=https://github.com/someone/app/pull/7 on_github "OPEN HEAD main $BRANCH" --gate-tries 1
  assert_failure 8
  run verdict_of
  run field "$output" reasons
  assert_output '["the pull request https://github.com/someone/app/pull/7 is not in you/app"]'
}

@test "on GitHub a sandbox without the GitHub CLI blocks READY rather than take it unchecked" {
  for dir in /usr/local/bin /usr/bin /bin; do
    [ ! -x "$dir/gh" ] || skip "this machine has its own $dir/gh"
  done
  # setup's pr-tool step cannot download one either
  printf '#!/bin/sh\necho "curl: (6) Could not resolve host: github.com" >&2\nexit 6\n' >"$TEST_DIR/bin/curl"
  chmod +x "$TEST_DIR/bin/curl"
  GH_TEMPLATE=base on_github "OPEN HEAD main $BRANCH" --gate-tries 1
  assert_failure 8
  run verdict_of
  run field "$output" reasons
  assert_output '["the GitHub CLI is not in the sandbox, so the pull request could not be checked"]'
}

@test "on GitHub a closed pull request, or one from another commit or against another branch, blocks READY" {
  on_github "CLOSED 1234abcd1234abcd1234abcd1234abcd1234abcd release claude/other" --gate-tries 1
  assert_failure 8
  run verdict_of
  run field "$output" reasons
  assert_output "[\"the pull request https://github.com/you/app/pull/7 is CLOSED, not open\", \"the pull request https://github.com/you/app/pull/7 is from claude/other, not from $BRANCH\", \"the pull request's head is 1234abcd1234, not HEAD $(git -C "$(sandbox_home)/repo" rev-parse --short=12 HEAD)\", \"the pull request is against release, not main\"]"
}

@test "on GitHub a pull request gh cannot find blocks READY" {
  on_github "" --gate-tries 1
  assert_failure 8
  run verdict_of
  run field "$output" reasons
  assert_output '["gh pr view https://github.com/you/app/pull/7 found no pull request (exit 1): no pull requests found for https://github.com/you/app/pull/7"]'
}

@test "on GitHub a pull request gh answers for with nothing blocks READY, in one line" {
  on_github "   " --gate-tries 1
  assert_failure 8
  run verdict_of
  run field "$output" reasons
  assert_output '["gh pr view https://github.com/you/app/pull/7 found no pull request (exit 0)"]'
}

@test "--check is allowed to the worker, named in the opening and kept for the gate; control-room.json gives checks and tries" {
  make_repo
  printf '{"checks": ["npm test"], "gate_tries": 2, "check_timeout": 120}\n' >control-room.json
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo \
    --check 'npm run lint' --dry-run --json
  assert_success
  run python3 -c 'import json, sys; print(" ".join(json.loads(sys.argv[1])["agent_args"]))' "$output"
  assert_output "--permission-mode acceptEdits --allowedTools Bash(git:*) Bash(gh pr create:*) Bash(gh pr view:*) Bash(gh pr list:*) --allowedTools Bash(npm test:*) --allowedTools Bash(npm run lint:*) --settings /home/user/.cr/settings.json"
  with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --check 'npm run lint'
  assert_success
  home=$(sandbox_home)
  run tr '\0' '\n' <"$home/.cr/checks"
  assert_output "npm test
npm run lint"
  run grep -E '^(gate_tries|check_timeout) ' "$home/.cr/watch"
  assert_output "gate_tries 2
check_timeout 120"
  # the one hook: the sandbox side's gate, by the very line the caller sends
  run python3 -c 'import json, sys
settings = json.load(open(sys.argv[1]))
print(list(settings), list(settings["hooks"]), len(settings["hooks"]["Stop"]))
hooks = settings["hooks"]["Stop"][0]["hooks"]
print(len(hooks), hooks[0]["type"], hooks[0]["timeout"])
print(hooks[0]["command"])' "$home/.cr/settings.json"
  assert_output "['hooks'] ['Stop'] 1
1 command 540
$(sandbox_line gate hook)"
  grep -q 'must make pass before you report READY: `npm test`, `npm run lint`.' "$(turn_file 1 md)"
}

@test "with no checks start warns once that the worker cannot run the project's tests" {
  make_repo
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --dry-run
  assert_success
  [ "$stderr" = "cr-e2b: warning: no project checks: the worker cannot run the project's tests, and its READY is checked without them; give them with --check CMD or \"checks\" in control-room.json" ]
  with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo
  assert_success
  grep -q "No check commands were given for this project, so you may not be allowed to run its tests" "$(turn_file 1 md)"
}

@test "an EPIC brief for github.com without GITHUB_TOKEN warns that the work cannot leave the sandbox" {
  run --separate-stderr cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md \
    --check true --dry-run
  assert_success
  [ "$stderr" = "cr-e2b: warning: GITHUB_TOKEN is not set: the worker can clone a public repository but not push its branch or open its pull request, so its work cannot leave the sandbox" ]
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  run --separate-stderr cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md \
    --check true --dry-run
  [ -z "$stderr" ]
}

@test "checks and gate settings that cannot work are refused before any call" {
  rejects "--check-timeout 900 must be under --turn-idle 900" "${ok_args[@]}" --check 'npm test' --check-timeout 900
  rejects "--check takes one command on one line" "${ok_args[@]}" --check ' '
  rejects "--check holds the value of a secret" "${ok_args[@]}" --check "curl -H 'x-api-key: $MODEL_KEY_VALUE' h"
  printf '{"checks": "npm test"}\n' >control-room.json
  rejects "control-room.json: checks must be a list of commands (strings)" "${ok_args[@]}"
  printf '{"gate_tries": -1}\n' >control-room.json
  rejects "control-room.json: gate_tries must be a whole number of 0 or more" "${ok_args[@]}"
  rm control-room.json
  rejects "argument --gate-tries: not a whole number of 0 or more" "${ok_args[@]}" --gate-tries -1
}

@test "the gate and the runner agree with cr-e2b on what an EPIC brief and a verdict line are" {
  setup_runner
  mkdir -p "$SBX/.cr/queue"
  printf 'gate_tries 1\n' >"$SBX/.cr/watch"
  for line in "EPIC wc-3: branch claude/wc-3-x, scope a, grants b" "  EPIC proj-12.1: branch claude/p-1, scope ." \
      "EPIC wc-3 branch x" "epic wc-3: branch x" "WORKER backend READY" "What is EPIC wc-3: branch x?"; do
    printf '%s\n' "$line" >"$SBX/.cr/queue/000002.md"
    rm -f "$SBX"/.cr/queue/000002.{gate,asked,verdict}
    gate=$(printf '{"last_assistant_message":"none","background_tasks":[]}' |
      CR_TURN_BASE="$SBX/.cr/queue/000002" in_sandbox gate hook)
    python=$(PYTHONPATH="$ROOT" python3 -c 'import sys, cr_e2b; print(not cr_e2b.is_question(sys.argv[1].encode()))' "$line")
    echo "$python ${gate:+blocked}"
  done >"$TEST_DIR/agree"
  run cat "$TEST_DIR/agree"
  assert_output "True blocked
True blocked
False 
False 
False 
False "
}

@test "the gate and cr-e2b agree on what a BLOCKED verdict is: a word run on to BLOCKED is none, and asked for one" {
  setup_runner
  mkdir -p "$SBX/.cr/queue"
  printf 'gate_tries 1\n' >"$SBX/.cr/watch"
  printf 'EPIC wc-3: branch claude/wc-3-x, scope .\n' >"$SBX/.cr/queue/000002.md"
  for last in "EPIC wc-3 BLOCKED needs a key" "EPIC wc-3 BLOCKED: needs a key" "EPIC wc-3 BLOCKEDX" "EPIC wc-3 BLOCKED_ON key"; do
    rm -f "$SBX"/.cr/queue/000002.{gate,asked,verdict}
    gate=$(python3 -c 'import json, sys; print(json.dumps({"last_assistant_message": sys.argv[1]}))' "$last" |
      CR_TURN_BASE="$SBX/.cr/queue/000002" in_sandbox gate hook)
    python=$(PYTHONPATH="$ROOT" python3 -c 'import re, sys, cr_e2b; print(bool(re.match(cr_e2b.BLOCKED_LINE, sys.argv[1])))' "$last")
    echo "$python ${gate:+asked}"
  done >"$TEST_DIR/agree"
  run cat "$TEST_DIR/agree"
  assert_output "True 
True 
False asked
False asked"
}

@test "the gate and cr-e2b take the same characters as blank around an EPIC line" {
  setup_runner
  mkdir -p "$SBX/.cr/queue"
  printf 'gate_tries 1\n' >"$SBX/.cr/watch"
  # a sandbox's UTF-8 locale, where glibc counts an em space (not a no-break space) as a space
  export LC_ALL=C.UTF-8
  nbsp=$'\xc2\xa0' emsp=$'\xe2\x80\x83'
  # what the gate makes of turn 2: MESSAGE as its last message, BRIEF's first line
  judged() { # BRIEF MESSAGE
    printf '%s\nCount the words.\n' "$1" >"$SBX/.cr/queue/000002.md"
    rm -f "$SBX"/.cr/queue/000002.{gate,asked,verdict}
    printf '{"last_assistant_message":"done\\n%s","background_tasks":[]}' "$2" |
      CR_TURN_BASE="$SBX/.cr/queue/000002" in_sandbox gate hook >"$TEST_DIR/gate.out"
    if [ -e "$SBX/.cr/queue/000002.verdict" ]; then echo verdict
    elif [ -s "$TEST_DIR/gate.out" ]; then echo "asked for a verdict"
    else echo "not an EPIC brief"; fi
  }
  for lead in "$nbsp" "$emsp" $'\t' $'\v\f \r'; do
    judged "${lead}EPIC wc-3: branch claude/wc-3-x, scope ." "I looked."
  done >"$TEST_DIR/briefs"
  run cat "$TEST_DIR/briefs"
  assert_output "not an EPIC brief
not an EPIC brief
asked for a verdict
asked for a verdict"
  for lead in "$nbsp" "$emsp" '\t' ' '; do
    judged "EPIC wc-3: branch claude/wc-3-x" "${lead}EPIC wc-3 BLOCKED needs a key$lead"
  done >"$TEST_DIR/verdicts"
  run cat "$TEST_DIR/verdicts"
  assert_output "asked for a verdict
asked for a verdict
verdict
verdict"
  # the runner's first line of a brief, as its records keep it
  printf '%sEPIC wc-3: branch x\n' "$emsp" >"$SBX/.cr/inbox/em.md"
  printf '\tEPIC wc-3: branch y\n' >"$SBX/.cr/inbox/tab.md"
  in_sandbox enqueue "$SBX/.cr/inbox/em.md"
  in_sandbox enqueue "$SBX/.cr/inbox/tab.md"
  run sed -n 's/.*"first_line":"\([^"]*\)".*/\1/p' "$SBX/.cr/turns.jsonl"
  assert_output "${emsp}EPIC wc-3: branch x
EPIC wc-3: branch y"
}
