#!/usr/bin/env bats
# `cr-e2b log`: the worker's event stream, rendered, raw, limited and followed.

load test_helper

# Waits (up to 30 s) until the follower has made N polls (commands), so that
# what the test writes next arrives between two of them.
polls_made() { eventually "poll $1" polls_at_least "$1"; }
polls_at_least() { [ "$(calls | grep -c commands.run)" -ge "$1" ]; }

# The log's pieces the commands brought (each reply's "from" and "stop"):
# prints where the last one stopped, or fails if one does not start where the
# one before it stopped (the first where the log was read up to, $1).
fetched_pieces() {
  python3 - "$FAKE_E2B_DIR/calls.jsonl" "$1" <<'PY'
import json, re, sys
at = int(sys.argv[2])
for line in open(sys.argv[1]):
    call = json.loads(line)
    for piece in re.findall(r'"from":(\d+),"stop":(\d+),"to":\d+', call.get("stdout") or ""):
        start, stop = int(piece[0]), int(piece[1])
        if start != at:
            sys.exit(f"a piece from {start}, after one that stopped at {at}")
        at = stop
print(at)
PY
}

# A process that looks like a live runner to `peek`.
fake_live_runner() {
  bash -c 'exec -a drain sleep 60' &
  echo $! >"$(sandbox_home)/.cr/runner.pid"
}

# The fixture's log as a program gets it from --raw: the model key masked.
raw_log() { sed "s/$MODEL_KEY_VALUE/[redacted]/" "$(sandbox_home)/.cr/log"; }

# A log of lines in characters of one to four bytes, with one line of N bytes
# in the middle, longer than the pieces or windows the test reads it in; all
# of it is turn 1.
odd_log() {
  python3 - "$(sandbox_home)/.cr" "$1" <<'PY'
import os, sys
units = ["a", "é", "漢", "😀"]
lines = [units[n % 4] * n for n in range(1, 40)]
lines.insert(20, "é" + "x" * int(sys.argv[2]) + "漢")
lines.insert(0, '{"type":"cr-e2b","event":"turn-start","turn":1}')
log = os.path.join(sys.argv[1], "log")
open(log, "w", encoding="utf-8").write("\n".join(lines) + "\n")
open(os.path.join(sys.argv[1], "turns.jsonl"), "w").write(
    '{"turn":1,"event":"started","at":"2026-11-29T10:00:00Z","flag":"x","log_at":0}\n'
    '{"turn":1,"event":"ended","at":"2026-11-29T10:00:01Z","exit":0,"is_error":false,'
    '"denials":0,"log_end":%d}\n' % os.path.getsize(log))
PY
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
--- turn 5 ended without a result · Claude Code exit 137
OUT
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
--- turn 5 ended without a result · Claude Code exit 137
OUT
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
  # every byte of the log was fetched once: the pieces follow each other to its end
  run fetched_pieces "$(sed -n '2,8p' "$FIXTURES/streams/worker.log" | wc -c)"
  assert_output "$(wc -c <"$home/.cr/log")"
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
  python3 -c 'import e2b; e2b.Sandbox.create(timeout=60, metadata={"app": "other"})'
  run --separate-stderr cr-e2b log --sandbox sbx1
  assert_failure 1
  assert_one_error_line
  assert_output "cr-e2b: sandbox sbx1 was not made by cr-e2b (it has no cr-e2b metadata)"
}

@test "log --tail of a sandbox whose worker removed cr-e2b's side says so in one line" {
  make_sandbox
  rm "$(sandbox_home)/.cr/cr_e2b.py"
  run --separate-stderr cr-e2b log --sandbox sbx1 --tail 5
  assert_failure 1
  assert_one_error_line
  assert_output "cr-e2b: sandbox sbx1 has lost cr-e2b's side (~/.cr/cr_e2b.py): something in it removed it"
}

@test "log rejects a malformed sandbox id before any call" {
  run --separate-stderr cr-e2b log --sandbox 'a b;rm'
  assert_failure 2
  assert_one_error_line
  no_sdk_calls
}

@test "log streams the whole log and prints it the same, whatever the chunks it arrives in" {
  with_worker_log
  run cr-e2b log --sandbox sbx1
  whole=$output
  for size in 333 1000 4096; do
    FAKE_E2B_STREAM_CHUNK=$size run cr-e2b log --sandbox sbx1
    assert_output "$whole"
    FAKE_E2B_STREAM_CHUNK=$size run cr-e2b log --sandbox sbx1 --raw
    assert_output "$(raw_log)"
  done
}

@test "multi-byte characters and a line longer than a chunk or a piece arrive whole" {
  make_sandbox
  odd_log 3000
  for size in 333 1001 100000; do
    FAKE_E2B_STREAM_CHUNK=$size cr-e2b log --sandbox sbx1 --raw >got.log
    cmp got.log "$(sandbox_home)/.cr/log"
    CR_E2B_CHUNK_BYTES=$size cr-e2b log --sandbox sbx1 --raw --turn 1 >got.log
    cmp got.log "$(sandbox_home)/.cr/log"
  done
}

@test "log is one streamed read, compressed on the wire, and brings no turn records" {
  with_worker_log
  run cr-e2b log --sandbox sbx1
  run calls
  assert_output "Sandbox.get_info
Sandbox.connect
files.read"
  run call_field files.read path
  assert_output '".cr/log"'
  run call_field files.read gzip
  assert_output true
  run call_field files.read format
  assert_output '"stream"'
  run call_field files.read bytes_received
  [ "$output" -lt $(($(wc -c <"$(sandbox_home)/.cr/log") / 2)) ]
}

@test "log --turn brings the turn in pieces, one command each, and no more" {
  with_worker_log
  CR_E2B_CHUNK_BYTES=1000 run cr-e2b log --sandbox sbx1 --turn 2
  run call_field commands.run cmd
  [ "$(wc -l <<<"$output")" -eq 3 ]  # turn 2: bytes 2187 to 4977
  run fetched_pieces 2187
  assert_output 4977
}

@test "log --turn N --raw is exactly that turn's lines, at every turn, in any piece size" {
  with_worker_log
  # the fixture's turns start at these lines of the log (turn 6 is past its end)
  starts=(2 10 19 26 31 35)
  for size in 333 8192; do
    for turn in 1 2 3 4 5; do
      CR_E2B_CHUNK_BYTES=$size run cr-e2b log --sandbox sbx1 --turn "$turn" --raw
      assert_output "$(raw_log | sed -n "${starts[turn - 1]},$((starts[turn] - 1))p")"
    done
  done
}

@test "log --turn of a turn that has not started prints nothing and succeeds" {
  with_worker_log
  run cr-e2b log --sandbox sbx1 --turn 9
  assert_success
  assert_output ""
}

@test "log --tail N --raw is exactly the last N lines, for every N" {
  with_worker_log
  for n in 0 1 2 3 5 8 13 21 33 34 35 50; do
    run cr-e2b log --sandbox sbx1 --tail "$n" --raw
    if [ "$n" -eq 0 ]; then assert_output ""; else assert_output "$(raw_log | tail -n "$n")"; fi
  done
}

@test "log --tail leaves out a last line still being written" {
  with_worker_log
  printf '{"type":"assistant","message":{"content":[{"type":"text","text":"half a li' >>"$(sandbox_home)/.cr/log"
  run cr-e2b log --sandbox sbx1 --tail 1 --raw
  assert_output "$(sed -n 34p "$FIXTURES/streams/worker.log")"
}

@test "log --tail is exact around a line longer than its first window" {
  make_sandbox
  odd_log 200000
  for n in 18 19 20 21 40; do
    cr-e2b log --sandbox sbx1 --tail "$n" --raw >got.log
    tail -n "$n" "$(sandbox_home)/.cr/log" | cmp - got.log
  done
}

@test "log --turn N --tail K is the last K lines of that turn" {
  with_worker_log
  run cr-e2b log --sandbox sbx1 --turn 2 --tail 3 --raw
  assert_output "$(raw_log | sed -n 16,18p)"
  run cr-e2b log --sandbox sbx1 --turn 4 --tail 2
  assert_output <<'OUT'
    EPIC wc-4 BLOCKED need write access to docs/
--- turn 4 blocked · 0.1 s · $0.1527 session · EPIC wc-4 BLOCKED need write access to docs/
OUT
}

@test "rendered --tail fetches further back while the lines fetched show too few" {
  with_worker_log
  for n in $(seq 1 12); do
    echo '{"type":"user","message":{"content":[{"type":"tool_result","content":"fine"}]}}'
  done >>"$(sandbox_home)/.cr/log"
  run cr-e2b log --sandbox sbx1 --tail 2
  assert_output <<'OUT'
Error: something went badly wrong
--- turn 5 ended without a result · Claude Code exit 137
OUT
  run calls
  [ "$(grep -c commands.run <<<"$output")" -eq 3 ]  # 4 lines, 8 more, 24 more: 14 it takes
  run cr-e2b log --sandbox sbx1 --tail 4
  assert_output <<'OUT'
=== turn 5 · 2026-11-29T10:07:00Z · one more thing
{"type":"assistant","message":{"content":[{"type":"te
Error: something went badly wrong
--- turn 5 ended without a result · Claude Code exit 137
OUT
}

@test "log --tail knows the turn of lines that start inside it" {
  with_worker_log
  run cr-e2b log --sandbox sbx1 --tail 1 --turn 2
  assert_output_contains "--- turn 2 undelivered"
  run cr-e2b log --sandbox sbx1 --tail 2
  assert_output_contains "--- turn 5 ended"
}

@test "log --follow --tail N starts at the tail and goes on from there" {
  make_sandbox
  home=$(sandbox_home)
  echo prompt >"$home/.cr/queue/000001.md"
  fake_live_runner
  printf 'one\ntwo\nthree\n' >"$home/.cr/log"
  cr-e2b log --sandbox sbx1 --follow --until-idle --tail 2 --interval 0.2 >followed.txt &
  follower=$!
  polls_made 2
  printf 'four\n' >>"$home/.cr/log"
  polls_made 4
  : >"$home/.cr/queue/000001.ended"
  wait "$follower"
  run cat followed.txt
  assert_output "two
three
four"
}

@test "log --follow --turn N starts at that turn and shows only it" {
  with_worker_log
  home=$(sandbox_home)
  run cr-e2b log --sandbox sbx1 --follow --until-idle --turn 4 --raw
  assert_success
  assert_output "$(raw_log | sed -n 26,30p)"
  run fetched_pieces 6794
  assert_output 8263
}

@test "log --follow goes on from where a broken first read stopped, showing each line once" {
  with_worker_log
  FAKE_E2B_FAIL=read-network:3000 FAKE_E2B_STREAM_CHUNK=1000 \
    run --separate-stderr cr-e2b log --sandbox sbx1 --follow --until-idle --raw
  assert_success
  assert_output "$(raw_log)"
  [[ "$stderr" == *"going on from byte 3000"* ]]
}

@test "log --follow rides out a network failure at its first command, showing each line once" {
  with_worker_log
  FAKE_E2B_FAIL=command-network:1 run --separate-stderr cr-e2b log --sandbox sbx1 --follow --until-idle --raw --retry-for 10
  assert_success
  assert_output "$(raw_log)"
}

@test "a tail that starts after a turn's result does not call the turn resultless" {
  make_sandbox
  cat >"$(sandbox_home)/.cr/log" <<'LOG'
{"type":"cr-e2b","event":"turn-start","turn":1,"first_line":"go","at":"2026-11-29T10:00:00Z"}
{"type":"result","is_error":false,"duration_ms":1000,"result":"done"}
a warning Claude Code printed on its way out
{"type":"cr-e2b","event":"turn-end","turn":1,"exit":0,"result":true,"at":"2026-11-29T10:00:02Z"}
LOG
  run cr-e2b log --sandbox sbx1 --tail 1
  assert_output "a warning Claude Code printed on its way out"
}

@test "a line Claude Code printed between a turn's result and the gate's verdict does not make log call the turn ok" {
  run env PYTHONPATH="$ROOT" python3 -c 'import cr_e2b
r = cr_e2b.Renderer(cr_e2b.Style())
lines = [{"type": "cr-e2b", "event": "turn-start", "turn": 2, "first_line": "EPIC x: branch b", "at": "t"},
         {"type": "result", "is_error": False, "result": "EPIC x READY abc https://h/p/1", "duration_ms": 1000},
         "a warning on its way out",
         {"type": "cr-e2b", "event": "verdict", "turn": 2, "verdict": "ready", "ok": False, "reasons": ["b is not on origin"]},
         {"type": "cr-e2b", "event": "turn-end", "turn": 2, "exit": 0, "result": True}]
import json
for line in lines:
    for shown in r.render(line if isinstance(line, str) else json.dumps(line))[1]:
        print(shown)'
  assert_output "=== turn 2 · t · EPIC x: branch b
a warning on its way out
--- turn 2 verdict: READY did not hold: b is not on origin
--- turn 2 undelivered · 1.0 s · EPIC x READY abc https://h/p/1"
}

@test "log gives each run's own cost, not the session's running total" {
  printf 'Count the words.\n' >plain.md
  start_worker plain.md --gate-tries 0
  wait_idle
  run cr-e2b log --sandbox sbx1
  assert_success
  run grep '^--- turn' <<<"$output"
  assert_output "--- turn 1 ok · 1.5 s · \$0.0500 · WORKER stub READY
--- turn 2 ok · 1.5 s · \$0.0500 · WORKER stub READY"
}

@test "log of an EPIC turn that holds no verdict says so, and exits 0" {
  start_worker brief.md --gate-tries 0
  wait_idle
  run --separate-stderr cr-e2b log --sandbox sbx1
  assert_success
  [ -z "$stderr" ]
  run tail -n 1 <<<"$output"
  assert_output "--- turn 2 no verdict: WORKER stub READY"
}

@test "log heads a round's turn with what started it, the line of its prompt the pull request's watch wrote" {
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nCount.\n' >brief.md
  start_worker brief.md --gate-tries 0
  wait_idle
  home=$(sandbox_home)
  url=https://github.com/acme/demo/pull/12 head=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
  printf 'ci_rounds 3\nci_poll 1\n' >>"$home/.cr/watch"
  mkdir -p "$home/.local/bin"
  ln -sf "$FIXTURES/gh" "$home/.local/bin/gh"
  printf '{"state": "OPEN", "headRefOid": "%s", "reviews": [], "comments": [], "statusCheckRollup": [%s, %s]}\n' "$head" \
    '{"name": "test", "status": "COMPLETED", "conclusion": "FAILURE", "detailsUrl": "https://github.com/acme/demo/actions/runs/5/job/7"}' \
    '{"name": "lint", "status": "COMPLETED", "conclusion": "FAILURE", "detailsUrl": "https://github.com/acme/demo/actions/runs/5/job/8"}' \
    >"$home/pr.json"
  mkdir -p "$home/.cr/ci-targets"
  printf '2\n%s\n%s\n%s\n' "$url" "$home/.cr/queue/000002" "$(date -d '-1 hour' +%s)" >"$home/.cr/ci-targets/wc-3"
  HOME="$home" run timeout 30 bash -c "$(sandbox_line watch)"
  wait_idle
  run cr-e2b log --sandbox sbx1
  run sed -n 's/^=== turn \([23]\) · [^ ]* · /\1 /p' <<<"$output"
  assert_output <<OUT
2 EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/
3 (cr-e2b) Round 1 of 3 on your pull request $url: checks of $head failed; their names and failed logs follow.
OUT
}
