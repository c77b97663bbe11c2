#!/usr/bin/env bats
# `cr-e2b revive`: a worker whose sandbox e2b lost continues in a new one, from
# the checkpoint its runner keeps on the repository, with nothing lost.

load test_helper

# Waits until the runner has pushed the checkpoint taken as turn N ended.
checkpointed() { # N [SANDBOX]
  eventually "turn $1's checkpoint" grep -q "\"reason\":\"turn $1 ended\".*\"pushed\":true" "$(sandbox_home "${2:-sbx1}")/.cr/turns.jsonl"
}

# A worker whose turn 2 committed without pushing and left a file uncommitted,
# whose turn 3 runs (held until release_stub) and whose turn 4 waits behind it.
lost_mid_turn() {
  hold_stub
  cat >work.md <<'BRIEF'
EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/
STUB_RUN=git checkout -q -B claude/wc-3-count && echo one >one.txt && git add one.txt && git commit -qm one && echo draft >draft.txt
STUB_LAST=EPIC wc-3 BLOCKED waiting for the next brief
BRIEF
  start_worker work.md
  turn_ended 2
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nthe third\nSTUB_BLOCK\n' >third.md
  printf 'a question, fourth\n' >fourth.md
  cr-e2b brief --sandbox sbx1 --brief third.md
  turn_started 3
  cr-e2b brief --sandbox sbx1 --brief fourth.md
  run cr-e2b list
  python3 -c 'import e2b; e2b.Sandbox.kill("sbx1")'
}

@test "revive continues a lost worker in a new sandbox: the same session, the lost turn again, then the next, its work" {
  lost_mid_turn
  run --separate-stderr cr-e2b revive sbx1
  assert_success
  [ "${lines[0]}" = "sandbox  sbx2" ]
  [[ "${lines[1]}" == "revived  from sbx1, 2nd life, session "*": 4 turns kept, 2 briefs to run (turn 3 again), 1 commit, 1 file not committed, the transcript's "* ]]
  turn_started 3 "$(sandbox_home sbx2)"
  release_stub
  wait_idle sbx2
  # the model saw the lost turn's brief again, then the next, each once more, in the one session
  run bash -c 'for c in "$CLAUDE_STUB_DIR"/calls/*; do grep -v "^EPIC" "$c/stdin" | head -n 1 | cut -c 1-20; done'
  assert_output_contains "the third
the third
a question, fourth"
  run grep -c "session-id" "$CLAUDE_STUB_DIR"/calls/*/argv
  refute_output_contains ":2"
  home=$(sandbox_home sbx2)
  run git -C "$home/repo" log --format=%s claude/wc-3-count -1
  assert_output one
  run cat "$home/repo/draft.txt"
  assert_output draft
}

@test "revive asks e2b first: a sandbox e2b still has is refused, and a network failure is exit 7" {
  start_worker
  wait_idle
  run --separate-stderr cr-e2b revive sbx1
  assert_failure 2
  assert_one_error_line
  assert_output_contains "sandbox sbx1 is not lost: e2b has it, running"
  export FAKE_E2B_FAIL=api-network:5
  run --separate-stderr cr-e2b revive sbx1
  assert_failure 7
}

@test "a lost worker that left no checkpoint is said so in one line, with the branches it pushed" {
  start_worker
  wait_idle
  checkpointed 2
  git -C "$TEST_DIR/origin.git" for-each-ref --format='delete %(refname)' refs/cr-e2b/ | git -C "$TEST_DIR/origin.git" update-ref --stdin
  python3 -c 'import e2b; e2b.Sandbox.kill("sbx1")'
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run --separate-stderr cr-e2b revive sbx1
  assert_failure 1
  assert_one_error_line
  assert_output_contains "sandbox sbx1 left no checkpoint on $TEST_DIR/origin: its session and queue are lost with it, and what it pushed is there (its branches: claude/wc-3-count)"
  run calls
  refute_output_contains Sandbox.create
}

@test "a worker started elsewhere, or revived already, is refused before anything is made" {
  run --separate-stderr cr-e2b revive sbx9
  assert_failure 2
  assert_output ""
  [[ "$stderr" == "cr-e2b: sandbox sbx9: this machine keeps no record of how it was started"* ]]
  lost_mid_turn
  cr-e2b revive sbx1 >/dev/null
  run --separate-stderr cr-e2b revive sbx1
  assert_failure 2
  [ "$stderr" = "cr-e2b: sandbox sbx1 was revived already: its worker lives on as sbx2" ]
}

@test "a checkpoint holds no key's value, and is on no branch the remote's CI or pull requests see" {
  # the worker writes the model's key into a file it does not commit
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nSTUB_RUN=printenv ANTHROPIC_API_KEY >leak.txt\n' >leaky.md
  start_worker leaky.md
  wait_idle
  checkpointed 2
  run git -C "$TEST_DIR/origin.git" for-each-ref --format='%(refname)'
  assert_output_contains "refs/cr-e2b/checkpoints/sbx1"
  refute_output_contains "refs/heads/cr-e2b"
  run git -C "$TEST_DIR/origin.git" show refs/cr-e2b/checkpoints/sbx1:uncommitted.patch
  assert_output_contains "+++ b/leak.txt"
  refute_output_contains "$MODEL_KEY_VALUE"
  run bash -c "git -C '$TEST_DIR/origin.git' archive refs/cr-e2b/checkpoints/sbx1 | tar -xO | grep -c '$MODEL_KEY_VALUE'"
  assert_output 0
}

@test "status, log and wait of a lost worker say how to continue it; a killed one's say only that it is gone" {
  start_worker
  wait_idle
  python3 -c 'import e2b; e2b.Sandbox.kill("sbx1")'
  for verb in status log wait; do
    run --separate-stderr cr-e2b "$verb" sbx1
    assert_failure 3
    [ "$stderr" = "cr-e2b: no such sandbox: sbx1: e2b has it no more (lost, or ended by its lifetime); cr-e2b revive sbx1 continues its worker" ]
  done
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo
  cr-e2b kill sbx2 --force
  run --separate-stderr cr-e2b status sbx2
  assert_failure 3
  [ "$stderr" = "cr-e2b: no such sandbox: sbx2 (unknown, expired or killed)" ]
}
