#!/usr/bin/env bats
# `cr-e2b diff`: the worker's branch, unpushed commits, uncommitted files and
# its change, in pieces, and what it refuses.

load test_helper

# Each command's output, as the fake recorded it: "N MAX", the number of
# commands and the longest output.
command_outputs() {
  python3 -c 'import json,sys
out = [len(c["stdout"]) for c in map(json.loads, open(sys.argv[1])) if c["call"] == "commands.run"]
print(len(out), max(out))' "$FAKE_E2B_DIR/calls.jsonl"
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

@test "diff of a sandbox whose clone failed says so and exits 1" {
  make_sandbox
  run cr-e2b diff --sandbox sbx1
  assert_failure 1
  assert_output "cr-e2b: sandbox sbx1: no git repository in repo (did setup fail at clone?)"
}
