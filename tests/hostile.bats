#!/usr/bin/env bats
# Hostile text from the sandbox: terminal escapes shown and never obeyed, bytes
# that are not UTF-8, any JSON shape and any depth rendered.

load test_helper

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

@test "bytes of the log that are not UTF-8 are shown escaped, every one, under a strict UTF-8 stdout" {
  make_sandbox
  printf 'plain caf\xe9 \xff\xfe end\n{"type":"assistant","message":{"content":[{"type":"text","text":"say \xc3 \\ud800"}]}}\n' \
    >"$(sandbox_home)/.cr/log"
  export LC_ALL=C.UTF-8 PYTHONIOENCODING=utf-8:strict
  run --separate-stderr cr-e2b log --sandbox sbx1
  assert_success
  assert_output_contains 'plain caf\xe9 \xff\xfe end'
  assert_output_contains 'say \xc3 \ud800'
  run --separate-stderr cr-e2b log --sandbox sbx1 --follow --until-idle
  assert_success
  assert_output_contains 'plain caf\xe9 \xff\xfe end'
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
