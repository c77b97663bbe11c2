#!/usr/bin/env bats
# Trustworthy output under hostile text and flaky networks: keys masked before
# any line is cut, terminal escapes shown and never obeyed, any JSON shape
# rendered, network trouble ridden out, a retried brief run once.

load test_helper

# A 108-character model key, and a worker whose log and records hold it at
# columns where the tool cuts its lines.
with_long_key_history() {
  LONG_KEY="sk-LEAK-$(printf 'x%.0sAb9' $(seq 25))"
  export ANTHROPIC_API_KEY=$LONG_KEY
  make_sandbox
  local home filler
  home=$(sandbox_home)
  filler=$(printf 'w%.0s' $(seq 60))
  # each key starts some 20 characters before the place its line is cut
  cat >"$home/.cr/log" <<LOG
{"type":"cr-e2b","event":"turn-start","turn":1,"prompt":"queue/000001.md","first_line":"$filler${filler:0:20} $LONG_KEY","at":"2026-11-29T10:00:00Z"}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"$filler${filler:0:20} curl -H x-api-key:$LONG_KEY"}}]}}
{"type":"result","is_error":false,"duration_ms":5,"result":"done\\n$filler $LONG_KEY","total_cost_usd":0.1,"permission_denials":[]}
LOG
  cat >"$home/.cr/turns.jsonl" <<REC
{"turn":1,"event":"queued","at":"2026-11-29T10:00:00Z","prompt":"queue/000001.md","first_line":"$filler$filler$filler ${LONG_KEY:0:30}"}
{"turn":1,"event":"started","at":"2026-11-29T10:00:01Z","flag":"--session-id"}
{"turn":1,"event":"result","result":{"type":"result","is_error":false,"result":"done\\n$filler $LONG_KEY","total_cost_usd":0.1}}
{"turn":1,"event":"ended","at":"2026-11-29T10:00:02Z","exit":0,"is_error":false}
REC
  echo prompt >"$home/.cr/queue/000001.md"
  : >"$home/.cr/queue/000001.ended"
}

refute_key_prefix() {
  refute_output_contains "${LONG_KEY:0:8}"
}

@test "a long key is masked before any line is cut, in every view of the log and the records" {
  with_long_key_history
  for view in "log" "log --raw" "log --tail 1" "status" "status --json" "wait --json"; do
    # shellcheck disable=SC2086
    run cr-e2b $view --sandbox sbx1
    refute_key_prefix || { echo "in: $view" >&2; return 1; }
  done
  run cr-e2b log --sandbox sbx1
  assert_output_contains "ww [redacted]"
  assert_output_contains "curl -H x-api-key:[redacted]"
  assert_output_contains "--- turn 1 ok · 0.0 s · \$0.1000 session · $(printf 'w%.0s' $(seq 60)) [redacted]"
}

@test "a token far into a brief's first line never shows, whole or in part" {
  export GITHUB_TOKEN="ghp_LEAKCHECK_$(printf 'T%.0s' $(seq 30))"
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b %s %s\n' "$(printf 'p%.0s' $(seq 130))" "$GITHUB_TOKEN" >long.md
  rejects "the brief holds the value of a secret" --repo https://github.com/you/app.git --profile backend --brief long.md
  start_worker brief.md --gate-tries 0
  wait_idle
  # such a brief can still reach the sandbox some other way: queued there, as a brief is
  cp long.md "$(sandbox_home)/.cr/inbox/long.md"
  SBX=$(sandbox_home) in_sandbox enqueue "$(sandbox_home)/.cr/inbox/long.md" >/dev/null
  SBX=$(sandbox_home) in_sandbox kick
  wait_idle
  for view in "status --json" "wait --json" "log --turn 3"; do
    # shellcheck disable=SC2086
    run cr-e2b $view --sandbox sbx1
    refute_output_contains "${GITHUB_TOKEN:0:8}" || { echo "in: $view" >&2; return 1; }
  done
}

# A log whose agent tries to drive the terminal.
with_escapes() {
  make_sandbox
  local home
  home=$(sandbox_home)
  printf '%s\n' \
    '{"type":"cr-e2b","event":"turn-start","turn":1,"prompt":"queue/000001.md","first_line":"hi \u001b[31mred","at":"2026-11-29T10:00:00Z"}' \
    '{"type":"assistant","message":{"content":[{"type":"text","text":"\u001b[2K\u001b[1A--- turn 99 ok \u001b]0;pwned\u0007 \u009b2J"}]}}' \
    '{"type":"result","is_error":false,"duration_ms":5,"result":"\u001b[2Kdone","total_cost_usd":0.1,"permission_denials":[]}' \
    >"$home/.cr/log"
  printf 'installer \033[2J\033]0;title\007 said\n' >>"$home/.cr/log"
}

@test "terminal escapes from the sandbox are shown escaped by log and status, to a pipe too" {
  with_escapes
  run cr-e2b log --sandbox sbx1
  assert_success
  assert_output <<'OUT'
=== turn 1 · 2026-11-29T10:00:00Z · hi \x1b[31mred
    \x1b[2K\x1b[1A--- turn 99 ok \x1b]0;pwned\x07 \x9b2J
installer \x1b[2J\x1b]0;title\x07 said
--- turn 1 ok · 0.0 s · $0.1000 session · \x1b[2Kdone
OUT
  echo '{"turn":1,"event":"result","result":{"type":"result","is_error":false,"result":"\u001b]0;t\u0007 ok"}}' >>"$(sandbox_home)/.cr/turns.jsonl"
  echo '{"turn":1,"event":"ended","at":"2026-11-29T10:00:02Z","exit":0,"is_error":false}' >>"$(sandbox_home)/.cr/turns.jsonl"
  run cr-e2b status --sandbox sbx1
  assert_output_contains 'last turn 1 ok (Claude Code exit 0): \x1b]0;t\x07 ok'
  refute_output_contains $'\033'
  run cr-e2b status --sandbox sbx1 --json
  refute_output_contains $'\033'
  assert_output_contains '"last_line": "\u001b]0;t\u0007 ok"'
}

@test "log --raw gives the bytes as stored to a pipe, and escapes them on a terminal" {
  with_escapes
  run cr-e2b log --sandbox sbx1 --raw --tail 1
  assert_output $'installer \033[2J\033]0;title\007 said'
  run script -qec "cr-e2b log --sandbox sbx1 --raw --tail 1" /dev/null
  refute_output_contains $'\033[2J'
  assert_output_contains 'installer \x1b[2J\x1b]0;title\x07 said'
}

@test "diff escapes the sandbox's terminal escapes on a terminal, and gives a pipe the patch byte for byte" {
  start_worker
  wait_idle
  printf 'moved \033[2A\033[2K erased \033]52;c;cm0gLXJmIH4=\007 \xff\n' >"$(sandbox_home)/repo/hostile.txt"
  run script -qec "cr-e2b diff --sandbox sbx1" /dev/null
  assert_success
  refute_output_contains $'\033'
  assert_output_contains '+moved \x1b[2A\x1b[2K erased \x1b]52;c;cm0gLXJmIH4=\x07 \xff'
  cr-e2b diff --sandbox sbx1 | LC_ALL=C sed '1,/^$/d' >change.patch
  git clone -q "$TEST_DIR/origin.git" restored
  git -C restored apply "$PWD/change.patch"
  cmp restored/hostile.txt "$(sandbox_home)/repo/hostile.txt"
}

@test "diff on a terminal says Binary files differ for a binary file, and gives a pipe its binary patch" {
  start_worker
  wait_idle
  printf 'bin\000\001\377ary\033[2J' >"$(sandbox_home)/repo/blob.bin"
  run script -qec "cr-e2b diff --sandbox sbx1" /dev/null
  assert_success
  assert_output_contains "Binary files /dev/null and b/blob.bin differ"
  refute_output_contains "GIT binary patch"
  run cr-e2b diff --sandbox sbx1
  assert_output_contains "GIT binary patch"
}

@test "log renders every odd JSON shape as something and prints the rest" {
  make_sandbox
  printf '%s\n' \
    '{"type":"assistant","message":{"content":"a string"}}' \
    '{"type":"assistant","message":{"content":["not a block", 3, null]}}' \
    '{"type":"assistant","message":{"content":[{"type":"text","text":42}]}}' \
    '{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":null}]}}' \
    '{"type":"result","result":["not", "text"],"permission_denials":"all of them","total_cost_usd":"free"}' \
    '{"type":{"nested":true}}' \
    '[1, 2, 3]' \
    '{"type":"assistant","message":{"content":[{"type":"text","text":"still here"}]}}' \
    >"$(sandbox_home)/.cr/log"
  run cr-e2b log --sandbox sbx1
  assert_success
  assert_output <<'OUT'
    42
 !! tool error  
[1, 2, 3]
    still here
--- turn None ok · ? · ["not", "text"]
OUT
}

@test "wait rides out a network outage: one line when it starts, one when it is over" {
  delivering_brief delivers.md
  start_worker delivers.md
  wait_idle
  for version in 2.51 2.63; do
    rm -f "$FAKE_E2B_DIR"/used-*
    FAKE_E2B_VERSION=$version FAKE_E2B_FAIL=command-network:2 run --separate-stderr cr-e2b wait --sandbox sbx1 --interval 0.2
    assert_success
    [ "$stderr" = "cr-e2b: warning: lost touch with sandbox sbx1 (cannot reach sandbox sbx1 (network): [Errno 111] Connection refused); retrying for up to 120 s
cr-e2b: warning: back in touch with sandbox sbx1 after 3 s" ] || { echo "$version: $stderr" >&2; return 1; }
  done
}

@test "after --retry-for, wait and log --follow give up with exit 7, on both SDK versions" {
  start_worker
  wait_idle
  for version in 2.51 2.63; do
    export FAKE_E2B_VERSION=$version FAKE_E2B_FAIL=command-network:1000
    run --separate-stderr cr-e2b wait --sandbox sbx1 --interval 0.2 --retry-for 2
    assert_failure 7
    [ "${stderr_lines[1]}" = "cr-e2b: cannot reach sandbox sbx1 (network): [Errno 111] Connection refused" ]
    run --separate-stderr cr-e2b log --sandbox sbx1 --follow --retry-for 1
    assert_failure 7
    run --separate-stderr cr-e2b status --sandbox sbx1
    assert_failure 7
    assert_one_error_line
  done
}

@test "a brief whose answer was lost is retried once and runs exactly once" {
  start_worker
  wait_idle
  printf 'a question\n' >q.md
  FAKE_E2B_FAIL=command-lost:enqueue run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md
  assert_success
  assert_output "queued as turn 3, 0 ahead of it"
  wait_idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 3 ]
}

@test "brief --id makes a retried CI job's brief safe: it is queued once" {
  start_worker
  wait_idle
  printf 'a question\n' >q.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md --id ci-job-42
  assert_output "queued as turn 3, 0 ahead of it"
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md --id ci-job-42 --json
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["turn"], d["already_queued"])' "$output"
  assert_output "3 True"
  wait_idle
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md --id ci-job-43
  assert_output "queued as turn 4, 0 ahead of it"
  wait_idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 4 ]
}

@test "wait --timeout waits the time given, shortening its last sleep" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nSTUB_BLOCK\n' >held.md
  start_worker held.md
  hold_stub
  turn_started 2
  t0=$(date +%s%N)
  run cr-e2b wait --sandbox sbx1 --timeout 2 --interval 5
  took=$(( ($(date +%s%N) - t0) / 1000000 ))
  assert_failure 6
  [ "$took" -ge 2000 ]
  [ "$took" -lt 4000 ]
  release_stub
}

@test "--debug works after the verb, and a global option out of place is one usage line" {
  run --separate-stderr cr-e2b status --sandbox nosuch --debug
  assert_failure 3
  [[ "$stderr" == *Traceback* ]]
  [[ "$stderr" == *"no such sandbox: nosuch"* ]]
  run --separate-stderr cr-e2b log --version --sandbox sbx1
  assert_failure 2
  assert_one_error_line
  assert_output_contains "unrecognized arguments: --version"
}

@test "a log line or a result nested 50,000 deep shows as text, and the rest of the log still shows" {
  delivering_brief delivers.md
  start_worker delivers.md
  wait_idle
  home=$(sandbox_home)
  python3 -c 'import sys; n = 50000; sys.stdout.write("[" * n + "\"deep\"" + "]" * n + "\n")' >deep.line
  cat deep.line >>"$home/.cr/log"
  echo '{"type":"assistant","message":{"content":[{"type":"text","text":"after the deep line"}]}}' >>"$home/.cr/log"
  printf '{"turn":2,"event":"result","result":%s}\n' "$(cat deep.line)" >>"$home/.cr/turns.jsonl"
  run --separate-stderr cr-e2b log --sandbox sbx1
  assert_success
  assert_output_contains '[[[[[[[[[['
  assert_output_contains "    after the deep line"
  run --separate-stderr cr-e2b log --sandbox sbx1 --tail 1
  assert_success
  assert_output "    after the deep line"
  run --separate-stderr cr-e2b status --sandbox sbx1
  assert_success
  run --separate-stderr cr-e2b wait --sandbox sbx1
  assert_success
}

@test "names added to the masker from many threads at once are all masked" {
  run env PYTHONPATH="$ROOT" python3 -c 'import os, threading, cr_e2b
names = [f"CR_TEST_SECRET_{i}" for i in range(200)]
for name in names:
    os.environ[name] = f"value-of-{name}-0123456789"
# many known values make each merge take longer than a thread switch
cr_e2b.MASK.add_values([f"known-value-{i:06d}" for i in range(50000)])
start = threading.Barrier(len(names))
def add(name):
    start.wait()
    cr_e2b.MASK.add([name])
threads = [threading.Thread(target=add, args=(name,)) for name in names]
for t in threads: t.start()
for t in threads: t.join()
print(sum(os.environ[name] not in cr_e2b.MASK.values for name in names))'
  assert_output 0
}
