#!/usr/bin/env bats
# Keys never leak: in the sandbox's environment only (or added at the edge),
# masked in every view, on no command line, in no file or log, and a key's
# value in anything cr-e2b would send refused before any call.

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

@test "nothing the runner writes holds a key's value" {
  setup_runner
  export ANTHROPIC_API_KEY="$MODEL_KEY_VALUE" GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  send "hello" >/dev/null
  send "again STUB_EXIT=2" >/dev/null
  idle
  run grep -rlF -e "$MODEL_KEY_VALUE" -e "$GITHUB_KEY_VALUE" -e "$E2B_KEY_VALUE" "$SBX"
  assert_failure 1
}

@test "with --secrets edge no key is in the sandbox: e2b's proxy adds them as each host's header" {
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  start_until_setup --secrets edge
  run python3 - "$FAKE_E2B_DIR/calls.jsonl" "$MODEL_KEY_VALUE" "$GITHUB_KEY_VALUE" <<'PY'
import base64, json, sys
calls = [json.loads(line) for line in open(sys.argv[1])]
keys = sys.argv[2:]
create = next(c for c in calls if c["call"] == "Sandbox.create")
inside = [json.dumps(create["envs"])] + [json.dumps(c.get("files")) for c in calls if c["call"] == "files.write_files"] \
    + [c.get("cmd", "") for c in calls if c["call"] == "commands.run"]
print("in the sandbox:", [k for k in keys if any(k in text for text in inside)])
print("envs:", sorted(create["envs"].items()))
basic = base64.b64encode(("x-access-token:" + keys[1]).encode()).decode()
rules = create["network"]["rules"]
print(rules["api.anthropic.com"] == [{"transform": {"headers": {"x-api-key": keys[0]}}}],
      rules["github.com"] == [{"transform": {"headers": {"Authorization": "Basic " + basic}}}],
      rules["api.github.com"] == [{"transform": {"headers": {"Authorization": "Bearer " + keys[1]}}}],
      sorted(rules), "allow_out" in create["network"])
PY
  assert_output <<'OUT'
in the sandbox: []
envs: [('ANTHROPIC_API_KEY', 'cr-e2b-injected-at-the-edge'), ('CLAUDE_CODE_DISABLE_AGENT_VIEW', '1'), ('CR_PROFILE', 'backend'), ('DISABLE_AUTOUPDATER', '1'), ('GITHUB_TOKEN', 'cr-e2b-injected-at-the-edge')]
True True True ['api.anthropic.com', 'api.github.com', 'github.com'] False
OUT
  refute_output_contains "$MODEL_KEY_VALUE"
}

@test "at the edge a Claude subscription's token goes as a bearer token" {
  unset ANTHROPIC_API_KEY
  export CLAUDE_CODE_OAUTH_TOKEN="oauth-LEAKCHECK-token-77aa"
  start_until_setup --secrets edge --allow-out pypi.org
  run python3 -c 'import json,sys; n=json.loads(sys.stdin.read()); print(n["rules"]["api.anthropic.com"], n["allow_out"][:2])' <<<"$(create_field network)"
  assert_output "[{'transform': {'headers': {'Authorization': 'Bearer oauth-LEAKCHECK-token-77aa'}}}] ['api.anthropic.com', 'github.com']"
}

@test "--env cannot forward the keys cr-e2b places itself, edge or not" {
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  for name in E2B_API_KEY ANTHROPIC_API_KEY GITHUB_TOKEN; do
    rejects "--env $name: cr-e2b places the keys itself (E2B_API_KEY never goes into the sandbox, the others as --secrets says); do not forward them" \
      "${ok_args[@]}" --env "$name"
    rejects "--env $name: cr-e2b places the keys itself" "${ok_args[@]}" --env "$name" --secrets edge
  done
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

@test "the whole log is masked against the secret names start kept in the metadata" {
  with_worker_log
  python3 - "$FAKE_E2B_DIR/sandboxes/sbx1/info.json" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
info["metadata"]["secret_names"] = "ANTHROPIC_API_KEY PROXY_AUTH"
json.dump(info, open(sys.argv[1], "w"))
PY
  export PROXY_AUTH="proxy-LEAKCHECK-value-123"
  echo "the proxy said proxy-LEAKCHECK-value-123" >>"$(sandbox_home)/.cr/log"
  run cr-e2b log --sandbox sbx1
  assert_output_contains "the proxy said [redacted]"
  refute_output_contains "$PROXY_AUTH"
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

@test "a key in a diff is masked where a piece cuts it" {
  idle_worker
  for _ in $(seq 400); do printf '%s' "$MODEL_KEY_VALUE"; done >"$(workdir)/keys.txt"
  CR_E2B_CHUNK_BYTES=1000 run cr-e2b diff --sandbox sbx1
  assert_success
  refute_output_contains "${MODEL_KEY_VALUE:0:12}"
  [ "$(grep -o '\[redacted\]' <<<"$output" | wc -l)" -eq 400 ]
  CR_E2B_CHUNK_BYTES=1000 cr-e2b diff --sandbox sbx1 >piped.patch
  [ "$(grep -o '\[redacted\]' piped.patch | wc -l)" -eq 400 ]
  run grep -c "${MODEL_KEY_VALUE:0:12}" piped.patch
  assert_failure 1
}

@test "a worker that prints its MCP gateway's token shows it masked to every later verb that reads it" {
  printf 'Show the gateway.\nSTUB_SAY=cat ~/.cr/mcp-gateway.json\n' >show.md
  start_worker show.md --mcp 'exa={}'
  wait_idle
  run cr-e2b log --sandbox sbx1
  assert_success
  assert_output_contains 'Bearer [redacted]'
  refute_output_contains mcp-token-sbx1
  run cr-e2b status --sandbox sbx1
  refute_output_contains mcp-token-sbx1
  run cr-e2b list
  refute_output_contains mcp-token-sbx1
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

@test "a key's value or a URL's credentials in anything start would send is refused before any call" {
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  rejects "--install holds the value of a secret" "${ok_args[@]}" --install "curl -H 'x: $GITHUB_KEY_VALUE' https://h/i | bash"
  rejects "--agent-args holds the value of a secret" "${ok_args[@]}" --agent-args="--append-system-prompt $MODEL_KEY_VALUE"
  rejects "--agent-args holds the value of a secret" "${ok_args[@]}" --allow "Bash(curl $GITHUB_KEY_VALUE:*)"
  rejects "--setup holds a URL with credentials (user:password@)" "${ok_args[@]}" --setup 'pip install git+https://me:hunter2@h/x.git'
  rejects "--mcp holds the value of a secret" "${ok_args[@]}" --mcp "exa={\"apiKey\": \"$MODEL_KEY_VALUE\"}"
  printf '{"mcpServers": {"x": {"type": "http", "url": "https://h", "headers": {"k": "%s"}}}}\n' "$GITHUB_KEY_VALUE" >mcp.json
  rejects "--mcp-config holds the value of a secret; write its name (\$NAME) instead: write \${NAME} there" "${ok_args[@]}" --mcp-config mcp.json
  printf 'Use %s.\n' "$MODEL_KEY_VALUE" >prompt.md
  rejects "--append-system-prompt holds the value of a secret" "${ok_args[@]}" --append-system-prompt prompt.md
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nThe token is %s\n' "$GITHUB_KEY_VALUE" >leaky.md
  rejects "the brief holds the value of a secret" --repo https://github.com/you/app.git --profile backend --brief leaky.md
  rejects "--git-name holds the value of a secret" "${ok_args[@]}" --git-name "$E2B_KEY_VALUE"
  rejects "--template holds the value of a secret" "${ok_args[@]}" --template "t-$MODEL_KEY_VALUE"
  export my_api_token=lowercase-secret-4711
  rejects "--check holds the value of a secret" "${ok_args[@]}" --check 'curl -H "t: lowercase-secret-4711" h'
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

@test "doctor refuses a repository URL with credentials, before any sandbox or command line has it" {
  run --separate-stderr cr-e2b doctor --live --repo https://me:hunter2@git.example.com/r.git
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: --repo carries credentials; drop them and export GITHUB_TOKEN instead"
  no_sdk_calls
}

@test "a brief holding a key's value is refused, exit 2, before any call, and queues nothing" {
  printf 'EPIC wc-3: branch claude/wc-3-x, scope a, grants b\nuse %s\n' "$MODEL_KEY_VALUE" >leak.md
  run --separate-stderr cr-e2b brief --sandbox sbx1 --brief leak.md
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: the brief holds the value of a secret; write its name (\$NAME) instead: the sandbox's environment has the variable (--env NAME forwards one)"
  no_sdk_calls
}

@test "fork --brief holding a key's value is refused, exit 2, before any call" {
  printf 'and use %s\n' "$MODEL_KEY_VALUE" >leak.md
  run --separate-stderr cr-e2b fork --sandbox sbx1 --brief leak.md
  assert_failure 2
  assert_one_error_line
  assert_output_contains "cr-e2b: the brief holds"
  no_sdk_calls
}

@test "a setup command that holds a key's value is refused before any sandbox, without echoing it" {
  rejects "--setup holds the value of a secret; write its name (\$NAME) instead" "${ok_args[@]}" \
    --setup "curl -H 'x-api-key: $MODEL_KEY_VALUE' https://example.com"
  refute_output_contains "$MODEL_KEY_VALUE"
}

@test "a key's value or credentials in a package, a variable or a name are refused before anything reaches e2b" {
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  for option in "--pip git+https://x-access-token:$GITHUB_KEY_VALUE@github.com/o/p.git" "--apt pkg-$MODEL_KEY_VALUE" \
      "--npm @o/p@https://u:pw@h/p.tgz" "--env PIP_INDEX_URL=https://__token__:pypi-AgEIcHlwaS5vcmc@h/simple" \
      "--env STAGE=$GITHUB_KEY_VALUE" "--env npm_token=abcdefgh12345" "--from t-$MODEL_KEY_VALUE"; do
    # shellcheck disable=SC2086 # an option and its value
    run --separate-stderr cr-e2b template build --name acme $option
    assert_failure 2
    assert_one_error_line
    [[ "$output" == *"holds the value of a secret"* || "$output" == *"holds a URL with credentials"* || "$output" == *"looks like a secret"* ]] ||
      { echo "$option: $output" >&2; return 1; }
    refute_output_contains "$GITHUB_KEY_VALUE"
  done
  no_sdk_calls
}
