#!/usr/bin/env bats
# Certification from the caller's side: a READY counts when the real remote
# and GitHub say so, whatever the sandbox's records, gate or origin claim.

load test_helper

BRANCH=claude/wc-3-count
EPIC_BRIEF="EPIC wc-3: branch $BRANCH, scope src/, grants tests/"

# A worker of the fake started on acme/demo, whose turn 2 (of an EPIC brief)
# ended on LAST_LINE with a verdict record saying the gate passed it, which a
# worker can write itself: claimed_worker LAST_LINE [METADATA_JSON]. Its id is in $made.
claimed_worker() {
  local home
  made=$(python3 -c 'import json, sys, e2b; print(e2b.Sandbox.create(timeout=3600, metadata={"cr-e2b": "1",
    "profile": "backend", "repo": "https://github.com/acme/demo.git", "session": "s", "integration": "main",
    "prefix": "claude/", "gate_tries": "3", "checks": "[]", "max_cost": "", **json.loads(sys.argv[1])}).sandbox_id)' \
    "${2:-"{}"}")
  install_runner "$made"
  home=$(sandbox_home "$made")
  echo brief >"$home/.cr/queue/000002.md"
  : >"$home/.cr/queue/000002.ended"
  cat >"$home/.cr/turns.jsonl" <<EOF
{"turn":2,"event":"queued","at":"2026-11-29T10:00:00Z","prompt":"queue/000002.md","first_line":"$EPIC_BRIEF"}
{"turn":2,"event":"started","at":"2026-11-29T10:00:01Z","try":1,"flag":"--resume","log_at":0}
{"turn":2,"event":"result","result":{"type":"result","is_error":false,"result":"done\n$1","total_cost_usd":0.5}}
{"turn":2,"event":"verdict","at":"2026-11-29T10:00:08Z","verdict":"ready","ok":true,"by":"hook","blocks":0,"sha":"","head":"","branch":"$BRANCH","pull_request":"","pr_checked":true,"checks":[],"reasons":[]}
{"turn":2,"event":"ended","at":"2026-11-29T10:00:09Z","exit":0,"is_error":false,"denials":0,"reason":null,"log_end":0}
EOF
  rm -f "$FAKE_E2B_DIR/calls.jsonl"
}

# A commit on BRANCH pushed to the real repository; its sha on stdout.
pushed() {
  git -C "$TEST_DIR/src" checkout -q -B "$1" main
  git -C "$TEST_DIR/src" commit -q --allow-empty -m "work on $1 $(date +%s%N)"
  git -C "$TEST_DIR/src" push -q -f "$TEST_DIR/origin.git" "$1"
  git -C "$TEST_DIR/src" rev-parse HEAD
}

ready() { echo "EPIC wc-3 READY $1 ${2:-https://github.com/acme/demo/pull/12}"; }

# A worker whose READY the remote shows: $BRANCH pushed at $sha, pull request #12
# open from it, and the worker claiming just that.
open_ready_worker() {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha")]"
  claimed_worker "$(ready "$sha")"
}

# A brief whose worker points origin at a bare repository of its own, pushes
# there, and claims READY: elsewhere_brief FILE
elsewhere_brief() {
  cat >"$1" <<EOF
$EPIC_BRIEF
STUB_RUN=git init -q --bare "\$HOME/fake.git" && git remote set-url origin "\$HOME/fake.git" && git checkout -q -B $BRANCH && date +%s%N >count.txt && git add count.txt && git commit -qm count && git push -q origin $BRANCH && git fetch -q origin
STUB_SAY=echo "EPIC wc-3 READY \$(git rev-parse HEAD) https://git.example.com/you/app/pull/1"
EOF
}

# The watch's record of turn 2's pull request: ci_record STATE [ROUND [FAILING_JSON [SEEN_EPOCH]]]
ci_record() {
  printf '{"turn":2,"event":"ci","at":"2026-11-29T10:01:00Z","state":"%s","head":"x","pr":"u","round":%s,"rounds":3,"failing":%s,"queued":null,"seen":%s}\n' \
    "$1" "${2:-0}" "${3:-[]}" "${4:-null}" >>"$(sandbox_home "$made")/.cr/turns.jsonl"
}

# Turn N of the worker in $made answering a round: a READY the gate passed, after the
# watch's record of the round on turn N-1: round_turn N ROUND STATE FAILING_JSON LAST_LINE
round_turn() {
  local home
  home=$(sandbox_home "$made")
  printf 'round\n' >"$home/.cr/queue/$(printf %06d "$1").md"
  : >"$home/.cr/queue/$(printf %06d "$1").ended"
  cat >>"$home/.cr/turns.jsonl" <<EOF
{"turn":$(($1 - 1)),"event":"ci","at":"2026-11-29T1$2:01:00Z","state":"$3","head":"x","pr":"u","round":$2,"rounds":3,"failing":$4,"queued":$1,"seen":null}
{"turn":$1,"event":"queued","at":"2026-11-29T1$2:02:00Z","prompt":"queue/00000$1.md","first_line":"$EPIC_BRIEF"}
{"turn":$1,"event":"started","at":"2026-11-29T1$2:02:01Z","try":1,"flag":"--resume","log_at":0}
{"turn":$1,"event":"result","result":{"type":"result","is_error":false,"result":"$5","total_cost_usd":0.5}}
{"turn":$1,"event":"verdict","at":"2026-11-29T1$2:02:08Z","verdict":"ready","ok":true,"by":"hook","blocks":0,"sha":"","head":"","branch":"$BRANCH","pull_request":"","pr_checked":true,"checks":[],"reasons":[]}
{"turn":$1,"event":"ended","at":"2026-11-29T1$2:02:09Z","exit":0,"is_error":false,"denials":0,"reason":null,"log_end":0}
EOF
}

# e2b's metadata of a worker started on EPIC_BRIEF (its turn 2), as start gives it.
asked_metadata() {
  python3 -c 'import json, sys; print(json.dumps({"asked": json.dumps([{"epic": "wc-3", "branch": sys.argv[1],
    "scope": ["src/"], "grants": ["tests/"], "turn": 2}]), **json.loads(sys.argv[2])}))' "$BRANCH" "${1:-"{}"}"
}

@test "a READY the real remote and its pull request show is certified: wait exits 0, list and status say so" {
  open_ready_worker
  run --separate-stderr cr-e2b wait --sandbox "$made" --interval 0.1
  assert_success
  [ -z "$stderr" ]
  run cr-e2b list
  assert_output_contains "READY #12 no CI"
  run cr-e2b status --sandbox "$made"
  assert_output_contains "remote    READY certified: #12 at ${sha:0:7} on acme/demo"
  run cr-e2b status --sandbox "$made" --json
  run python3 -c 'import json, sys; c = json.loads(sys.argv[1])["last_turn"]["certified"]
print(c["ok"], c["code"], c["repo"], c["branch"], c["pull_request"], c["pr_checked"], c["reasons"])' "$output"
  assert_output "True 0 acme/demo $BRANCH 12 True []"
}

@test "a forged verdict record makes no READY of a branch the remote does not have: wait exits 8 and says why" {
  github_repo
  github_api
  github_pulls "[$(pull 12 "$BRANCH" 4b825dc642cb6eb9a060e54bf8d69288fbee4904)]"
  claimed_worker "$(ready 4b825dc642cb6eb9a060e54bf8d69288fbee4904)"
  run --separate-stderr cr-e2b wait --sandbox "$made" --interval 0.1
  assert_failure 8
  assert_one_error_line
  assert_output_contains "turn 2 ended but its work was not delivered: $BRANCH is not on acme/demo"
  run cr-e2b list
  assert_output_contains "undelivered: $BRANCH is not on acme/demo"
}

@test "a READY whose branch is elsewhere at the remote, or outside the prefix, is undelivered" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  pushed "$BRANCH" >/dev/null  # the remote's branch moved on
  github_pulls "[$(pull 12 "$BRANCH" "$sha")]"
  claimed_worker "$(ready "$sha")"
  run cr-e2b list
  assert_output_contains "undelivered: acme/demo's $BRANCH is at "
  assert_output_contains ", not at ${sha:0:12} (and 1 more reason)"
  claimed_worker "$(ready "$sha")" '{"prefix": "bot/"}'
  run cr-e2b wait --sandbox "$made"
  assert_failure 8
  run cr-e2b status --sandbox "$made"
  assert_output_contains "          $BRANCH is not under the branch prefix bot/"
}

@test "a READY's pull request must be this repository's, open, not a fork's, from its branch at its sha, against main" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  other=$(printf '%040d' 7)
  check() { # PULL_REQUEST_JSON URL REASON
    github_pulls "[$1]"
    claimed_worker "$(ready "$sha" "$2")"
    run cr-e2b status --sandbox "$made"
    assert_output_contains "          $3"
    run cr-e2b wait --sandbox "$made"
    assert_failure 8
  }
  check "$(pull 12 "$BRANCH" "$sha")" https://github.com/evil/demo/pull/12 \
    "the pull request https://github.com/evil/demo/pull/12 is not one of acme/demo's"
  check "$(pull 12 "$BRANCH" "$sha")" https://github.com.evil.example/acme/demo/pull/12 \
    "the pull request https://github.com.evil.example/acme/demo/pull/12 is not one of acme/demo's"
  check "$(pull 12 "$BRANCH" "$sha" CLOSED)" https://github.com/acme/demo/pull/12 "pull request #12 is closed, not open"
  check "$(pull 12 "$BRANCH" "$sha" OPEN main true)" https://github.com/acme/demo/pull/12 \
    "pull request #12 is from a fork, not from acme/demo"
  check "$(pull 12 claude/other "$sha")" https://github.com/acme/demo/pull/12 \
    "pull request #12 is from claude/other, not from $BRANCH"
  check "$(pull 12 "$BRANCH" "$other")" https://github.com/acme/demo/pull/12 \
    "pull request #12's head is 000000000000, not ${sha:0:12}"
  check "$(pull 12 "$BRANCH" "$sha" OPEN release)" https://github.com/acme/demo/pull/12 \
    "pull request #12 is against release, not main"
  check "$(pull 13 "$BRANCH" "$sha")" https://github.com/acme/demo/pull/12 "acme/demo has no pull request #12"
}

@test "a READY whose pull request was merged green at its sha stays delivered once the branch is deleted or moves on" {
  open_ready_worker
  github_pulls "[$(pull 12 "$BRANCH" "$sha" MERGED main false SUCCESS:test)]"
  git -C "$TEST_DIR/origin.git" branch -q -D "$BRANCH"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_success
  run cr-e2b list
  assert_output_contains "READY merged: #12 at ${sha:0:7} on acme/demo"
  pushed "$BRANCH" >/dev/null
  claimed_worker "$(ready "$sha")" '{"ci_rounds": "3"}'
  run cr-e2b status --sandbox "$made"
  assert_output_contains "READY merged: #12 at ${sha:0:7} on acme/demo"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_success
  github_pulls "[$(pull 12 "$BRANCH" "$(printf '%040d' 7)" MERGED)]"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  run cr-e2b status --sandbox "$made"
  assert_output_contains "pull request #12's head is 000000000000, not ${sha:0:12}"
}

@test "a merged pull request counts only merged green and after the worker started: red checks or an old merge are 8" {
  open_ready_worker
  github_pulls "[$(pull 12 "$BRANCH" "$sha" MERGED main false FAILURE:test)]"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "its pull request is not green: ci red test"
  github_pulls "[$(PULL_EXTRA='{"mergedAt": "2020-01-01T00:00:00Z"}' pull 12 "$BRANCH" "$sha" MERGED main false SUCCESS:test)]"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "pull request #12 was merged before this worker started: it is not its delivery"
}

@test "list asks GitHub once per repository for the whole fleet, and once more for pull requests that are not open" {
  github_repo
  github_api
  for n in 1 2 3; do
    sha[n]=$(pushed "claude/wc-$n-x")
  done
  github_pulls "[$(pull 1 claude/wc-1-x "${sha[1]}"), $(pull 2 claude/wc-2-x "${sha[2]}"), $(pull 3 claude/wc-3-x "${sha[3]}")]"
  for n in 1 2 3; do
    EPIC_BRIEF="EPIC wc-$n: branch claude/wc-$n-x, scope ., grants -" \
      claimed_worker "EPIC wc-$n READY ${sha[n]} https://github.com/acme/demo/pull/$n"
  done
  run cr-e2b list
  assert_success
  [ "$(grep -c 'READY #[123] no CI' <<<"$output")" -eq 3 ]
  run github_requests
  assert_output "OpenPulls"
  github_pulls "[$(pull 1 claude/wc-1-x "${sha[1]}" CLOSED), $(pull 2 claude/wc-2-x "${sha[2]}" MERGED), $(pull 3 claude/wc-3-x "${sha[3]}")]"
  rm "$TEST_DIR/github.log"
  run cr-e2b list
  [ "$(grep -c 'READY #3 no CI' <<<"$output")" -eq 1 ]
  [ "$(grep -c 'READY merged: #2' <<<"$output")" -eq 1 ]
  run github_requests
  assert_output "OpenPulls
Pulls"
}

@test "without GITHUB_TOKEN or GH_TOKEN a GitHub READY is not certified, and says so; GH_TOKEN serves as well" {
  open_ready_worker
  unset GITHUB_TOKEN
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "GitHub cannot be asked about the pull request: export GITHUB_TOKEN or GH_TOKEN"
  run github_requests
  assert_output ""
  export GH_TOKEN="$GITHUB_KEY_VALUE"
  run cr-e2b wait --sandbox "$made"
  assert_success
  run github_requests
  assert_output "OpenPulls"
}

@test "a GitHub that cannot be reached is ridden out for --retry-for, then wait exits 7; list says unconfirmed" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  claimed_worker "$(ready "$sha")"
  kill "$(cat "$TEST_DIR/github.pid")"
  run --separate-stderr cr-e2b wait --sandbox "$made" --retry-for 1
  assert_failure 7
  output=$stderr
  assert_output_contains "cannot reach GitHub (127.0.0.1)"
  run cr-e2b list
  assert_output_contains "unconfirmed: cannot reach GitHub (127.0.0.1)"
  run cr-e2b list --json
  run python3 -c 'import json, sys; print(json.loads(sys.argv[1])["sandboxes"][0]["exit_code"])' "$output"
  assert_output 7
  run --separate-stderr cr-e2b wait --sandbox "$made" --retry-for 0 --json
  assert_failure 7
  run python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["outcome"], d["exit_code"], d["last_turn"]["certified"]["code"])' "$output"
  assert_output "unconfirmed 7 7"
}

@test "the caller's token reaches git ls-remote from the environment, never on its command line" {
  open_ready_worker
  cat >"$TEST_DIR/bin/git" <<STUB
#!/bin/bash
printf '%s\n' "\$*" >>"$TEST_DIR/git-argv"
[ "\$CR_E2B_GIT_TOKEN" = "$GITHUB_KEY_VALUE" ] && echo token-in-env >>"$TEST_DIR/git-argv"
exec /usr/bin/git "\$@"
STUB
  chmod +x "$TEST_DIR/bin/git"
  run cr-e2b wait --sandbox "$made"
  assert_success
  run grep -c "$GITHUB_KEY_VALUE" "$TEST_DIR/git-argv"
  assert_output 0
  grep -q 'ls-remote -- https://github.com/acme/demo.git refs/heads/\*' "$TEST_DIR/git-argv"
  grep -q 'credential.https://github.com.helper=!f() {' "$TEST_DIR/git-argv"
  grep -qx token-in-env "$TEST_DIR/git-argv"
}

@test "a worker that replaced the verdict gate has no verdict, never 'gate off': wait exits 8" {
  cat >forged.md <<EOF
$EPIC_BRIEF
STUB_RUN=printf '\\njudge_turn = lambda *words: None\\n' >>"\$HOME/.cr/cr_e2b.py" && touch "\$CR_TURN_BASE.verdict" && git checkout -q -B $BRANCH && date +%s%N >count.txt && git add count.txt && git commit -qm count && git push -q origin $BRANCH
STUB_SAY=echo "EPIC wc-3 READY \$(git rev-parse HEAD) https://git.example.com/you/app/pull/1"
EOF
  start_worker forged.md --check true
  wait_idle
  run --separate-stderr cr-e2b wait --sandbox sbx1 --interval 0.1
  assert_failure 8
  assert_one_error_line
  assert_output_contains "turn 2 ended on a READY that has no verdict: the verdict gate is on, yet the sandbox holds no verdict of it"
  run cr-e2b list
  assert_output_contains "no verdict: the verdict gate is on"
}

@test "a push to a remote the worker set as origin is no delivery, and kill keeps the work the real remote lacks" {
  elsewhere_brief elsewhere.md
  start_worker elsewhere.md --gate-tries 0
  wait_idle
  run --separate-stderr cr-e2b wait --sandbox sbx1 --interval 0.1
  assert_failure 8
  assert_one_error_line
  assert_output_contains "$BRANCH is not on $TEST_DIR/origin"
  run --separate-stderr cr-e2b kill --sandbox sbx1
  assert_failure 9
  assert_one_error_line
  assert_output_contains "holds work that would be lost: 1 unpushed commit"
}

@test "a READY verified and certified stays READY when the cap is lowered below the spend with nothing held" {
  delivering_brief ok.md
  start_worker ok.md --check true --max-cost 5
  wait_idle
  run cr-e2b budget --sandbox sbx1 --max-cost 0.01
  assert_success
  run --separate-stderr cr-e2b wait --sandbox sbx1 --interval 0.1
  assert_success
  run cr-e2b list
  assert_output_contains "READY certified: $BRANCH at "
}

@test "a run that ended with exit 0 and no result is a failed turn in every view" {
  github_repo
  claimed_worker "unused"
  home=$(sandbox_home "$made")
  sed -i '/"event":"result"/d; /"event":"verdict"/d; s/"is_error":false/"is_error":null/' "$home/.cr/turns.jsonl"
  run cr-e2b wait --sandbox "$made"
  assert_failure 4
  run cr-e2b list
  assert_output_contains "failed"
}

@test "status and diff call a branch pushed only when the real remote has it, as kill does" {
  elsewhere_brief elsewhere.md
  start_worker elsewhere.md --gate-tries 0
  wait_idle
  run cr-e2b status --sandbox sbx1
  assert_output_contains "work      $BRANCH, not pushed, 1 unpushed commit"
  run cr-e2b diff --sandbox sbx1
  assert_output_contains "branch    $BRANCH, not pushed"
  assert_output_contains "unpushed  1 commit"
}

@test "log's last word on a READY is what the real remote says of it now, as status and wait say" {
  printf '%s\nSTUB_LAST=EPIC wc-3 READY 1234abcd https://git.example.com/you/app/pull/7\n' "$EPIC_BRIEF" >false.md
  start_worker false.md --gate-tries 0
  wait_idle
  run cr-e2b log --sandbox sbx1
  assert_success
  [ "${lines[-1]}" = "--- turn 2 undelivered: $BRANCH is not on $TEST_DIR/origin (asked of the remote now)" ]
  delivering_brief ok.md
  run cr-e2b brief --sandbox sbx1 --brief ok.md
  wait_idle
  run cr-e2b log --sandbox sbx1
  head=$(git -C "$TEST_DIR/origin.git" rev-parse --short=7 "$BRANCH")
  [ "${lines[-1]}" = "--- turn 3 READY certified: $BRANCH at $head on $TEST_DIR/origin (asked of the remote now)" ]
  run cr-e2b log --sandbox sbx1 --raw
  refute_output_contains "asked of the remote now"
}

@test "log's last word on a READY whose pull request is red says so, as list does" {
  github_api
  cat >red.md <<EOF
$EPIC_BRIEF
STUB_RUN=git checkout -q -B $BRANCH && date +%s%N >count.txt && git add count.txt && git commit -qm count && git push -q origin $BRANCH
STUB_SAY=echo "EPIC wc-3 READY \$(git rev-parse HEAD) https://github.com/acme/demo/pull/12"
EOF
  start_worker red.md --gate-tries 0
  wait_idle
  # started on the repository that https://github.com/acme/demo.git stands for (github_repo), as e2b keeps it
  git config --global url."$REPO".insteadOf https://github.com/acme/demo.git
  python3 -c 'import json, sys; info = json.load(open(sys.argv[1])); info["metadata"]["repo"] = "https://github.com/acme/demo.git"
json.dump(info, open(sys.argv[1], "w"))' "$FAKE_E2B_DIR/sandboxes/sbx1/info.json"
  sha=$(git -C "$TEST_DIR/origin.git" rev-parse "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false FAILURE:test)]"
  run cr-e2b log --sandbox sbx1
  assert_success
  [ "${lines[-1]}" = "--- turn 2 READY certified: #12 at ${sha:0:7} on acme/demo, ci red test (asked of the remote now)" ]
}

@test "wait 0 means green: a certified READY's pull request is waited for, and green is GitHub's word, not the sandbox's" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS)]"
  claimed_worker "$(ready "$sha")" '{"ci_rounds": "3"}'
  ci_record green
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_success
  run cr-e2b list
  assert_output_contains "READY #12 green"
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false FAILURE)]"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "turn 2's READY is certified, but its pull request is not green"
}

@test "a no-CI record counts only once GitHub shows no check and nothing new on the pull request for --ci-settle" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false "" "$(date -u +%Y-%m-%dT%H:%M:%SZ)")]"
  claimed_worker "$(ready "$sha")" '{"ci_rounds": "3", "ci_settle": "300"}'
  ci_record no-ci
  run --separate-stderr cr-e2b wait --sandbox "$made" --timeout 1 --interval 0.2
  assert_failure 6
  run cr-e2b list
  assert_output_contains "watching: #12: certified, no check on it yet"
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false "" "$(date -u -d '301 seconds ago' +%Y-%m-%dT%H:%M:%SZ)")]"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_success
  run cr-e2b list
  assert_output_contains "READY #12 no CI"
}

@test "a pull request red after its rounds is ci red, 8, naming the checks; one whose checks run keeps wait waiting" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false FAILURE:test,lint)]"
  claimed_worker "$(ready "$sha")" '{"ci_rounds": "3"}'
  ci_record red 2 '["test", "lint"]'
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  run cr-e2b list
  assert_output_contains "ci red 2/3: test, lint"
  cr-e2b kill --sandbox "$made" --force  # one pull request is one worker's
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false PENDING:test "$(date -u +%Y-%m-%dT%H:%M:%SZ)")]"
  claimed_worker "$(ready "$sha")" '{"ci_rounds": "3"}'
  ci_record watching
  home=$(sandbox_home "$made")
  python3 -c 'import time; time.sleep(30)' "$home/.cr" watch &
  echo $! >"$home/.cr/ci.pid"
  run --separate-stderr cr-e2b wait --sandbox "$made" --timeout 2 --interval 0.2
  assert_failure 6
  assert_output_contains ""
  [[ "$stderr" == *"still busy after 2 s: #12: certified, its checks running"* ]]
  run cr-e2b list
  assert_output_contains "watching: #12: certified, its checks running"
  # checks GitHub still runs are waited for, the watch or not: only GitHub says how they end
  kill "$(cat "$home/.cr/ci.pid")"
  run --separate-stderr cr-e2b wait --sandbox "$made" --timeout 1 --interval 0.2
  assert_failure 6
}

@test "a red check is ci red in every view, and wait waits while the watch can still bring it back to the worker" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false FAILURE:test)]"
  claimed_worker "$(ready "$sha")" '{"ci_rounds": "3"}'
  ci_record watching
  home=$(sandbox_home "$made")
  python3 -c 'import time; time.sleep(30)' "$home/.cr" watch &
  echo $! >"$home/.cr/ci.pid"
  run cr-e2b list
  assert_output_contains "watching: #12: certified, ci red test; the watch may bring it back to the worker"
  refute_output_contains "checks running"
  run --separate-stderr cr-e2b wait --sandbox "$made" --timeout 1 --interval 0.2
  assert_failure 6
  kill "$(cat "$home/.cr/ci.pid")"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "its pull request is not green: ci red test"
}

@test "checks pending past --ci-timeout are ci pending for as long as they have been, 8" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false PENDING:test "$(date -u -d '390 seconds ago' +%Y-%m-%dT%H:%M:%SZ)")]"
  claimed_worker "$(ready "$sha")" '{"ci_rounds": "3", "ci_timeout": "300"}'
  ci_record watching
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  run cr-e2b list
  assert_output_contains "left  ci pending 6m"
}

@test "a writer's review after the last round is changes requested in list, 8 for wait" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS)]"
  claimed_worker "$(ready "$sha")" '{"ci_rounds": "3"}'
  ci_record changes-requested 3
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  [[ "$stderr" == *"its pull request has a writer's word after the last round: changes requested"* ]]
  run cr-e2b list
  [[ "$output" == *"left  changes requested on #12" ]]
}

@test "status lists each round of the epic with what started it and what the worker answered, the earlier turns' too" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS)]"
  claimed_worker "$(ready "$sha")" '{"ci_rounds": "3"}'
  round_turn 3 1 round '["test", "lint"]' "Fixed.\nEPIC wc-3 READY 1111111 https://github.com/acme/demo/pull/12"
  round_turn 4 2 review '[]' "$(ready "$sha")"
  printf '{"turn":4,"event":"ci","at":"2026-11-29T12:05:00Z","state":"green","head":"x","pr":"u","round":2,"rounds":3,"failing":[],"queued":null,"seen":null}\n' \
    >>"$(sandbox_home "$made")/.cr/turns.jsonl"
  run cr-e2b status --sandbox "$made"
  assert_success
  run grep -E '^(ci|round) ' <<<"$output"
  assert_output <<EOF
ci        green
round 1   of 3: checks test, lint failed at 2026-11-29T11:01:00Z; turn 3 ok: EPIC wc-3 READY 1111111 https://github.com/acme/demo/pull/12
round 2   of 3: a writer's review or comment at 2026-11-29T12:01:00Z; turn 4 ok: $(ready "$sha")
EOF
}

@test "GitHub's API answering with a redirect does not take the token elsewhere: the redirect is not followed" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  claimed_worker "$(ready "$sha")"
  mkdir "$TEST_DIR/elsewhere"
  python3 "$FIXTURES/github_api.py" "$TEST_DIR/github.json" "$TEST_DIR/elsewhere/log" "$TEST_DIR/elsewhere/port" &
  echo $! >"$TEST_DIR/elsewhere/pid"
  eventually "a second server" test -s "$TEST_DIR/elsewhere/port"
  kill "$(cat "$TEST_DIR/github.pid")"
  FAKE_GITHUB_REDIRECT="http://127.0.0.1:$(cat "$TEST_DIR/elsewhere/port")/graphql" \
    python3 "$FIXTURES/github_api.py" "$TEST_DIR/github.json" "$TEST_DIR/github.log" "$TEST_DIR/redirecting.port" &
  echo $! >"$TEST_DIR/github.pid"
  eventually "the redirecting server" test -s "$TEST_DIR/redirecting.port"
  export CR_E2B_GITHUB_GRAPHQL="http://127.0.0.1:$(cat "$TEST_DIR/redirecting.port")/graphql"
  run --separate-stderr cr-e2b wait --sandbox "$made" --retry-for 0
  kill "$(cat "$TEST_DIR/elsewhere/pid")"
  assert_failure 7
  [[ "$stderr" == *"answered with a redirect, which is not followed"* ]]
  [ ! -e "$TEST_DIR/elsewhere/log" ]
}

@test "a worker that empties its records answers for the epic start asked: not delivered, whatever it says" {
  open_ready_worker
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  : >"$(sandbox_home "$made")/.cr/turns.jsonl"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "the sandbox holds no record of turn 2, which asked epic wc-3"
  run cr-e2b list
  assert_output_contains "undelivered: the sandbox holds no record of turn 2, which asked epic wc-3"
}

@test "a turn whose brief the worker rewrote into a question still answers for its epic" {
  open_ready_worker
  claimed_worker "all done, nothing to see" "$(asked_metadata)"
  sed -i 's/"first_line":"EPIC [^"]*"/"first_line":"what time is it?"/' "$(sandbox_home "$made")/.cr/turns.jsonl"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "turn 2 ended without a verdict line"
}

@test "a worker that claims another worker's green pull request under another epic is undelivered" {
  github_repo
  github_api
  sha=$(pushed claude/wc-9-other)
  github_pulls "[$(pull 13 claude/wc-9-other "$sha" OPEN main false SUCCESS:test)]"
  EPIC_BRIEF="EPIC wc-9: branch claude/wc-9-other, scope ., grants -" \
    claimed_worker "EPIC wc-9 READY $sha https://github.com/acme/demo/pull/13" "$(asked_metadata)"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  run cr-e2b list
  assert_output_contains "undelivered: the READY names epic wc-9, but the brief is epic wc-3"
  run cr-e2b status --sandbox "$made"
  assert_output_contains "pull request #13 is from claude/wc-9-other, not from $BRANCH"
}

@test "a fork's copy whose ~/.cr/fork is gone still cannot claim its parent's pull request" {
  open_ready_worker
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  mkdir -p "$HOME/.local/state/cr-e2b/workers"
  echo '{"copy": 2, "parent": "sbx1"}' >"$HOME/.local/state/cr-e2b/workers/$made.json"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "$BRANCH-copy2 is not on acme/demo"
}

@test "a paused fork copy still cannot claim its parent's pull request: its own branch is judged, not the brief's" {
  open_ready_worker
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  mkdir -p "$HOME/.local/state/cr-e2b/workers"
  echo '{"copy": 2, "parent": "sbx1"}' >"$HOME/.local/state/cr-e2b/workers/$made.json"
  run cr-e2b list
  end_of_life "$made"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "$BRANCH-copy2 is not on acme/demo"
  run cr-e2b list
  assert_output_contains "paused: at its lifetime's end: undelivered $BRANCH-copy2 is not on acme/demo"
}

@test "two workers claiming one pull request are both said so, in list and in wait --all" {
  open_ready_worker
  first=$made
  claimed_worker "$(ready "$sha")"
  run cr-e2b list
  assert_output_contains "$first  backend  -  1 turn  \$0.00"
  [ "$(grep -c "pull request #12 of acme/demo is claimed by" <<<"$output")" -eq 2 ]
  run --separate-stderr cr-e2b wait --all
  assert_failure 8
  [ "$(grep -c "is claimed by" <<<"$stderr")" -eq 2 ]
}

@test "two workers claiming one pull request are both said so when one of them is paused" {
  open_ready_worker
  first=$made
  claimed_worker "$(ready "$sha")"
  run cr-e2b list
  end_of_life "$made"
  run cr-e2b list
  [ "$(grep -c "pull request #12 of acme/demo is claimed by" <<<"$output")" -eq 2 ]
  run --separate-stderr cr-e2b wait --all
  assert_failure 8
  [ "$(grep -c "is claimed by" <<<"$stderr")" -eq 2 ]
}

@test "a second epic does not hide the first: list shows both, and a change asked on the first is not green" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  second=$(pushed claude/wc-4-more)
  github_pulls "[$(pull 8 "$BRANCH" "$sha" OPEN main false SUCCESS:test), $(pull 9 claude/wc-4-more "$second" OPEN main false SUCCESS:test)]"
  claimed_worker "$(ready "$sha" https://github.com/acme/demo/pull/8)" "$(asked_metadata)"
  home=$(sandbox_home "$made")
  echo brief >"$home/.cr/queue/000003.md"
  : >"$home/.cr/queue/000003.ended"
  cat >>"$home/.cr/turns.jsonl" <<JSON
{"turn":3,"event":"queued","at":"2026-11-29T11:00:00Z","prompt":"queue/000003.md","first_line":"EPIC wc-4: branch claude/wc-4-more, scope src/"}
{"turn":3,"event":"started","at":"2026-11-29T11:00:01Z","try":1,"flag":"--resume","log_at":0}
{"turn":3,"event":"result","result":{"type":"result","is_error":false,"result":"EPIC wc-4 READY $second https://github.com/acme/demo/pull/9","total_cost_usd":0.9}}
{"turn":3,"event":"verdict","at":"2026-11-29T11:00:08Z","verdict":"ready","ok":true,"by":"hook","blocks":0,"sha":"","head":"","branch":"claude/wc-4-more","pull_request":"","pr_checked":true,"checks":[],"reasons":[]}
{"turn":3,"event":"ended","at":"2026-11-29T11:00:09Z","exit":0,"is_error":false,"denials":0,"reason":null,"log_end":0}
JSON
  run cr-e2b list
  assert_output_contains "READY #9 green, +#8 green"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_success
  github_pulls "[$(PULL_EXTRA='{"reviewDecision": "CHANGES_REQUESTED"}' pull 8 "$BRANCH" "$sha" OPEN main false SUCCESS:test), $(pull 9 claude/wc-4-more "$second" OPEN main false SUCCESS:test)]"
  run cr-e2b list
  assert_output_contains "changes requested on #8, +#9 green"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  run cr-e2b status --sandbox "$made"
  assert_output_contains "epic      wc-3 (turn 2): changes requested on #8"
  assert_output_contains "epic      wc-4 (turn 3): READY #9 green"
}

@test "the files a READY changed outside its brief's scope and grants are named" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(PULL_EXTRA='{"files": {"nodes": [{"path": "src/counter/words.py"}, {"path": "tests/test_words.py"}, {"path": "README.md"}]}}' pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS:test)]"
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  run cr-e2b list
  assert_output_contains "READY #12 green · outside the brief's scope: README.md"
}

@test "a head with no check while its base branch has checks is never no CI: ci missing, 8, [skip ci] named" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  base='{"baseRef": {"target": {"statusCheckRollup": {"state": "SUCCESS", "contexts": {"nodes": [{"__typename": "CheckRun", "name": "test", "status": "COMPLETED", "conclusion": "SUCCESS"}]}}}}}'
  github_pulls "[$(PULL_EXTRA="$base" pull 12 "$BRANCH" "$sha")]"
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "ci missing no check ran on its head, though its base branch has: test"
  extra=$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); d["commits"] = {"nodes": [{"commit": {"message": "fix [skip ci]"}}]}; print(json.dumps(d))' "$base")
  github_pulls "[$(PULL_EXTRA="$extra" pull 12 "$BRANCH" "$sha")]"
  run cr-e2b list
  assert_output_contains "ci missing: no check ran on its head ([skip ci] in its message), though its base branch has: test"
}

@test "a check that completes at once is no green while the base branch's checks have not appeared" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  early='{"baseRef": {"target": {"statusCheckRollup": {"state": "SUCCESS", "contexts": {"nodes": [{"__typename": "CheckRun", "name": "test", "status": "COMPLETED", "conclusion": "SUCCESS"}]}}}}}'
  github_pulls "[$(PULL_EXTRA="$early" pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS:cla "$now")]"
  claimed_worker "$(ready "$sha")" "$(asked_metadata '{"ci_rounds": "3"}')"
  run --separate-stderr cr-e2b wait --sandbox "$made" --timeout 1 --interval 0.2
  assert_failure 6
  run cr-e2b list
  assert_output_contains "watching: #12: certified, its checks running"
  github_pulls "[$(PULL_EXTRA="$early" pull 12 "$BRANCH" "$sha" OPEN main false FAILURE:cla,test "$now")]"
  run cr-e2b list
  assert_output_contains "ci red cla, test"
}

@test "a head whose message skips CI is never no CI, even where the base branch has no checks: ci missing, 8" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(PULL_EXTRA='{"commits": {"nodes": [{"commit": {"message": "fix [skip ci]"}}]}}' pull 12 "$BRANCH" "$sha")]"
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "ci missing no check ran on its head ([skip ci] in its message)"
}

@test "a paused worker's green is GitHub's word now, not its last look's: changes asked since are 8, and list says so" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS:test)]"
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  run cr-e2b list
  assert_output_contains "READY #12 green"
  end_of_life "$made"
  github_pulls "[$(PULL_EXTRA='{"reviewDecision": "CHANGES_REQUESTED"}' pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS:test)]"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "its pull request is not green: changes requested on #12"
  run cr-e2b list
  assert_output_contains "paused: at its lifetime's end: changes requested on #12"
  run cr-e2b list --markdown
  assert_output_contains "| changes requested on \\#12 | \$0.00 | 0m00s left | paused at its lifetime's end: changes requested on \\#12 |"
  refute_output_contains "green"
}

@test "a paused worker is judged on every epic asked of it: changes asked since on its first epic's pull request are 8" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  sha4=$(pushed claude/wc-4-more)
  green="$(pull 13 claude/wc-4-more "$sha4" OPEN main false SUCCESS:test)"
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS:test), $green]"
  claimed_worker "$(ready "$sha")" "$(python3 -c 'import json; print(json.dumps({"asked": json.dumps([
    {"epic": "wc-3", "branch": "claude/wc-3-count", "scope": [], "grants": [], "turn": 2},
    {"epic": "wc-4", "branch": "claude/wc-4-more", "scope": [], "grants": [], "turn": 3}])}))')"
  printf 'brief\n' >"$(sandbox_home "$made")/.cr/queue/000003.md"
  : >"$(sandbox_home "$made")/.cr/queue/000003.ended"
  sed -e 's/"turn":2/"turn":3/' -e 's/000002/000003/' -e "s/EPIC wc-3: branch $(sed 's/\//\\\//g' <<<"$BRANCH")/EPIC wc-4: branch claude\/wc-4-more/" \
    -e "s/EPIC wc-3 READY $sha https:\/\/github.com\/acme\/demo\/pull\/12/EPIC wc-4 READY $sha4 https:\/\/github.com\/acme\/demo\/pull\/13/" \
    "$(sandbox_home "$made")/.cr/turns.jsonl" >>"$(sandbox_home "$made")/.cr/turns.jsonl.more"
  cat "$(sandbox_home "$made")/.cr/turns.jsonl.more" >>"$(sandbox_home "$made")/.cr/turns.jsonl"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_success
  run cr-e2b list
  end_of_life "$made"
  github_pulls "[$(PULL_EXTRA='{"reviewDecision": "CHANGES_REQUESTED"}' pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS:test), $green]"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "changes requested on #12"
  run cr-e2b list --json
  run python3 -c 'import json, sys; print(*(e["state"] for e in json.loads(sys.argv[1])["sandboxes"][0]["epics"]))' "$output"
  assert_output "changes-requested ok"
}

@test "a check that completes at once is no green for --ci-settle when the base branch has no checks" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS:build "$(date -u +%Y-%m-%dT%H:%M:%SZ)")]"
  claimed_worker "$(ready "$sha")" "$(asked_metadata '{"ci_rounds": "3", "ci_settle": "300"}')"
  run --separate-stderr cr-e2b wait --sandbox "$made" --timeout 1 --interval 0.2
  assert_failure 6
  run cr-e2b list
  assert_output_contains "watching: #12: certified, its checks running"
  github_pulls "[$(pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS:build "$(date -u -d '301 seconds ago' +%Y-%m-%dT%H:%M:%SZ)")]"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_success
}

@test "a head whose checks fail beyond the first 100 GitHub lists is ci red by GitHub's own state, not green" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  listed=$(python3 -c 'import json; print(json.dumps([{"__typename": "CheckRun", "name": "job%d" % n, "status": "COMPLETED",
    "conclusion": "SUCCESS", "startedAt": "2020-01-01T00:00:00Z"} for n in range(100)]))')
  rollup="{\"state\": \"FAILURE\", \"contexts\": {\"nodes\": $listed}}"
  github_pulls "[$(PULL_EXTRA="{\"commits\": {\"nodes\": [{\"commit\": {\"oid\": \"$sha\", \"message\": \"work\", \"statusCheckRollup\": $rollup}}]}}" pull 12 "$BRANCH" "$sha")]"
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "(checks beyond the first 100)"
}

@test "a writer's CHANGES_REQUESTED is GitHub's word too: not green with no watch, or a forged one" {
  open_ready_worker
  github_pulls "[$(PULL_EXTRA='{"reviewDecision": "CHANGES_REQUESTED"}' pull 12 "$BRANCH" "$sha" OPEN main false SUCCESS:test)]"
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  ci_record green
  run --separate-stderr cr-e2b wait --sandbox "$made"
  assert_failure 8
  assert_one_error_line
  assert_output_contains "its pull request is not green: changes requested"
}

@test "GitHub's rate limit is try again later: waited out to its reset within --retry-for, then 7, never 8" {
  export FAKE_GITHUB_LIMITED=1
  open_ready_worker
  run --separate-stderr cr-e2b wait --sandbox "$made" --retry-for 5
  assert_success
  assert_output_contains ""
  [[ "$stderr" == *"GitHub's rate limit for this token is spent"* ]]
  export FAKE_GITHUB_LIMITED=100
  kill "$(cat "$TEST_DIR/github.pid")"
  rm -f "$TEST_DIR/github.log"* "$TEST_DIR/github.port"
  github_api
  github_pulls "[$(pull 12 "$BRANCH" "$sha")]"
  run --separate-stderr cr-e2b wait --sandbox "$made" --retry-for 0
  assert_failure 7
  assert_one_error_line
  assert_output_contains "GitHub's rate limit for this token is spent"
}

@test "GitHub's secondary rate limit (a 403 with a retry-after) is try again later, 7, never 8" {
  export FAKE_GITHUB_SECONDARY=1
  open_ready_worker
  run --separate-stderr cr-e2b wait --sandbox "$made" --retry-for 0
  assert_failure 7
  assert_one_error_line
  assert_output_contains "GitHub's rate limit for this token is spent"
}

@test "a branch gone from the remote while GitHub is rate limited is try again later, 7 (merged and deleted, perhaps), not 8" {
  export FAKE_GITHUB_LIMITED=1000
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  git -C "$TEST_DIR/src" push -q "$TEST_DIR/origin.git" --delete "$BRANCH"
  claimed_worker "$(ready "$sha")" "$(asked_metadata)"
  run --separate-stderr cr-e2b wait --sandbox "$made" --retry-for 0
  assert_failure 7
  assert_one_error_line
  assert_output_contains "GitHub's rate limit for this token is spent"
}

@test "a READY GitHub cannot confirm for now while the sandbox's watch runs is work left, which supervise carries on" {
  export FAKE_GITHUB_LIMITED=1000
  open_ready_worker
  ci_record watching
  home=$(sandbox_home "$made")
  python3 -c 'import time; time.sleep(30)' "$home/.cr" watch &
  echo $! >"$home/.cr/ci.pid"
  run cr-e2b list --json --retry-for 0
  [ "$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["sandboxes"][0]["work_left"])' "$output")" = True ]
  end_of_life "$made"
  run --separate-stderr cr-e2b supervise --mine --once --retry-for 0
  assert_output_contains "resumed $made"
  kill "$(cat "$home/.cr/ci.pid")"
}

@test "a pull request GitHub could not give this time (an error on its alias) is no verdict: 7, not 8" {
  export FAKE_GITHUB_ALIAS_ERROR=1
  open_ready_worker
  github_pulls "[$(pull 12 "$BRANCH" "$sha" MERGED)]"
  run --separate-stderr cr-e2b wait --sandbox "$made" --retry-for 0
  assert_failure 7
  assert_one_error_line
  assert_output_contains "GitHub did not give pull request #12 this time"
}

@test "wait --all asks each repository once a round for all its workers, and a watched one every --ci-poll" {
  github_repo
  github_api
  sha=$(pushed "$BRANCH")
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for n in 1 2 3; do
    sha[n]=$(pushed "claude/wc-$n-x")
    EPIC_BRIEF="EPIC wc-$n: branch claude/wc-$n-x, scope ., grants -" \
      claimed_worker "EPIC wc-$n READY ${sha[n]} https://github.com/acme/demo/pull/$n" '{"ci_rounds": "3", "ci_poll": "60"}'
  done
  github_pulls "[$(pull 1 claude/wc-1-x "${sha[1]}" OPEN main false PENDING:test "$now"), $(pull 2 claude/wc-2-x "${sha[2]}" OPEN main false PENDING:test "$now"), $(pull 3 claude/wc-3-x "${sha[3]}" OPEN main false PENDING:test "$now")]"
  rm -f "$TEST_DIR/github.log"
  run --separate-stderr cr-e2b wait --all --timeout 3 --interval 0.2
  assert_failure 6
  run github_requests
  assert_output "OpenPulls"
}
