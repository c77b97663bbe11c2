#!/usr/bin/env bats
# `cr-e2b start`: checks before creation, the steps in the sandbox, the launch.

load test_helper

session_of() { call_field Sandbox.create metadata | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["session"])'; }

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

@test "no key appears in any command, written file, sandbox file or output" {
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE" EXTRA_SECRET_VALUE="custom-LEAKCHECK-forwarded-5e6f"
  make_repo; with_claude
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --env EXTRA_SECRET_VALUE
  assert_success
  all_output=$output
  wait_idle
  printf 'a question\n' >q.md
  run cr-e2b brief --sandbox sbx1 --brief q.md; all_output+=$output
  wait_idle
  run cr-e2b log --sandbox sbx1; all_output+=$output
  run cr-e2b status --sandbox sbx1; all_output+=$output
  run cr-e2b status --sandbox sbx1 --json; all_output+=$output
  recorded=$(recorded_without_create_envs)
  for key in "$E2B_KEY_VALUE" "$MODEL_KEY_VALUE" "$GITHUB_KEY_VALUE" "$EXTRA_SECRET_VALUE"; do
    [[ "$all_output" != *"$key"* ]]
    [[ "$recorded" != *"$key"* ]]
    run grep -rlF -- "$key" "$(sandbox_home)" "$CLAUDE_STUB_DIR"
    assert_failure 1
  done
  # and they did reach the sandbox's environment, where they belong
  run call_field Sandbox.create envs
  assert_output_contains "\"GITHUB_TOKEN\": \"$GITHUB_KEY_VALUE\""
  assert_output_contains "\"EXTRA_SECRET_VALUE\": \"$EXTRA_SECRET_VALUE\""
}

@test "the e2b key never enters the sandbox" {
  start_worker
  run call_field Sandbox.create envs
  refute_output_contains E2B_API_KEY
}

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

@test "a sandbox command failing is reported, and the sandbox killed" {
  make_repo; with_claude
  export FAKE_E2B_FAIL='command:.cr" setup'
  run cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --check true
  assert_failure 1
  [[ "${lines[0]}" == "cr-e2b: step setup failed (exit 1): simulated failure" ]]
  run calls
  assert_output_contains Sandbox.kill
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

@test "start rejects a repository URL with credentials in it" {
  rejects "--repo carries credentials" --repo https://x-access-token:ghp_abc@github.com/you/app.git --profile backend --brief brief.md
  rejects "--repo carries credentials" --repo https://ghp_abc@github.com/you/app.git --profile backend --brief brief.md
  rejects "--repo must be an https, http, git or file URL" --repo ftp://h/r.git --profile backend --brief brief.md
}

@test "the credentials in a rejected URL are not echoed back" {
  rejects "--repo carries credentials" --repo https://u:SUPERSECRETVALUE@github.com/r.git --profile backend --brief brief.md
  refute_output_contains SUPERSECRETVALUE
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

@test "every missing key is named in one line" {
  unset E2B_API_KEY ANTHROPIC_API_KEY
  rejects "cr-e2b: missing keys: export E2B_API_KEY (your API key, from the e2b dashboard); and ANTHROPIC_API_KEY (an Anthropic API key, from console.anthropic.com) or CLAUDE_CODE_OAUTH_TOKEN (a Claude subscription: claude setup-token)" "${ok_args[@]}"
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

@test "an SSH URL is refused before any sandbox, with or without GITHUB_TOKEN, naming its https URL" {
  rejects "cr-e2b: --repo git@github.com:you/app.git is an SSH URL: the sandbox has no SSH key, and GITHUB_TOKEN works over https only; give https://github.com/you/app.git" \
    --repo git@github.com:you/app.git --profile backend --brief brief.md
  rejects "give https://git.example.com/team/app.git" \
    --repo ssh://git@git.example.com:2222/team/app.git --profile backend --brief brief.md
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  rejects "give https://github.com/you/app.git" --repo git@github.com:you/app.git --profile backend --brief brief.md
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

@test "on a terminal list has a header, or says there is no worker; wait and kill say they are done" {
  run script -qec "cr-e2b list" /dev/null
  assert_output_contains "no worker is running or paused (cr-e2b start makes one)"
  delivering_brief delivers.md
  start_worker delivers.md
  wait_idle
  run script -qec "cr-e2b list" /dev/null
  assert_output_contains "SANDBOX  PROFILE  BRANCH             TURNS    SPENT  LEFT         STATE"
  assert_output_contains "1 worker: \$0.10 spent with no caps, 0 over budget"
  run script -qec "cr-e2b wait --sandbox sbx1" /dev/null
  assert_output_contains "turn 2 READY certified: claude/wc-3-count at "
  run script -qec "cr-e2b kill --sandbox sbx1" /dev/null
  assert_output_contains "killed sandbox sbx1"
  run cr-e2b list
  assert_output ""
}

@test "brief without E2B_API_KEY gives the key's error alone, not the question warning too" {
  unset E2B_API_KEY
  printf 'a question\n' >q.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief q.md
  assert_failure 2
  assert_one_error_line
  assert_output_contains "missing key: export E2B_API_KEY"
}

@test "--dry-run shows every warning start would show" {
  printf 'how is it going?\n' >question.md
  run --separate-stderr cr-e2b start --repo https://github.com/you/app.git --profile backend --brief question.md --dry-run --allow-out pypi.org
  assert_success
  [ "$stderr" = "cr-e2b: warning: the brief's first line is not 'EPIC <id>: branch ...': the worker will take it as a question and change nothing
cr-e2b: warning: the sandbox may reach only: api.anthropic.com, github.com, api.github.com, claude.ai, storage.googleapis.com, pypi.org" ]
  no_sdk_calls
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

@test "start refuses a brief whose branch is outside the prefix before anything is made, exit 2" {
  printf 'EPIC wc-3: branch feature/wc-3-x, scope a, grants b\n' >off.md
  rejects "the brief's branch feature/wc-3-x is not under the branch prefix claude/" --repo https://github.com/you/app.git \
    --profile backend --brief off.md
  printf '{"branch_prefix": "team/"}' >control-room.json
  rejects "the brief's branch claude/wc-3-count is not under the branch prefix team/" "${ok_args[@]}"
}

@test "the start brief's epic, branch and scope are in e2b's metadata, which the worker cannot change" {
  start_worker
  run python3 -c 'import json, sys; print(json.loads(json.loads(sys.stdin.read())["asked"]))' <<<"$(call_field Sandbox.create metadata)"
  assert_output "[{'epic': 'wc-3', 'branch': 'claude/wc-3-count', 'scope': ['src/'], 'grants': ['tests/'], 'turn': 2}]"
}
