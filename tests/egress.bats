#!/usr/bin/env bats
# Keys the worker cannot leak: the egress allow-list, keys injected at the
# edge, MCP servers and an appended system prompt.

load test_helper

# start up to the sandbox's setup, which the fake fails at once: what start
# asked of e2b and what it wrote is all recorded by then.
start_until_setup() {
  export FAKE_E2B_FAIL=command:setup
  run --separate-stderr cr-e2b start --repo "${REPO:-https://github.com/you/app.git}" \
    --profile backend --brief brief.md "$@"
  assert_failure 1
}

create_field() { call_field Sandbox.create "$1"; }

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

@test "--env cannot forward the keys cr-e2b places itself, edge or not" {
  export GITHUB_TOKEN="$GITHUB_KEY_VALUE"
  for name in E2B_API_KEY ANTHROPIC_API_KEY GITHUB_TOKEN; do
    rejects "--env $name: cr-e2b places the keys itself (E2B_API_KEY never goes into the sandbox, the others as --secrets says); do not forward them" \
      "${ok_args[@]}" --env "$name"
    rejects "--env $name: cr-e2b places the keys itself" "${ok_args[@]}" --env "$name" --secrets edge
  done
}

@test "doctor refuses a repository URL with credentials, before any sandbox or command line has it" {
  run --separate-stderr cr-e2b doctor --live --repo https://me:hunter2@git.example.com/r.git
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: --repo carries credentials; drop them and export GITHUB_TOKEN instead"
  no_sdk_calls
}
