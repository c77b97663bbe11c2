#!/usr/bin/env bats
# `cr-e2b start`: the sandbox made, set up and launched in one command, the
# Claude Code it runs, the project's setup, the worker's rules and network, a
# start cut short, and every check of its input before anything is made.

load test_helper

session_of() { call_field Sandbox.create metadata | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["session"])'; }

# A git that clones from the local origin whatever the URL, so an https
# repository can be set up offline.
git_clones_locally() {
  cat >"$TEST_DIR/bin/git" <<SH
#!/bin/bash
if [ "\$1" = clone ]; then exec /usr/bin/git clone -q "$TEST_DIR/origin.git" "\${@: -1}"; fi
exec /usr/bin/git "\$@"
SH
  chmod +x "$TEST_DIR/bin/git"
}

agent_args() {
  run --separate-stderr cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md --dry-run --json "$@"
  assert_success
  run python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["agent_args"]))' <<<"$output"
}

steps() {
  run --separate-stderr cr-e2b start --repo "$1" --profile backend --brief brief.md --dry-run --json
  run python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin)["steps"]))' <<<"$output"
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

# start, in the background, stopped by a signal once the fake shows it is at
# a given point; records the exit status, the time it took and its stderr.
start_then_signal() { # signal marker-command start-options...
  local signal=$1 marker=$2 pid t0
  shift 2
  make_repo
  cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --check true "$@" \
    >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
  eventually "$marker" "$marker"
  t0=$(date +%s%N)
  kill "-$signal" "$pid"
  status=0
  wait "$pid" || status=$?
  took_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  output=$(cat "$TEST_DIR/err")
}

in_create() { [ -e "$FAKE_E2B_DIR/slow-Sandbox.create" ]; }

@test "start creates the sandbox, then sets up and launches in one command that carries its files" {
  start_worker
  run calls
  assert_output <<'OUT'
Sandbox.create
commands.run
OUT
  run call_field commands.run envs
  assert_output_contains '{"CR_FILES_1": "'
  cmp "$(sandbox_home)/.cr/inbox/brief.md" brief.md 2>/dev/null || cmp "$(sandbox_home)/.cr/queue/000002.md" brief.md
  # the runner is this release's, in cr_e2b.py: no bash runner of old beside it
  cmp "$ROOT/cr-e2b" "$(sandbox_home)/.cr/cr_e2b.py"
  [ ! -e "$(sandbox_home)/.cr/runner" ]
}

@test "nothing that setup starts inherits the files start sent" {
  hold_stub
  printf 'EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nSTUB_BLOCK\n' >held.md
  start_worker held.md
  turn_started 2
  run grep -c CR_FILES "/proc/$(cat "$(sandbox_home)/.cr/runner.pid")/environ" "/proc/$(cat "$(turn_file 2 pid)")/environ"
  assert_output_contains "/environ:0"
  refute_output_contains "/environ:1"
  release_stub
}

@test "start's files too big for one variable travel in several, still in the one setup command" {
  python3 -c 'import os, base64; print("EPIC wc-3: branch claude/wc-3-x, scope a, grants b"); print(base64.b64encode(os.urandom(200000)).decode())' >big.md
  start_worker big.md
  run calls
  assert_output <<'OUT'
Sandbox.create
commands.run
OUT
  run call_field commands.run envs
  assert_output_contains '"CR_FILES_4": "'
  cmp big.md "$(sandbox_home)/.cr/queue/000002.md"
}

@test "start prints the sandbox, the session and the follow-up commands" {
  start_worker brief.md --check true
  session=$(session_of)
  assert_output <<OUT
sandbox  sbx1
session  $session
agent    Claude Code 2.1.332, the template's
log      cr-e2b log --sandbox sbx1 --follow
status   cr-e2b status --sandbox sbx1
brief    cr-e2b brief --sandbox sbx1 --brief FILE
wait     cr-e2b wait --sandbox sbx1
kill     cr-e2b kill --sandbox sbx1
OUT
}

@test "start --json prints one document with the ids and the commands" {
  make_repo; with_claude
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --json
  assert_success
  run python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["sandbox_id"], d["profile"], d["integration_branch"], d["template"], d["timeout"], sorted(d["commands"]))' <<<"$output"
  assert_output "sbx1 backend main base 3600 ['brief', 'kill', 'log', 'status', 'wait']"
}

@test "the sandbox gets the profile, the model key and its metadata" {
  start_worker
  run call_field Sandbox.create envs
  assert_output "{\"CR_PROFILE\": \"backend\", \"DISABLE_AUTOUPDATER\": \"1\", \"CLAUDE_CODE_DISABLE_AGENT_VIEW\": \"1\", \"ANTHROPIC_API_KEY\": \"$MODEL_KEY_VALUE\"}"
  session=$(session_of)
  run call_field Sandbox.create metadata
  assert_output "{\"cr-e2b\": \"1\", \"profile\": \"backend\", \"repo\": \"$REPO\", \"session\": \"$session\", \"integration\": \"main\", \"prefix\": \"claude/\", \"secret_names\": \"ANTHROPIC_API_KEY\", \"owner\": \"test@example.com\", \"gate_tries\": \"3\", \"ci_rounds\": \"0\", \"ci_settle\": \"300\", \"ci_timeout\": \"3600\", \"ci_poll\": \"60\", \"checks\": \"[]\", \"max_cost\": \"\", \"mcp\": \"\", \"asked\": \"[{\\\"epic\\\": \\\"wc-3\\\", \\\"branch\\\": \\\"claude/wc-3-count\\\", \\\"scope\\\": [\\\"src/\\\"], \\\"grants\\\": [\\\"tests/\\\"], \\\"turn\\\": 2}]\"}"
  run call_field Sandbox.create timeout
  assert_output 3600
}

@test "setup runs identity, clone, install, queue and launch in that order, with a long timeout" {
  start_worker
  run python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["steps"]))' "$(sandbox_home)/.cr/setup.json"
  assert_output "git-identity clone install queue launch"
  # 30 minutes for the steps, timed in the sandbox, and a minute more for the answer
  run call_field commands.run timeout
  assert_output 1860
  [ -f "$(sandbox_home)/repo/README" ]
  run git config --file "$(sandbox_home)/.gitconfig" user.email
  assert_output "test@example.com"
}

@test "the opening is turn one with a new session id, the brief turn two resuming it, from the workdir" {
  start_worker
  wait_idle
  session=$(session_of)
  run bash -c 'for c in "$CLAUDE_STUB_DIR"/calls/*; do tr "\n" " " <"$c/argv"; echo "| $(cat "$c/cwd")"; done'
  assert_output <<OUT
-p --session-id $session --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Bash(git:*) Bash(gh pr create:*) Bash(gh pr view:*) Bash(gh pr list:*) --settings /home/user/.cr/settings.json | $(sandbox_home)/repo
-p --resume $session --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Bash(git:*) Bash(gh pr create:*) Bash(gh pr view:*) Bash(gh pr list:*) --settings /home/user/.cr/settings.json | $(sandbox_home)/repo
OUT
}

@test "the opening is filled in with the profile, branches, session and sandbox" {
  start_worker
  wait_idle
  opening="$CLAUDE_STUB_DIR/calls/$(ls "$CLAUDE_STUB_DIR"/calls | head -n 1)/stdin"
  grep -q 'You are the backend worker' "$opening"
  grep -q 'e2b sandbox sbx1, in Claude Code session' "$opening"
  grep -q "\`e2b:sbx1/$(session_of)\`" "$opening"
  grep -q 'from `main`' "$opening"
  run grep -E '<[a-z-]+>' "$opening"
  assert_failure 1
}

@test "a brief with quotes, \$(...), backticks, a leading dash, CRLF and non-ASCII reaches the agent byte for byte" {
  printf -- '--EPIC? "double" '"'single'"' $(rm -rf /) `id` $HOME \\n\r\nCRLF line\r\nünïcødé ✓ 漢字\n\ttab\n' >tricky.md
  start_worker tricky.md
  wait_idle
  brief_call=$(ls "$CLAUDE_STUB_DIR"/calls | sed -n 2p)
  cmp tricky.md "$CLAUDE_STUB_DIR/calls/$brief_call/stdin"
}

@test "a 300 KiB brief reaches the agent byte for byte" {
  python3 -c 'import sys; sys.stdout.write("EPIC big-1: branch claude/big-1-x, scope a, grants b\n" + "".join("line %06d: ünïcødé `$x` \"q\"\n" % i for i in range(9200)))' >big.md
  [ "$(wc -c <big.md)" -gt 307200 ]
  start_worker big.md
  wait_idle
  brief_call=$(ls "$CLAUDE_STUB_DIR"/calls | sed -n 2p)
  cmp big.md "$CLAUDE_STUB_DIR/calls/$brief_call/stdin"
}

@test "the start brief's epic, branch and scope are in e2b's metadata, which the worker cannot change" {
  start_worker
  run python3 -c 'import json, sys; print(json.loads(json.loads(sys.stdin.read())["asked"]))' <<<"$(call_field Sandbox.create metadata)"
  assert_output "[{'epic': 'wc-3', 'branch': 'claude/wc-3-count', 'scope': ['src/'], 'grants': ['tests/'], 'turn': 2}]"
}

@test "with GITHUB_TOKEN, a credential helper for the repository's host only reads the token at use" {
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  make_repo; with_claude; git_clones_locally
  run cr-e2b start --repo https://git.example.com:8443/team/app.git --profile backend --brief brief.md --workdir repo
  assert_success
  sbx_home=$(sandbox_home)
  run grep -F "$GITHUB_KEY_VALUE" "$sbx_home/.gitconfig"
  assert_failure 1
  fill() { printf 'protocol=https\nhost=%s\n\n' "$1" | HOME="$sbx_home" GIT_CONFIG_GLOBAL="$sbx_home/.gitconfig" GITHUB_TOKEN="$GITHUB_KEY_VALUE" /usr/bin/git credential fill 2>/dev/null; }
  run fill git.example.com:8443
  assert_output <<OUT
protocol=https
host=git.example.com:8443
username=x-access-token
password=$GITHUB_KEY_VALUE
OUT
  export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
  run fill evil.example.com
  refute_output_contains "$GITHUB_KEY_VALUE"
}

@test "without GITHUB_TOKEN there is no credential helper" {
  make_repo; with_claude; git_clones_locally
  run cr-e2b start --repo https://git.example.com/team/app.git --profile backend --brief brief.md --workdir repo
  assert_success
  run grep -c credential "$(sandbox_home)/.gitconfig"
  assert_output 0
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

@test "a failing step kills the sandbox and names the step with its own output" {
  make_repo; with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --integration nope --check true
  assert_failure 1
  [[ "${lines[0]}" == "cr-e2b: step clone failed (exit 1): "*"nope"* ]]
  assert_output_contains "cr-e2b: killed sandbox sbx1, which start had made"
  run calls
  assert_output <<'OUT'
Sandbox.create
commands.run
Sandbox.kill
OUT
}

@test "a failed start says why it failed and what became of the sandbox, not the warnings of its plan" {
  make_repo; with_claude
  # no --check and no GITHUB_TOKEN: a start that worked would warn of both
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --integration nope
  assert_failure 1
  [[ "${stderr_lines[0]}" == "cr-e2b: step clone failed (exit 1): "*"nope"* ]]
  [ "${stderr_lines[1]}" = "cr-e2b: killed sandbox sbx1, which start had made" ]
  [ "${#stderr_lines[@]}" -eq 2 ]
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo
  assert_success
  [ "$stderr" = "cr-e2b: warning: no project checks: the worker cannot run the project's tests, and its READY is checked without them; give them with --check CMD or \"checks\" in control-room.json" ]
}

@test "--keep-on-failure leaves the sandbox running and says how to stop it" {
  make_repo; with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --integration nope --keep-on-failure
  assert_failure 1
  assert_output_contains "left sandbox sbx1 running"
  assert_output_contains "cr-e2b kill --sandbox sbx1"
  run calls
  refute_output_contains Sandbox.kill
}

@test "a kept sandbox whose setup failed says so: status, wait exits 1, brief is refused" {
  make_repo; with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo \
    --integration nosuch --keep-on-failure
  assert_failure 1
  run cr-e2b status --sandbox sbx1
  assert_output_contains "worker    setup failed at step clone: nothing will run"
  run cr-e2b wait --sandbox sbx1 --interval 0.1
  assert_failure 1
  assert_output "cr-e2b: sandbox sbx1: setup failed at step clone: nothing will run"
  printf 'a question\n' >q.md
  run cr-e2b brief --sandbox sbx1 --brief q.md
  assert_failure 1
  assert_output_contains "setup failed at step clone; no turn can run"
}

@test "a sandbox command failing is reported, and the sandbox killed" {
  make_repo; with_claude
  export FAKE_E2B_FAIL='command:.cr" setup'
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --check true
  assert_failure 1
  [[ "${lines[0]}" == "cr-e2b: step setup failed (exit 1): simulated failure" ]]
  run calls
  assert_output_contains Sandbox.kill
}

@test "an over-cap lifetime is e2b's error, reported in one line" {
  export FAKE_E2B_MAX_TIMEOUT=3600
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  run --separate-stderr cr-e2b start "${ok_args[@]}" --timeout 7200 --check true
  assert_failure 1
  assert_one_error_line
  assert_output_contains "lifetime over your plan's cap"
}

@test "an unknown template is reported in one line" {
  export FAKE_E2B_FAIL=template
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  run --separate-stderr cr-e2b start "${ok_args[@]}" --template nope --check true
  assert_failure 1
  assert_one_error_line
  assert_output_contains "cannot use that template"
}

@test "a clone that asked for credentials says to export GITHUB_TOKEN, or to check its access" {
  with_claude
  mkdir -p "$TEST_DIR/bin"
  printf '#!/bin/sh\n[ "$1" = clone ] && { echo "fatal: could not read Username for '"'"'https://github.com'"'"': No such device or address" >&2; exit 128; }\nexec /usr/bin/git "$@"\n' >"$TEST_DIR/bin/git"
  chmod +x "$TEST_DIR/bin/git"
  run --separate-stderr cr-e2b start --repo https://github.com/you/private.git --profile backend --brief brief.md
  assert_failure 1
  [[ "$stderr" == *"; the host asked for credentials: export GITHUB_TOKEN, a token that can read this repository (and write to it)"* ]]
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  run --separate-stderr cr-e2b start --repo https://github.com/you/private.git --profile backend --brief brief.md
  [[ "$stderr" == *"; the host asked for credentials: check that GITHUB_TOKEN can read this repository (and write to it, to push)"* ]]
}

@test "a failing installer fails the start even when it is piped" {
  make_repo
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --install 'false | cat' --check true
  assert_failure 1
  [ "${lines[0]}" = "cr-e2b: step install failed (exit 1): the installer failed (exit 1)" ]
}

@test "an installer that leaves no working claude fails the start" {
  make_repo
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --install 'true' --check true
  assert_failure 1
  [[ "${lines[0]}" == "cr-e2b: step install failed (exit 1): "*"claude: command not found" ]]
}

@test "the installer puts claude in ~/.local/bin and start finds it there" {
  make_repo
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo \
    --install "mkdir -p ~/.local/bin && ln -s '$FIXTURES/claude' ~/.local/bin/claude"
  assert_success
  wait_idle
  [ "$(ls "$CLAUDE_STUB_DIR/calls" | wc -l)" -eq 2 ]
}

@test "Claude Code already in the template is not installed again" {
  make_repo; with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --install "touch '$TEST_DIR/installed'"
  assert_success
  [ ! -e "$TEST_DIR/installed" ]
}

@test "start installs the pinned Claude Code with the installer's version argument" {
  make_repo
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --dry-run --json
  run python3 -c 'import json,sys; print([s["does"] for s in json.loads(sys.argv[1])["steps"] if s["name"] == "install"][0])' "$output"
  assert_output "Claude Code 2.1.332, unless the template has it (then its own version runs)"
  for version in 2.1.197 stable latest; do
    rm -rf "$FAKE_E2B_DIR" && mkdir -p "$FAKE_E2B_DIR"
    run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --agent-version "$version"
    run python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["install"])' "$(sandbox_home)/.cr/setup.json"
    assert_output "curl -fsSL https://claude.ai/install.sh | bash -s $version"
  done
}

@test "the installer's version argument is what runs, and status shows it" {
  make_repo
  # curl hands bash an installer that puts in the version it is given, as the official one does
  cat >"$TEST_DIR/bin/curl" <<'CURL'
#!/bin/bash
cat <<'INSTALLER'
mkdir -p ~/.local/bin
printf '#!/bin/bash\necho "%s (Claude Code)"\n' "$1" >~/.local/bin/claude
chmod +x ~/.local/bin/claude
INSTALLER
CURL
  chmod +x "$TEST_DIR/bin/curl"
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --agent-version 2.1.197 --json
  assert_success
  run python3 -c 'import json,sys; print(json.loads(sys.argv[1])["agent_version"])' "$output"
  assert_output 2.1.197
  run cat "$(sandbox_home)/.cr/claude-version"
  assert_output "2.1.197 (Claude Code)"
}

@test "start says when the template's own Claude Code runs instead of the pinned one" {
  run --separate-stderr cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md \
    --agent-version 2.1.197 --dry-run
  refute_output_contains "instead of"
  start_worker brief.md --agent-version 2.1.197
  assert_output_contains "cr-e2b: warning: the template has Claude Code 2.1.332, which runs instead of 2.1.197 (--agent-version installs only where none is)"
  wait_idle
  run cr-e2b status --sandbox sbx1
  assert_output_contains "agent     Claude Code 2.1.332"
  run cr-e2b status --sandbox sbx1 --json
  run python3 -c 'import json,sys; print(json.loads(sys.argv[1])["agent_version"])' "$output"
  assert_output 2.1.332
}

@test "an agent version that is not one, or one beside --install, is refused before any call" {
  rejects "--agent-version takes a version such as 2.1.332, 'stable' or 'latest': 'next; rm -rf ~'" \
    "${ok_args[@]}" --agent-version 'next; rm -rf ~'
  rejects "--install replaces the installer that --agent-version sets the version of" \
    "${ok_args[@]}" --agent-version 2.1.197 --install 'npm i -g @anthropic-ai/claude-code'
}

@test "every turn runs with the auto-updater and the background-agent view off" {
  start_worker
  run call_field Sandbox.create envs
  assert_output_contains '"DISABLE_AUTOUPDATER": "1"'
  assert_output_contains '"CLAUDE_CODE_DISABLE_AGENT_VIEW": "1"'
}

@test "the project's setup runs in the work tree after the clone, before the first turn" {
  start_worker brief.md --setup 'pwd >~/setup-cwd; ls >~/setup-saw; date +%s.%N >~/setup-at; echo set up'
  home=$(sandbox_home)
  run cat "$home/setup-cwd"
  assert_output "$home/repo"
  run cat "$home/setup-saw"
  assert_output "README"
  run cat "$home/.cr/setup-project-setup.out"
  assert_output "set up"
  # the runner marks a turn started as it launches Claude Code, which notes its own start
  eventually "the stub's first call" compgen -G "$CLAUDE_STUB_DIR/calls/*/start"
  first=$(cat "$CLAUDE_STUB_DIR"/calls/*/start | sort | head -n 1)
  run python3 -c 'import sys; print(float(sys.argv[1]) < float(sys.argv[2]))' "$(cat "$home/setup-at")" "$first"
  assert_output True
}

@test "the opening tells the worker whether the project's setup has run" {
  start_worker brief.md --setup 'echo ready'
  run grep -c "The project's setup (\`echo ready\`) has already run there" "$(turn_file 1 md)"
  assert_output 1
  run grep -c "You start in the clone of the repository, \`repo\`, on \`main\`." "$(turn_file 1 md)"
  assert_output 1
  run cr-e2b start --repo "$REPO" --profile docs --brief brief.md --workdir repo
  run grep -c "No setup command ran after the clone" "$(turn_file 1 md "$(sandbox_home sbx2)")"
  assert_output 1
}

@test "a failing setup fails start, naming the step and its last lines, and kills the sandbox" {
  make_repo; with_claude
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo \
    --setup 'echo resolving; echo "ERR! missing: left-pad" >&2; exit 7' --check true
  assert_failure 1
  [[ "$stderr" == "cr-e2b: step project-setup failed (exit 1): resolving | ERR! missing: left-pad"* ]]
  [[ "$stderr" == *"cr-e2b: killed sandbox sbx1, which start had made"* ]]
  run sandbox_state sbx1
  assert_output killed
  [ ! -d "$CLAUDE_STUB_DIR/calls" ]
}

@test "--keep-on-failure keeps the sandbox after a failed setup, with its output" {
  make_repo; with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --setup false --keep-on-failure
  assert_failure 1
  run sandbox_state sbx1
  assert_output running
  run cat "$(sandbox_home)/.cr/setup-failed"
  assert_output project-setup
}

@test "control-room.json's setup runs unless --setup is given; --setup '' runs none" {
  printf '{"setup": "echo from-file >~/ran"}\n' >control-room.json
  start_worker
  run cat "$(sandbox_home sbx1)/ran"
  assert_output from-file
  run cr-e2b start --repo "$REPO" --profile docs --brief brief.md --workdir repo --setup 'echo from-flag >~/ran'
  run cat "$(sandbox_home sbx2)/ran"
  assert_output from-flag
  run cr-e2b start --repo "$REPO" --profile web --brief brief.md --workdir repo --setup ''
  assert_success
  [ ! -e "$(sandbox_home sbx3)/ran" ]
  [ ! -e "$(sandbox_home sbx3)/.cr/setup-project-setup.out" ]
}

@test "a project setup that outlasts setup's time is ended and says so" {
  # the sandbox side's setup, run for real here, with a budget of 1 s
  SBX="$TEST_DIR/sbx"
  mkdir -p "$TEST_DIR/tree"
  setup_plan '["project-setup"]' "\"limit\": 1, \"setup\": \"sleep 30\", \"workdir\": \"$TEST_DIR/tree\""
  run --separate-stderr in_sandbox setup
  assert_failure 1
  [ "$stderr" = "the setup command did not finish within setup's 1 s" ]
  assert_output_contains '"failed":"project-setup"'
}

@test "dry-run shows the project's setup as a step of its own" {
  run --separate-stderr cr-e2b start "${ok_args[@]}" --setup 'pip install -e .' --dry-run --json
  assert_success
  run python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin)["steps"]))' <<<"$output"
  assert_output "git-identity clone install project-setup queue launch"
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

@test "--allow-out sends e2b an allow-list that always holds the model API, the repository and what setup downloads from, and prints it" {
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  start_until_setup --allow-out pypi.org --allow-out 10.1.0.0/16 --allow-out '*.npmjs.org'
  # the failed start says why it failed; the plan's warning is a dry run's, or a start's that worked
  run --separate-stderr cr-e2b start "${ok_args[@]}" --allow-out pypi.org --allow-out 10.1.0.0/16 \
    --allow-out '*.npmjs.org' --dry-run
  [ "${stderr_lines[0]}" = "cr-e2b: warning: the sandbox may reach only: api.anthropic.com, github.com, api.github.com, claude.ai, storage.googleapis.com, objects.githubusercontent.com, release-assets.githubusercontent.com, pypi.org, 10.1.0.0/16, *.npmjs.org" ]
  run create_field network
  assert_output '{"allow_out": ["api.anthropic.com", "github.com", "api.github.com", "claude.ai", "storage.googleapis.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com", "pypi.org", "10.1.0.0/16", "*.npmjs.org"], "deny_out": ["0.0.0.0/0"]}'
  run create_field allow_internet_access
  assert_output null
}

@test "--no-internet lets the sandbox reach the model API, the repository and the installer only, and a project's own --install not even that" {
  export ANTHROPIC_BASE_URL=http://127.0.0.1:9999
  start_until_setup --repo https://git.example.com/team/app.git --no-internet --env ANTHROPIC_BASE_URL
  run create_field network
  assert_output '{"allow_out": ["127.0.0.1", "git.example.com", "claude.ai", "storage.googleapis.com"], "deny_out": ["0.0.0.0/0"]}'
  run create_field allow_internet_access
  assert_output false
  rm "$FAKE_E2B_DIR/calls.jsonl"
  start_until_setup --repo https://git.example.com/team/app.git --no-internet --env ANTHROPIC_BASE_URL --install 'cp /opt/claude ~/.local/bin/'
  run create_field network
  assert_output '{"allow_out": ["127.0.0.1", "git.example.com"], "deny_out": ["0.0.0.0/0"]}'
}

@test "by default the sandbox's network is left as e2b makes it" {
  start_until_setup
  run create_field network
  assert_output null
  run create_field mcp
  assert_output null
}

@test "MCP servers go to e2b's gateway, and Claude Code gets its address and token from a file" {
  start_until_setup --mcp 'browserbase={"apiKey": "bb-LEAKCHECK-key-1234", "projectId": "p1"}' --mcp 'exa={}'
  run create_field mcp
  assert_output '{"browserbase": {"apiKey": "bb-LEAKCHECK-key-1234", "projectId": "p1"}, "exa": {}}'
  run python3 - "$FAKE_E2B_DIR/calls.jsonl" <<'PY'
import json, sys
calls = [json.loads(line) for line in open(sys.argv[1])]
files = {f["path"]: f["data"] for c in calls if c["call"] == "files.write_files" for f in c["files"]}
print(json.loads(files[".cr/mcp-gateway.json"]))
print(files[".cr/agent-args"].split("\0")[-3:-1])
print(any("mcp-token" in c.get("cmd", "") for c in calls))
PY
  assert_output <<'OUT'
{'mcpServers': {'e2b-mcp-gateway': {'type': 'http', 'url': 'https://50005-sbx1.e2b.app/mcp', 'headers': {'Authorization': 'Bearer mcp-token-sbx1-0f3a9c'}}}}
['--mcp-config', '/home/user/.cr/mcp-gateway.json']
False
OUT
}

@test "with --mcp and no --template the sandbox is made from e2b's mcp-gateway, and the dry run and start --json say so" {
  run cr-e2b start "${ok_args[@]}" --mcp 'exa={}' --dry-run
  assert_success
  assert_output_contains "template   mcp-gateway"
  make_repo
  with_claude
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --mcp 'exa={}' --json
  assert_success
  run python3 -c 'import json,sys; print(json.loads(sys.argv[1])["template"])' "$output"
  assert_output mcp-gateway
  run create_field template
  assert_output '"mcp-gateway"'
  rm "$FAKE_E2B_DIR/calls.jsonl"
  rejects "--no-internet and --mcp exclude each other" "${ok_args[@]}" --mcp 'exa={}' --no-internet
}

@test "an MCP configuration file and an appended system prompt are shipped as files and named by flag" {
  printf '{"mcpServers": {"docs": {"type": "http", "url": "https://docs.example.com/mcp"}}}\n' >servers.json
  printf 'Our staging database is read-only.\n' >context.md
  start_until_setup --mcp-config servers.json --append-system-prompt context.md
  run python3 - "$FAKE_E2B_DIR/calls.jsonl" <<'PY'
import json, sys
calls = [json.loads(line) for line in open(sys.argv[1])]
files = {f["path"]: f["data"] for c in calls if c["call"] == "files.write_files" for f in c["files"]}
print(files[".cr/system-prompt.md"], end="")
print(json.loads(files[".cr/mcp-servers.json"])["mcpServers"]["docs"]["url"])
print(files[".cr/agent-args"].split("\0")[-5:-1])
PY
  assert_output <<'OUT'
Our staging database is read-only.
https://docs.example.com/mcp
['--append-system-prompt-file', '/home/user/.cr/system-prompt.md', '--mcp-config', '/home/user/.cr/mcp-servers.json']
OUT
}

@test "the flags reach Claude Code on every turn" {
  printf 'Be brief.\n' >context.md
  start_worker_with() { make_repo; with_claude; run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo "$@"; }
  start_worker_with --append-system-prompt context.md
  assert_success
  wait_idle
  run bash -c 'for c in "$CLAUDE_STUB_DIR"/calls/*; do tail -n 2 "$c/argv" | tr "\n" " "; echo; done'
  assert_output "--append-system-prompt-file /home/user/.cr/system-prompt.md 
--append-system-prompt-file /home/user/.cr/system-prompt.md "
}

@test "bad egress, edge, MCP and prompt input is one line and exit 2, before any sandbox" {
  rejects "--allow-out takes a host name, an IP address or a CIDR block: 'http://pypi.org'" "${ok_args[@]}" --allow-out http://pypi.org
  rejects "--allow-out takes a host name" "${ok_args[@]}" --allow-out 'bad host'
  rejects "--no-internet and --allow-out exclude each other" "${ok_args[@]}" --no-internet --allow-out pypi.org
  rejects "--secrets edge needs an https repository URL" "${ok_args[@]}" --secrets edge --repo git://github.com/you/app.git
  unset ANTHROPIC_API_KEY
  export CLAUDE_CODE_USE_BEDROCK=1
  rejects "--secrets edge needs ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN here, to inject it" "${ok_args[@]}" --secrets edge --env CLAUDE_CODE_USE_BEDROCK
  export ANTHROPIC_API_KEY="$MODEL_KEY_VALUE"
  rejects "--mcp browserbase: its settings are not valid JSON" "${ok_args[@]}" --mcp 'browserbase={"apiKey": '
  rejects "--mcp takes NAME=JSON" "${ok_args[@]}" --mcp browserbase
  printf '{"mcpServers": ' >broken.json
  rejects "--mcp-config broken.json is not valid JSON" "${ok_args[@]}" --mcp-config broken.json
  : >empty.md
  rejects "system prompt empty.md is empty" "${ok_args[@]}" --append-system-prompt empty.md
  printf '\377\376 not text\n' >binary.md
  rejects "system prompt binary.md is not UTF-8 text" "${ok_args[@]}" --append-system-prompt binary.md
}

@test "--dry-run shows the allow-list, where each key goes, the MCP servers and the prompt's size" {
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  printf 'Be brief.\n' >context.md
  run cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md --dry-run \
    --allow-out pypi.org --secrets edge --mcp 'exa={"apiKey": "exa-LEAKCHECK-0099"}' --append-system-prompt context.md
  assert_success
  assert_output_contains "egress     api.anthropic.com github.com api.github.com claude.ai storage.googleapis.com objects.githubusercontent.com release-assets.githubusercontent.com pypi.org
secrets
  ANTHROPIC_API_KEY       header x-api-key for api.anthropic.com, at e2b's proxy
  GITHUB_TOKEN            header Authorization (Basic) for github.com and Bearer for api.github.com, at e2b's proxy
mcp        exa (e2b's gateway)
prompt     10 bytes appended to the system prompt"
  refute_output_contains "$MODEL_KEY_VALUE"
  refute_output_contains "$GITHUB_KEY_VALUE"
  refute_output_contains "exa-LEAKCHECK"
  no_sdk_calls
  run --separate-stderr cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md --dry-run --json
  run python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["egress"], d["secrets"], d["mcp_servers"], d["system_prompt_bytes"])' <<<"$output"
  assert_output "None [{'name': 'ANTHROPIC_API_KEY', 'goes_to': \"the sandbox's environment\"}, {'name': 'GITHUB_TOKEN', 'goes_to': \"the sandbox's environment\"}] [] None"
}

@test "SIGTERM while e2b is still answering create kills the sandbox it made, by its session, and exits 143" {
  export FAKE_E2B_SLOW=Sandbox.create:30
  start_then_signal TERM in_create
  assert_failure 143
  assert_output "cr-e2b: interrupted (SIGTERM): killed sandbox sbx1, which start had made"
  [ "$took_ms" -lt 5000 ]
  [ "$(sandbox_state)" = killed ]
}

@test "Ctrl-C during setup kills the sandbox at once and exits 130" {
  start_then_signal INT in_install --install "sleep 30"
  assert_failure 130
  assert_output "cr-e2b: interrupted (SIGINT): killed sandbox sbx1, which start had made"
  [ "$took_ms" -lt 5000 ]
  [ "$(sandbox_state)" = killed ]
}

@test "SIGHUP during setup with --keep-on-failure keeps the sandbox, names it and exits 129" {
  start_then_signal HUP in_install --install "sleep 30" --keep-on-failure
  assert_failure 129
  assert_output "cr-e2b: interrupted (SIGHUP): left sandbox sbx1 running for you to inspect (--keep-on-failure); stop it with: cr-e2b kill --sandbox sbx1"
  [ "$(sandbox_state)" = running ]
}

@test "a second Ctrl-C while start kills its sandbox exits at once, still naming it" {
  export FAKE_E2B_SLOW=Sandbox.kill:30
  make_repo
  cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --install "sleep 30" \
    --check true >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
  eventually "the install step" in_install
  kill -INT "$pid"
  eventually "the slow kill" test -e "$FAKE_E2B_DIR/slow-Sandbox.kill"
  t0=$(date +%s%N)
  kill -INT "$pid"
  status=0
  wait "$pid" || status=$?
  [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 2000 ]
  assert_failure 130
  output=$(cat "$TEST_DIR/err")
  assert_output "cr-e2b: interrupted (SIGINT) while killing sandbox sbx1; it may still be running: cr-e2b kill --sandbox sbx1"
}

@test "control-room.json supplies the branch, prefix and variable; flags win" {
  make_repo; with_claude
  git -C "$TEST_DIR/src" checkout -qb trunk && git -C "$TEST_DIR/src" push -q "$TEST_DIR/origin.git" trunk
  printf '{"integration_branch": "trunk", "branch_prefix": "w/", "profile_variable": "WORKER_PROFILE"}' >control-room.json
  printf 'EPIC wc-3: branch bots/wc-3-count, scope src/, grants tests/\n' >bots.md
  run cr-e2b start --repo "$REPO" --profile docs --brief bots.md --workdir repo --prefix bots/
  assert_success
  run call_field Sandbox.create metadata
  assert_output_contains '"integration": "trunk", "prefix": "bots/"'
  run call_field Sandbox.create envs
  assert_output_contains '"WORKER_PROFILE": "docs"'
}

@test "control-room.json with an unknown key, or nested too deep, is one line and exit 2, naming the nearest key; doctor says so too" {
  printf '{"integration_brnach": "develop"}\n' >control-room.json
  rejects "control-room.json has an unknown key 'integration_brnach': did you mean 'integration_branch'? (known: integration_branch, branch_prefix, profile_variable, setup, checks, gate_tries, check_timeout, max_cost, template, queue, on_timeout, ci_rounds, ci_poll, ci_settle, ci_timeout)" "${ok_args[@]}"
  printf '{"integration": "develop"}\n' >control-room.json
  rejects "unknown key 'integration': did you mean 'integration_branch'?" "${ok_args[@]}"
  python3 -c 'import sys; n = 100000; sys.stdout.write("{\"setup\": " + "[" * n + "]" * n + "}")' >control-room.json
  rejects "control-room.json is not valid JSON" "${ok_args[@]}"
  run --separate-stderr cr-e2b template build --name acme --dry-run
  assert_failure 2
  printf '{"integration_brnach": "develop"}\n' >control-room.json
  run --separate-stderr cr-e2b doctor
  assert_failure 1
  assert_output_contains "control-room.json  FAIL  control-room.json has an unknown key 'integration_brnach'"
  printf '{"integration_branch": "develop", "checks": ["make test"]}\n' >control-room.json
  run --separate-stderr cr-e2b doctor
  assert_output_contains "control-room.json  ok    read: checks, integration"
}

@test "dry-run shows the plan without any key and without contacting e2b" {
  unset E2B_API_KEY ANTHROPIC_API_KEY
  run cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md --dry-run
  assert_success
  no_sdk_calls
  brief_size=$(wc -c <brief.md)
  assert_output_contains "template   base (e2b default)"
  assert_output_contains "lifetime   3600 s"
  assert_output_contains "envs       CLAUDE_CODE_DISABLE_AGENT_VIEW CR_PROFILE DISABLE_AUTOUPDATER"
  assert_output_contains "  clone         https://github.com/you/app.git (main) into /home/user/repo"
  assert_output_contains "  /home/user/.cr/inbox/brief.md  $brief_size bytes"
}

@test "dry-run --json lists steps and files" {
  run --separate-stderr cr-e2b start --repo https://github.com/you/app.git --profile backend --brief brief.md --dry-run --json
  assert_success
  no_sdk_calls
  run python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(s["name"] for s in d["steps"])); print(len(d["files"]))' <<<"$output"
  assert_output "git-identity clone install queue launch
15"
}

@test "--dry-run shows every warning start would show" {
  printf 'how is it going?\n' >question.md
  run --separate-stderr cr-e2b start --repo https://github.com/you/app.git --profile backend --brief question.md --dry-run --allow-out pypi.org
  assert_success
  [ "$stderr" = "cr-e2b: warning: the brief's first line is not 'EPIC <id>: branch ...': the worker will take it as a question and change nothing
cr-e2b: warning: the sandbox may reach only: api.anthropic.com, github.com, api.github.com, claude.ai, storage.googleapis.com, pypi.org" ]
  no_sdk_calls
}

@test "a dry run without the keys warns in one line that a real start would refuse, and names every other problem too" {
  unset E2B_API_KEY ANTHROPIC_API_KEY
  git config --global --unset user.email
  run --separate-stderr cr-e2b start "${ok_args[@]}" --check true --dry-run
  assert_success
  assert_output_contains "template   base"
  [ "${stderr_lines[0]}" = "cr-e2b: warning: a real start would refuse: missing keys: export E2B_API_KEY (your API key, from the e2b dashboard); and ANTHROPIC_API_KEY (an Anthropic API key, from console.anthropic.com) or CLAUDE_CODE_OAUTH_TOKEN (a Claude subscription: claude setup-token)" ]
  [ "${stderr_lines[1]}" = "cr-e2b: warning: a real start would refuse: no git identity: pass --git-name and --git-email, or set git config user.name and user.email" ]
  [[ "${stderr_lines[2]}" == "cr-e2b: warning: GITHUB_TOKEN is not set: "* ]]
  [ "${#stderr_lines[@]}" -eq 3 ]
  no_sdk_calls
}

@test "start without E2B_API_KEY exits 2 before any SDK call" {
  unset E2B_API_KEY
  rejects "cr-e2b: missing key: export E2B_API_KEY (your API key, from the e2b dashboard)" "${ok_args[@]}"
}

@test "start without a model credential exits 2, and a Claude subscription token is enough" {
  unset ANTHROPIC_API_KEY
  rejects "cr-e2b: missing key: export ANTHROPIC_API_KEY (an Anthropic API key, from console.anthropic.com) or CLAUDE_CODE_OAUTH_TOKEN (a Claude subscription: claude setup-token)" "${ok_args[@]}"
  export CLAUDE_CODE_OAUTH_TOKEN=oauth-LEAKCHECK-token-1234
  run cr-e2b start "${ok_args[@]}" --dry-run
  assert_success
  assert_output_contains CLAUDE_CODE_OAUTH_TOKEN
}

@test "start rejects a missing, empty, whitespace-only or non-UTF-8 brief" {
  rejects "cannot read brief nope.md" --repo https://h/r.git --profile backend --brief nope.md
  : >empty.md
  rejects "brief empty.md is empty" --repo https://h/r.git --profile backend --brief empty.md
  printf ' \n\t\n' >blank.md
  rejects "brief blank.md is empty" --repo https://h/r.git --profile backend --brief blank.md
  printf '\xff\xfe bad\n' >latin.md
  rejects "brief latin.md is not UTF-8 text" --repo https://h/r.git --profile backend --brief latin.md
}

@test "start rejects a bad profile, a bad variable and a variable named like a key" {
  rejects "--profile must match" --repo https://h/r.git --profile Backend --brief brief.md
  rejects "--profile must match" --repo https://h/r.git --profile 'a b' --brief brief.md
  rejects "not a variable name" "${ok_args[@]}" --profile-variable 'CR-PROFILE'
  rejects "collides with a key" "${ok_args[@]}" --profile-variable GITHUB_TOKEN
  rejects "collides with a key" "${ok_args[@]}" --profile-variable PATH
}

@test "start rejects a lifetime that is not a positive whole number" {
  rejects "--timeout: must be positive: 0" "${ok_args[@]}" --timeout 0
  rejects "--timeout: not a whole number: 'soon'" "${ok_args[@]}" --timeout soon
  rejects "--timeout: must be positive: -5" "${ok_args[@]}" --timeout -5
}

@test "start rejects an unreadable opening and one with an unknown placeholder" {
  rejects "cannot read opening template nope.md" "${ok_args[@]}" --opening nope.md
  printf 'Hello <profile>, see <ticket>\n' >opening.md
  rejects "unknown placeholders: <ticket>" "${ok_args[@]}" --opening opening.md
}

@test "start needs a git identity from flags or local config" {
  rm "$HOME/.gitconfig"
  rejects "no git identity" "${ok_args[@]}"
  run cr-e2b start "${ok_args[@]}" --git-name Bot --git-email bot@example.com --dry-run
  assert_success
  assert_output_contains "Bot <bot@example.com>"
}

@test "start rejects an --env name that is not set here" {
  rejects "--env MISSING_VAR is not set in this environment" "${ok_args[@]}" --env MISSING_VAR
}

@test "start rejects agent args that would take over the session or the output" {
  rejects "--agent-args must not set --resume" "${ok_args[@]}" --agent-args '--resume abc'
  rejects "--agent-args must not set --output-format" "${ok_args[@]}" --agent-args=--output-format=json
  rejects "cannot be split into words" "${ok_args[@]}" --agent-args '--allowedTools "Bash(git'
}

@test "start rejects an unusable branch name and an unreadable control-room.json" {
  rejects "--integration is not a usable git branch name" "${ok_args[@]}" --integration 'a..b'
  printf '{not json' >control-room.json
  rejects "control-room.json is not valid JSON" "${ok_args[@]}"
}

@test "start rejects missing required options with one line" {
  rejects "the following arguments are required: --brief" --repo https://h/r.git --profile backend
}

@test "every missing key is named in one line" {
  unset E2B_API_KEY ANTHROPIC_API_KEY
  rejects "cr-e2b: missing keys: export E2B_API_KEY (your API key, from the e2b dashboard); and ANTHROPIC_API_KEY (an Anthropic API key, from console.anthropic.com) or CLAUDE_CODE_OAUTH_TOKEN (a Claude subscription: claude setup-token)" "${ok_args[@]}"
}

@test "an SSH URL is refused before any sandbox, with or without GITHUB_TOKEN, naming its https URL" {
  rejects "cr-e2b: --repo git@github.com:you/app.git is an SSH URL: the sandbox has no SSH key, and GITHUB_TOKEN works over https only; give https://github.com/you/app.git" \
    --repo git@github.com:you/app.git --profile backend --brief brief.md
  rejects "give https://git.example.com/team/app.git" \
    --repo ssh://git@git.example.com:2222/team/app.git --profile backend --brief brief.md
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  rejects "give https://github.com/you/app.git" --repo git@github.com:you/app.git --profile backend --brief brief.md
}

@test "start refuses a brief whose branch is outside the prefix before anything is made, exit 2" {
  printf 'EPIC wc-3: branch feature/wc-3-x, scope a, grants b\n' >off.md
  rejects "the brief's branch feature/wc-3-x is not under the branch prefix claude/" --repo https://github.com/you/app.git \
    --profile backend --brief off.md
  printf '{"branch_prefix": "team/"}' >control-room.json
  rejects "the brief's branch claude/wc-3-count is not under the branch prefix team/" "${ok_args[@]}"
}

@test "a no-break space before EPIC makes a question here as in the sandbox" {
  printf '\xc2\xa0EPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nCount.\n' >nbsp.md
  run --separate-stderr cr-e2b start "${ok_args[@]/brief.md/nbsp.md}" --check true --dry-run
  assert_success
  assert_output_contains ""
  [[ "$stderr" == *"the brief's first line is not 'EPIC <id>: branch ...'"* ]]
  printf '\tEPIC wc-3: branch claude/wc-3-count, scope src/, grants tests/\nCount.\n' >tab.md
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  run --separate-stderr cr-e2b start "${ok_args[@]/brief.md/tab.md}" --check true --dry-run
  [ -z "$stderr" ]
}
