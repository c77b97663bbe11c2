#!/usr/bin/env bats
# `cr-e2b log`: the worker's event stream, rendered, raw, limited and followed.

load test_helper

with_worker_log() {
  make_sandbox
  cp "$FIXTURES/streams/worker.log" "$(sandbox_home)/.cr/log"
}

@test "log renders one readable line per event, and prints other lines as they are" {
  with_worker_log
  run cr-e2b log --sandbox sbx1
  assert_success
  assert_output <<'OUT'
Installing Claude Code native build latest...
=== turn 1 · 2026-11-29T10:00:00Z · # You are the backend worker of a control room
    claude-opus-5-5 · acceptEdits · claude 2.1.332
    I will run a command.
    Bash  echo MOCK_BASH_RAN > mock_bash_ran.txt && cat mock_bash_ran.txt
    Profile checked.
    WORKER backend READY
--- turn 1 ok · 0.4 s · $0.1019 session · WORKER backend READY
=== turn 2 · 2026-11-29T10:00:03Z · EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/
    claude-opus-5-5 · acceptEdits · claude 2.1.332
    I will run a command.
    Bash  git push origin claude/wc-3-count
 !! denied  Bash  git push origin claude/wc-3-count
    I could not push; the key I was given is [redacted].
    EPIC wc-3 READY 4b825dc642cb6eb9a060e54bf8d69288fbee4904 https://git.example.com/team/app/pull/7
--- turn 2 undelivered · 0.1 s · $0.2563 session · 1 denial · denied: git push origin claude/wc-3-count · EPIC wc-3 READY 4b825dc642cb6eb9a060e54bf8d69288fbee4904 https://git.example.com/team/app/pull/7
=== turn 3 · 2026-11-29T10:02:00Z · are you stuck?
    claude-opus-5-5 · default · claude 2.1.332
 !! API retry 1/10: 529 overloaded (next in 0.6 s)
 !! API retry 2/10: 529 overloaded (next in 1.1 s)
    API Error: 529 mock error 529. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:43267).
--- turn 3 error · 183.7 s · $0.1527 session · API Error: 529 mock error 529. This is a server-side issue, usually temporary — try again in a mome…
=== turn 4 · 2026-11-29T10:06:00Z · EPIC wc-4: branch claude/wc-4-docs, scope docs/, grants -
    claude-opus-5-5 · acceptEdits · claude 2.1.332
    line one
    EPIC wc-4 BLOCKED need write access to docs/
--- turn 4 blocked · 0.1 s · $0.1527 session · EPIC wc-4 BLOCKED need write access to docs/
=== turn 5 · 2026-11-29T10:07:00Z · one more thing
{"type":"assistant","message":{"content":[{"type":"te
Error: something went badly wrong
--- turn 5 ended without a result · exit 137
OUT
}

@test "log masks a key the agent printed, in rendered and raw output" {
  with_worker_log
  grep -q "$MODEL_KEY_VALUE" "$(sandbox_home)/.cr/log"
  run cr-e2b log --sandbox sbx1
  refute_output_contains "$MODEL_KEY_VALUE"
  run cr-e2b log --sandbox sbx1 --raw
  refute_output_contains "$MODEL_KEY_VALUE"
  assert_output_contains "the key I was given is [redacted]."
}

@test "log masks the sandbox's forwarded secrets by name, even when this shell has other keys" {
  with_worker_log
  export PROXY_AUTH="proxy-LEAKCHECK-value-123"
  printf 'PROXY_AUTH\n' >>"$(sandbox_home)/.cr/secret-names"
  echo "the proxy said proxy-LEAKCHECK-value-123" >>"$(sandbox_home)/.cr/log"
  run cr-e2b log --sandbox sbx1 --tail 1
  assert_output "the proxy said [redacted]"
}

@test "log --raw prints the log as stored" {
  with_worker_log
  run cr-e2b log --sandbox sbx1 --raw
  assert_success
  assert_output "$(sed "s/$MODEL_KEY_VALUE/[redacted]/" "$FIXTURES/streams/worker.log")"
}

@test "log --turn shows one turn only" {
  with_worker_log
  run cr-e2b log --sandbox sbx1 --turn 4
  assert_output <<'OUT'
=== turn 4 · 2026-11-29T10:06:00Z · EPIC wc-4: branch claude/wc-4-docs, scope docs/, grants -
    claude-opus-5-5 · acceptEdits · claude 2.1.332
    line one
    EPIC wc-4 BLOCKED need write access to docs/
--- turn 4 blocked · 0.1 s · $0.1527 session · EPIC wc-4 BLOCKED need write access to docs/
OUT
  run cr-e2b log --sandbox sbx1 --turn 5 --raw
  assert_output "$(sed -n '31,34p' "$FIXTURES/streams/worker.log")"
}

@test "log --tail shows the last lines" {
  with_worker_log
  run cr-e2b log --sandbox sbx1 --tail 2
  assert_output <<'OUT'
Error: something went badly wrong
--- turn 5 ended without a result · exit 137
OUT
}

@test "log costs three calls: its state, the connect and one command" {
  with_worker_log
  run cr-e2b log --sandbox sbx1
  run calls
  assert_output "Sandbox.get_info
Sandbox.connect
commands.run"
}

@test "log of an empty log prints nothing and succeeds" {
  make_sandbox
  run cr-e2b log --sandbox sbx1
  assert_success
  assert_output ""
}

@test "colour only on a terminal, and never with NO_COLOR" {
  with_worker_log
  run script -qec "cr-e2b log --sandbox sbx1 --turn 4" /dev/null
  assert_output_contains $'\033[1m=== turn 4'
  run script -qec "NO_COLOR=1 cr-e2b log --sandbox sbx1 --turn 4" /dev/null
  refute_output_contains $'\033['
  run cr-e2b log --sandbox sbx1 --turn 4
  refute_output_contains $'\033['
}

# Waits (up to 30 s) until the follower has made N polls (commands), so that
# what the test writes next arrives between two of them.
polls_made() { eventually "poll $1" polls_at_least "$1"; }
polls_at_least() { [ "$(calls | grep -c commands.run)" -ge "$1" ]; }

# A process that looks like a live runner to `peek`.
fake_live_runner() {
  bash -c 'exec -a "runner drain" sleep 60' &
  echo $! >"$(sandbox_home)/.cr/runner.pid"
}

@test "log --follow prints new output as it comes, fetching only new bytes, until idle" {
  make_sandbox
  home=$(sandbox_home)
  echo prompt >"$home/.cr/queue/000001.md"
  fake_live_runner
  sed -n '2,8p' "$FIXTURES/streams/worker.log" >"$home/.cr/log"
  cr-e2b log --sandbox sbx1 --follow --until-idle --interval 0.2 >followed.txt &
  follower=$!
  polls_made 1
  sed -n '9,10p' "$FIXTURES/streams/worker.log" >>"$home/.cr/log"
  printf '{"type":"assistant","message":{"content":[{"type":"text","text":"half a li' >>"$home/.cr/log"
  polls_made 3
  printf 'ne"}]}}\n' >>"$home/.cr/log"
  polls_made 5
  : >"$home/.cr/queue/000001.ended"
  wait "$follower"
  run cat followed.txt
  assert_output <<'OUT'
=== turn 1 · 2026-11-29T10:00:00Z · # You are the backend worker of a control room
    claude-opus-5-5 · acceptEdits · claude 2.1.332
    I will run a command.
    Bash  echo MOCK_BASH_RAN > mock_bash_ran.txt && cat mock_bash_ran.txt
    Profile checked.
    WORKER backend READY
--- turn 1 ok · 0.4 s · $0.1019 session · WORKER backend READY
=== turn 2 · 2026-11-29T10:00:03Z · EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/
    half a line
OUT
  # every byte of the log was fetched once: the chunks add up to its size
  run python3 -c 'import base64, json, sys
chunks = [base64.b64decode(json.loads(l)["stdout"].split("\n")[2])
          for l in open(sys.argv[1]) if json.loads(l)["call"] == "commands.run"]
fetched = sum(len(c[:c.rfind(b"\n") + 1]) for c in chunks)
print(len(chunks) > 3, fetched == len(open(sys.argv[2], "rb").read()))' "$FAKE_E2B_DIR/calls.jsonl" "$home/.cr/log"
  assert_output "True True"
  run calls
  [ "${lines[0]} ${lines[1]}" = "Sandbox.get_info Sandbox.connect" ]
  [ "$(grep -c -e Sandbox.connect -e Sandbox.get_info <<<"$output")" -eq 2 ]
}

@test "log of an unknown sandbox is one line and exit 3" {
  run --separate-stderr cr-e2b log --sandbox nosuch
  assert_failure 3
  assert_one_error_line
  assert_output "cr-e2b: no such sandbox: nosuch (unknown, expired or killed)"
}

@test "log of a sandbox cr-e2b did not make says so in one line" {
  make_sandbox
  rm "$(sandbox_home)/.cr/runner"
  run --separate-stderr cr-e2b log --sandbox sbx1
  assert_failure 1
  assert_one_error_line
  assert_output_contains "has no cr-e2b runner"
}

@test "log rejects a malformed sandbox id before any call" {
  run --separate-stderr cr-e2b log --sandbox 'a b;rm'
  assert_failure 2
  assert_one_error_line
  no_sdk_calls
}
