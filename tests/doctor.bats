#!/usr/bin/env bats
# `cr-e2b doctor`: what a first live run needs, checked line by line.

load test_helper

# doctor asks the model API whether it takes the key: here, a stand-in of it
eval "helper_$(declare -f setup)"
setup() {
  helper_setup
  model_api
}

# A sandbox whose network answers and whose template has Claude Code.
reachable_sandbox() {
  with_claude
  printf '#!/bin/sh\necho 200\n' >"$TEST_DIR/bin/curl"
  chmod +x "$TEST_DIR/bin/curl"
}

# Doctor's word and detail on CHECK's line: verdict CHECK (this file's own, not
# test_helper's verdict, which writes the gate's record).
verdict() { grep -E "^$1 " <<<"$output" | tr -s ' ' | cut -d' ' -f$(( $(wc -w <<<"$1") + 1 ))-; }

@test "doctor --live passes on a good setup, and kills its sandbox" {
  reachable_sandbox
  run --separate-stderr cr-e2b doctor --live --repo https://github.com/you/app.git
  assert_success
  for check in Python "e2b SDK" "e2b key" "model key" "model API" "git identity" "e2b API" \
      "sandbox bash" "sandbox python3" "sandbox tar" "sandbox claude" "sandbox reaches 127.0.0.1" \
      "sandbox reaches github.com" "sandbox round trip"; do
    [[ "$(verdict "$check")" == "ok "* ]] || { echo "$check: $(verdict "$check")" >&2; return 1; }
  done
  [[ "$stderr" == "cr-e2b: warning: killed the doctor's sandbox sbx1 after "*" s, about \$"*" at e2b's list prices for 2 vCPU and 512 MiB" ]]
  run call_field Sandbox.kill sandbox_id
  assert_output '"sbx1"'
}

@test "Ctrl-C while doctor --live creates its sandbox finds it by its mark, kills it and says so" {
  reachable_sandbox
  export FAKE_E2B_SLOW=Sandbox.create:30
  cr-e2b doctor --live >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  pid=$!
  eventually "the create" test -e "$FAKE_E2B_DIR/slow-Sandbox.create"
  kill -INT "$pid"
  status=0
  wait "$pid" || status=$?
  [ "$status" -eq 130 ]
  run cat "$TEST_DIR/err"
  assert_output "cr-e2b: interrupted (SIGINT): killed the doctor's sandbox sbx1"
  run sandbox_state sbx1
  assert_output killed
}

@test "doctor names a template that lacks tar, and exits 1" {
  reachable_sandbox
  printf '#!/bin/sh\nexit 127\n' >"$TEST_DIR/bin/tar"
  chmod +x "$TEST_DIR/bin/tar"
  run --separate-stderr cr-e2b doctor --live
  assert_failure 1
  [[ "$(verdict "sandbox tar")" == "FAIL "*"-> use a template that has it" ]]
  run call_field Sandbox.kill sandbox_id
  assert_output '"sbx1"'
}

@test "doctor names a template whose python3 is too old for cr-e2b's side of the sandbox, and how to get one" {
  reachable_sandbox
  # the sandbox's python3 (the fake's sandbox shares this PATH); cr-e2b runs on the real one
  python=$(command -v python3)
  printf '#!/bin/sh\necho "Python 3.8.10"\nexit 1\n' >"$TEST_DIR/bin/python3"
  chmod +x "$TEST_DIR/bin/python3"
  run --separate-stderr "$python" "$ROOT/cr-e2b" doctor --live
  assert_failure 1
  [ "$(verdict "sandbox python3")" = "FAIL python3 3.10 or newer is missing: cr-e2b's side of the sandbox runs on it -> cr-e2b template build makes a template that has one (its base, e2b's claude, does)" ]
}

@test "doctor reports a refused key and does not try a sandbox" {
  export FAKE_E2B_FAIL=auth
  run --separate-stderr cr-e2b doctor --live
  assert_failure 1
  [ "$(verdict "e2b API")" = "FAIL e2b refused the API key (check E2B_API_KEY): Invalid API key -> check E2B_API_KEY and the network" ]
  [ "$(verdict sandbox)" = "FAIL not tried: fix the checks above first" ]
  run calls
  refute_output_contains Sandbox.create
}

@test "doctor reports an unreachable e2b and missing keys, by name" {
  export FAKE_E2B_FAIL=network
  unset ANTHROPIC_API_KEY
  run --separate-stderr cr-e2b doctor --json
  assert_failure 7
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["ok"]); [print(c["name"], c["ok"], c["fix"]) for c in d["checks"] if not c["ok"]]' "$output"
  assert_output <<'OUT'
False
model key False export ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN
e2b API False check E2B_API_KEY and the network
OUT
  refute_output_contains "$E2B_KEY_VALUE"
}

@test "doctor warns that without GITHUB_TOKEN a worker cannot push or open its pull request, and still passes" {
  run --separate-stderr cr-e2b doctor
  assert_success
  [ "$(verdict "GitHub token")" = "WARN GITHUB_TOKEN is not set: a worker can clone a public repository, but not push its branch or open its pull request -> export GITHUB_TOKEN (Contents and Pull requests: read and write, for the repository)" ]
  run --separate-stderr cr-e2b doctor --json
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["ok"], [(c["ok"], c["warning"]) for c in d["checks"] if c["name"] == "GitHub token"])' "$output"
  assert_output "True [(True, True)]"
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  run --separate-stderr cr-e2b doctor
  [ "$(verdict "GitHub token")" = "ok GITHUB_TOKEN is set" ]
  refute_output_contains "$GITHUB_KEY_VALUE"
}

@test "doctor's lines read as sentences: each key is named once, with what is set" {
  run --separate-stderr cr-e2b doctor
  assert_success
  [ "$(verdict "e2b key")" = "ok E2B_API_KEY is set" ]
  [ "$(verdict "model key")" = "ok ANTHROPIC_API_KEY is set, and $MODEL_ORIGIN takes it" ]
  [ "$(verdict "model API")" = "ok $MODEL_ORIGIN, from ANTHROPIC_BASE_URL (start sends a worker there with --env ANTHROPIC_BASE_URL)" ]
  unset ANTHROPIC_API_KEY
  run --separate-stderr cr-e2b doctor
  assert_failure 2
  [ "$(verdict "model key")" = "FAIL neither ANTHROPIC_API_KEY nor CLAUDE_CODE_OAUTH_TOKEN is set -> export ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN" ]
  refute_output_contains "key model key"
  refute_output_contains "key E2B_API_KEY"
}

@test "a missing git identity is a warning naming start's --git-name and --git-email, and doctor --live still runs" {
  reachable_sandbox
  git config --global --unset user.name
  git config --global --unset user.email
  run --separate-stderr cr-e2b doctor --live
  assert_success
  [ "$(verdict "git identity")" = "WARN user.name and user.email are not set in git config: start then needs --git-name and --git-email -> git config --global user.name NAME; git config --global user.email EMAIL; or start --git-name NAME --git-email EMAIL" ]
  [[ "$(verdict "sandbox bash")" == "ok "* ]]
  run --separate-stderr cr-e2b doctor --json
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["ok"], [(c["ok"], c["warning"]) for c in d["checks"] if c["name"] == "git identity"])' "$output"
  assert_output "True [(True, True)]"
}

@test "doctor --live checks the model host start would use: ANTHROPIC_BASE_URL's, and none of its credentials leaves" {
  reachable_sandbox
  export ANTHROPIC_BASE_URL="https://proxy:pw-LEAKCHECK-9c1@llm.example.com:8443/anthropic"
  run --separate-stderr cr-e2b doctor --live
  assert_success
  [ "$(verdict "model API")" = "ok https://llm.example.com:8443, from ANTHROPIC_BASE_URL (start sends a worker there with --env ANTHROPIC_BASE_URL)" ]
  [[ "$(verdict "sandbox reaches llm.example.com")" == "ok "* ]]
  refute_output_contains "reaches api.anthropic.com"
  run call_field commands.run cmd
  assert_output_contains "https://llm.example.com:8443"
  run grep -c LEAKCHECK-9c1 "$FAKE_E2B_DIR/calls.jsonl"
  assert_output 0
  export ANTHROPIC_BASE_URL="llm.example.com"
  run --separate-stderr cr-e2b doctor
  assert_failure 2
  [ "$(verdict "model API")" = "FAIL ANTHROPIC_BASE_URL is not an http(s) URL with a host -> export ANTHROPIC_BASE_URL=https://HOST[:PORT][/PATH], or unset it" ]
}

@test "doctor asks the model API once whether it takes the key, and a refused key fails it, naming the key" {
  run --separate-stderr cr-e2b doctor
  assert_success
  run cat "$TEST_DIR/model.log"
  assert_output '{"path": "/v1/models?limit=1", "key": true}'
  export ANTHROPIC_API_KEY="sk-ant-LEAKCHECK-wrongkey-0000"
  run --separate-stderr cr-e2b doctor
  assert_failure 1
  [ "$(verdict "model key")" = "FAIL ANTHROPIC_API_KEY is set, but $MODEL_ORIGIN refuses it (401 Unauthorized) -> export ANTHROPIC_API_KEY, a key that $MODEL_ORIGIN takes (console.anthropic.com, or claude setup-token)" ]
  refute_output_contains "LEAKCHECK-wrongkey"
  unset ANTHROPIC_API_KEY
  export CLAUDE_CODE_OAUTH_TOKEN="$MODEL_KEY_VALUE"
  run --separate-stderr cr-e2b doctor
  [ "$(verdict "model key")" = "ok CLAUDE_CODE_OAUTH_TOKEN is set, and $MODEL_ORIGIN takes it" ]
  kill "$(cat "$TEST_DIR/model.pid")"
  run --separate-stderr cr-e2b doctor
  assert_success
  [[ "$(verdict "model key")" == "WARN CLAUDE_CODE_OAUTH_TOKEN is set; $MODEL_ORIGIN could not be asked whether it takes it ("* ]]
}
