#!/usr/bin/env bats
# `cr-e2b template`: build and list, what a build sends and shows, and doctor
# looking into a template's Claude Code.

load test_helper

# Claude Code and the GitHub CLI on PATH, as the claude template has them.
with_tools() {
  with_claude
  printf '#!/bin/sh\necho "gh version 2.62.0 (stub)"\n' >"$TEST_DIR/bin/gh"
  chmod +x "$TEST_DIR/bin/gh"
}

# The steps the SDK was given, one line each: "TYPE [user] command".
build_steps() {
  python3 -c 'import json,sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    if c["call"] == "Template.build_in_background":
        print(c["template"], c["name"], c["cpu_count"], c["memory_mb"])
        for s in c["steps"]:
            a = s["args"]
            print(s["type"], *(a[1:] if s["type"] == "RUN" else []), a[0] if s["type"] == "RUN" else " ".join(a))' \
    "$FAKE_E2B_DIR/calls.jsonl"
}

# The output with each time e2b gave as T.
timeless() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}/T/g' <<<"$1"; }

assert_output_lines() { output=$(cat); assert_output "$1"; }

@test "template build gives e2b the steps in order, each package quoted, tools as the user" {
  with_tools
  run cr-e2b template build --name acme-py --apt libpq-dev --pip 'requests>=2' --pip ruff \
    --npm pnpm --run 'echo deps' --run 'echo done' --env STAGE=ci --cpu 4 --memory 4096
  assert_success
  run build_steps
  [ "${lines[0]}" = "claude acme-py 4 4096" ]
  [ "${lines[1]}" = "ENV STAGE ci" ]
  [ "${lines[2]}" = "RUN root apt-get update && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y libpq-dev" ]
  [ "${lines[3]}" = "RUN root pip install 'requests>=2' ruff" ]
  [ "${lines[4]}" = "RUN root npm install -g pnpm" ]
  [[ "${lines[5]}" == "RUN user bash -o pipefail -c "*"claude --version"*"2.1.332"* ]]
  [[ "${lines[6]}" == "RUN user bash -o pipefail -c "*"pr_tool"* ]]
  [ "${lines[7]}" = "RUN user echo deps" ]
  [ "${lines[8]}" = "RUN user echo done" ]
  [ "${#lines[@]}" -eq 9 ]
}

@test "control-room.json's template object gives the steps; flags add to its lists and replace the rest" {
  with_tools
  cat >control-room.json <<'JSON'
{"integration_branch": "main",
 "template": {"from": "base", "apt": ["jq"], "pip": ["pytest"], "run": ["echo from-file"],
              "env": {"STAGE": "file"}, "cpu": 2, "memory": 1024}}
JSON
  run cr-e2b template build --name acme --apt ripgrep --run 'echo from-flag' --env STAGE=flag --memory 2048
  assert_success
  run build_steps
  [ "${lines[0]}" = "base acme 2 2048" ]
  [ "${lines[1]}" = "ENV STAGE flag" ]
  [ "${lines[2]}" = "RUN root apt-get update && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y jq ripgrep" ]
  [ "${lines[3]}" = "RUN root pip install pytest" ]
  [ "${lines[6]}" = "RUN user echo from-file" ]
  [ "${lines[7]}" = "RUN user echo from-flag" ]
}

@test "--from replaces the file's base" {
  with_tools
  printf '{"template": {"from": "base"}}\n' >control-room.json
  run cr-e2b template build --name acme --from claude
  assert_success
  run build_steps
  [ "${lines[0]}" = "claude acme None None" ]
}

@test "template build ends with the template's name and id, and how to start on it" {
  with_tools
  run --separate-stderr cr-e2b template build --name acme
  assert_success
  [[ "$output" =~ ^template\ \ acme$'\n'id\ \ \ \ \ \ \ \ tpl-acme$'\n'build\ \ \ \ \ build1,\ 2\ steps\ in\ 0m0[0-9]s$'\n'start\ \ \ \ \ cr-e2b\ start\ --template\ acme\ --repo\ URL\ --profile\ NAME\ --brief\ FILE$ ]]
  [[ "$stderr" == "building acme from claude: template tpl-acme, build build1"* ]]
}

@test "a build over a name the team has is refused in one look, before any build, unless --force" {
  with_tools
  run cr-e2b template build --name acme
  assert_success
  rm "$FAKE_E2B_DIR/calls.jsonl"
  run --separate-stderr cr-e2b template build --name acme --run 'echo new'
  assert_failure 9
  assert_one_error_line
  timeless "$output" | assert_output_lines "cr-e2b: template acme exists (build build1 of T): a build replaces what start --template acme starts from; --force builds it all the same"
  run calls
  assert_output "Template.get_tags"
  run --separate-stderr cr-e2b template build --name acme --run 'echo new' --force
  assert_success
  timeless "$(head -n 1 <<<"$stderr")" | assert_output_lines "cr-e2b: warning: replacing template acme (build build1 of T)"
  run call_field Template.build_in_background name
  assert_output '"acme"'
}

@test "a new tag of a template the team has is built without a word; the same tag again is refused" {
  with_tools
  run cr-e2b template build --name acme
  run --separate-stderr cr-e2b template build --name acme:v2
  assert_success
  [[ "$stderr" == "building acme:v2 from claude: template tpl-acme, build build2"* ]]
  run --separate-stderr cr-e2b template build --name acme:v2
  assert_failure 9
  assert_one_error_line
  timeless "$output" | assert_output_lines "cr-e2b: template acme:v2 exists (build build2 of T): a build replaces what start --template acme:v2 starts from; --force builds it all the same"
}

@test "template list shows the team's templates, the last built first; a terminal gets a header" {
  with_tools
  run cr-e2b template build --name acme-py --cpu 4 --memory 4096
  run cr-e2b template build --name acme-node
  run cr-e2b template list
  assert_success
  timeless "$output" | assert_output_lines "acme-node  tpl-acme-node  ready  2 vCPU, 512 MB   T
acme-py    tpl-acme-py    ready  4 vCPU, 4096 MB  T"
  run script -qec "cr-e2b template list" /dev/null
  timeless "${output//$'\r'/}" | head -n 1 | assert_output_lines "NAME       ID             STATUS  SIZE             BUILT"
}

@test "template list --json gives each template's name, id, status, size and times" {
  with_tools
  run cr-e2b template build --name acme --cpu 4 --memory 4096
  run cr-e2b template list --json
  assert_success
  run python3 -c 'import json,sys; t=json.load(sys.stdin)["templates"]
print(len(t), *(t[0][k] for k in ("name", "template_id", "build_status", "cpu_count", "memory_mb", "spawn_count")))
print(t[0]["created_at"] <= t[0]["updated_at"], t[0]["last_spawned_at"])' <<<"$output"
  assert_output "1 acme tpl-acme ready 4 4096 0
True None"
}

@test "piped, every line of the build's log is shown as it comes, while the build runs" {
  with_tools
  export FAKE_E2B_BUILD_HOLD="$TEST_DIR/go"
  cr-e2b template build --name acme --run 'echo step-output' >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  build=$!
  eventually "the first step's line" grep -q '^\[builder 1/3\] RUN bash' "$TEST_DIR/err"
  run grep -c 'step-output' "$TEST_DIR/err"
  assert_output 0
  touch "$TEST_DIR/go"
  wait "$build"
  run cat "$TEST_DIR/err"
  assert_output_contains "[builder 1/3] [stdout] Claude Code 2.1.332 is here already"
  assert_output_contains "[builder 2/3] [stdout] gh version 2.62.0 (stub)"
  assert_output_contains "[builder 3/3] RUN echo step-output
[builder 3/3] [stdout] step-output"
}

@test "every line that comes at the build's end is shown, past a look's page of them" {
  with_tools
  run --separate-stderr cr-e2b template build --name acme --run 'seq 250'
  assert_success
  run grep -c '^\[builder 3/3\] \[stdout\] [0-9]*$' <<<"$stderr"
  assert_output 250
}

@test "on a terminal the build shows a line per step, numbered of the total, in cr-e2b's words" {
  with_tools
  run script -qec "cr-e2b template build --name acme --pip ruff --run 'echo step-output' 2>&1 >/dev/null" /dev/null
  assert_success
  run grep -v '^building' <<<"${output//$'\r'/}"
  assert_output <<'OUT'
step 1/4  pip      ruff (pip)
step 2/4  install  Claude Code 2.1.332, unless the base has that version
step 3/4  pr-tool  GitHub CLI 2.62.0, unless the base has one
step 4/4  run      echo step-output
OUT
}

@test "the build's log is masked and its control characters escaped" {
  with_tools
  export FAKE_E2B_BUILD_LINE=$'token '"$MODEL_KEY_VALUE"$' \e]0;owned\a\e[2J'
  run cr-e2b template build --name acme
  assert_success
  assert_output_contains '[stdout] token [redacted] \x1b]0;owned\x07\x1b[2J'
  refute_output_contains "$MODEL_KEY_VALUE"
  refute_output_contains $'\e'
}

@test "a failed build names the step and its last lines, and exits 1" {
  with_tools
  run --separate-stderr cr-e2b template build --name acme --run 'echo one' --run 'echo compiling; echo "no such package: left-pad" >&2; exit 3'
  assert_failure 1
  [ -z "$output" ]
  run tail -n 1 <<<"$stderr"
  assert_output "cr-e2b: the build of acme failed at step 4 of 4 (run: echo compiling; echo \"no such package: left-pad\" >&2; exit 3): step 4/4 failed: RUN echo compiling; echo \"no such package: left-pad\" >&2; exit 3: exit status 3; its last lines: [stdout] compiling | [stdout] no such package: left-pad"
}

@test "a failed step of cr-e2b's own is named in its words, not by its script" {
  with_tools
  rm "$TEST_DIR/bin/claude"
  printf '#!/bin/sh\necho "2.0.1 (Claude Code)"\n' >"$TEST_DIR/bin/claude"
  printf '#!/bin/sh\necho "curl: (6) Could not resolve host: claude.ai" >&2; exit 6\n' >"$TEST_DIR/bin/curl"
  chmod +x "$TEST_DIR/bin/claude" "$TEST_DIR/bin/curl"
  run --separate-stderr cr-e2b template build --name acme
  assert_failure 1
  run tail -n 1 <<<"$stderr"
  assert_output "cr-e2b: the build of acme failed at step 1 of 2 (install: Claude Code 2.1.332, unless the base has that version): step 1/2 failed: RUN install: exit status 6; its last lines: [stdout] curl: (6) Could not resolve host: claude.ai"
}

@test "a base without the pinned Claude Code gets it from the installer, and one without gh gets the GitHub CLI" {
  # the installer and the release archive, as curl would fetch them
  cat >"$TEST_DIR/bin/curl" <<'SH'
#!/bin/bash
url=${*: -1}
case $url in
  https://claude.ai/install.sh) printf 'mkdir -p ~/.local/bin && ln -s %s ~/.local/bin/claude && echo "installed $1"\n' "$STUB_CLAUDE" ;;
  https://github.com/cli/cli/releases/download/v2.62.0/gh_2.62.0_linux_*.tar.gz)
    dir=$(basename "$url" .tar.gz); work=$(mktemp -d); mkdir -p "$work/$dir/bin"
    printf '#!/bin/sh\necho "gh version 2.62.0 (from the archive)"\n' >"$work/$dir/bin/gh"; chmod +x "$work/$dir/bin/gh"
    tar -czf "${3:?}" -C "$work" "$dir" ;;
  *) exit 22 ;;
esac
SH
  chmod +x "$TEST_DIR/bin/curl"
  export STUB_CLAUDE="$FIXTURES/claude" FAKE_E2B_PASS=CLAUDE_STUB_DIR,STUB_CLAUDE
  run cr-e2b template build --name acme
  assert_success
  assert_output_contains "[builder 1/2] [stdout] installed 2.1.332"
  assert_output_contains "[builder 2/2] [stdout] gh version 2.62.0 (from the archive)"
  run "$FAKE_E2B_DIR/templates/acme/home/.local/bin/gh" --version
  assert_output "gh version 2.62.0 (from the archive)"
}

@test "a worker started on a built template runs its Claude Code, and start says so" {
  with_tools
  run cr-e2b template build --name acme --run 'mkdir -p ~/.local/bin && ln -s "$(readlink -f "$(command -v claude)")" ~/.local/bin/claude'
  assert_success
  rm "$TEST_DIR/bin/claude"
  make_repo
  run --separate-stderr cr-e2b start --repo "$REPO" --profile backend --brief brief.md --workdir repo --template acme
  assert_success
  [ "${lines[2]}" = "agent    Claude Code 2.1.332, the template's" ]
  run cat "$(sandbox_home sbx1)/.cr/setup-install.out"
  assert_output "Claude Code is already installed
2.1.332 (Claude Code stub)"
}

@test "bad input is one line and exit 2, before any request" {
  for bad in "--name Acme|--name must be lowercase" "--name claude|claude is e2b's own template" \
    "--name acme --pip ''|--pip takes one package name each" "--name acme --apt 'a b'|--apt takes one package" \
    "--name acme --npm=--registry=x|--npm takes one package" "--name acme --run ' '|--run needs a command" \
    "--name acme --env NPM_TOKEN=x|--env NPM_TOKEN looks like a secret" \
    "--name acme --env LEAK=$MODEL_KEY_VALUE|--env LEAK holds the value of a secret" \
    "--name acme --run 'npm login --token $MODEL_KEY_VALUE'|--run holds the value of a secret" \
    "--name acme --env NOVALUE|--env takes NAME=VALUE" "--name acme --env PATH=/x|not a variable a template can set" \
    "--name acme --memory 64|memory is at least 128 MB" "--name acme --from 'a b'|--from is not a template's" \
    "--name acme --agent-version next|--agent-version takes a version" "--from base|required: --name"; do
    eval "run --separate-stderr cr-e2b template build ${bad%|*}"
    assert_failure 2
    assert_one_error_line
    assert_output_contains "${bad#*|}"
    refute_output_contains "$MODEL_KEY_VALUE"
  done
  no_sdk_calls
}

@test "an unknown key or a wrong type in control-room.json's template is one line and exit 2" {
  printf '{"template": {"from": "base", "apt": ["jq"], "pipp": ["x"]}}\n' >control-room.json
  run --separate-stderr cr-e2b template build --name acme
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: control-room.json: template has an unknown key 'pipp' (known: from, apt, pip, npm, run, env, cpu, memory)"
  printf '{"template": {"cpu": "4"}}\n' >control-room.json
  run --separate-stderr cr-e2b template build --name acme
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: control-room.json: template.cpu must be a whole number"
  printf '{"template": {"run": "make"}}\n' >control-room.json
  run --separate-stderr cr-e2b template build --name acme
  assert_failure 2
  assert_one_error_line
  assert_output "cr-e2b: control-room.json: template.run must be a list of strings"
  no_sdk_calls
}

@test "--dry-run prints the steps and sends nothing, without a key" {
  unset E2B_API_KEY
  run cr-e2b template build --name acme-node:v2 --npm pnpm --run 'pnpm install' --cpu 2 --dry-run
  assert_success
  assert_output <<'OUT'
template  acme-node:v2
from      claude
size      2 vCPU
steps
   1  npm      pnpm (npm -g)  (as root)
   2  install  Claude Code 2.1.332, unless the base has that version
   3  pr-tool  GitHub CLI 2.62.0, unless the base has one
   4  run      pnpm install
OUT
  no_sdk_calls
}

@test "--json gives the name, the template's and the build's ids, and the steps" {
  with_tools
  run --separate-stderr cr-e2b template build --name acme --apt jq --json
  assert_success
  run python3 -c 'import json,sys; d=json.load(sys.stdin)
print(d["name"], d["template_id"], d["build_id"], d["from"], d["agent_version"])
for s in d["steps"]: print(s["number"], s["name"], s["as"], s["does"])' <<<"$output"
  assert_output <<'OUT'
acme tpl-acme build1 claude 2.1.332
1 apt root jq (apt-get)
2 install user Claude Code 2.1.332, unless the base has that version
3 pr-tool user GitHub CLI 2.62.0, unless the base has one
OUT
}

@test "network trouble while watching the build is ridden out" {
  with_tools
  export FAKE_E2B_FAIL=build-network:2
  run --separate-stderr cr-e2b template build --name acme
  assert_success
  [[ "$stderr" == *"cr-e2b: warning: lost touch with the build build1 (cannot reach e2b (network): [Errno 111] Connection refused); retrying for up to 120 s"* ]]
  [[ "$stderr" == *"cr-e2b: warning: back in touch with the build build1 after"* ]]
}

@test "Ctrl-C stops the watching, says the build goes on and names it" {
  with_tools
  export FAKE_E2B_BUILD_HOLD="$TEST_DIR/go"
  cr-e2b template build --name acme >"$TEST_DIR/out" 2>"$TEST_DIR/err" &
  build=$!
  eventually "the build to run" grep -q '^\[builder 1/2\]' "$TEST_DIR/err"
  kill -INT "$build"
  status=0
  wait "$build" || status=$?
  [ "$status" -eq 130 ]
  run tail -n 1 "$TEST_DIR/err"
  assert_output "cr-e2b: interrupted (SIGINT): no longer watching, but the build goes on at e2b (template tpl-acme, build build1); once it is ready, start --template acme uses it"
}

@test "doctor --live --template looks into a built template" {
  with_tools
  run cr-e2b template build --name acme --run 'mkdir -p ~/.local/bin && ln -s "$(readlink -f "$(command -v claude)")" ~/.local/bin/claude'
  rm "$TEST_DIR/bin/claude"
  run cr-e2b doctor --live --template acme
  assert_output_contains "sandbox claude"
  assert_output_contains "2.1.332 (Claude Code stub)"
  run call_field Sandbox.create template
  assert_output '"acme"'
}

@test "doctor --live reports the template's Claude Code beside the pinned one" {
  with_claude
  printf '#!/bin/sh\necho 200\n' >"$TEST_DIR/bin/curl"
  chmod +x "$TEST_DIR/bin/curl"
  run --separate-stderr cr-e2b doctor --live
  assert_output_contains "sandbox claude                     ok    2.1.332 (Claude Code stub)"
  rm "$TEST_DIR/bin/claude"  # a link to the stub: write a file of the test's own
  printf '#!/bin/sh\necho "2.1.197 (Claude Code)"\n' >"$TEST_DIR/bin/claude"
  chmod +x "$TEST_DIR/bin/claude"
  run --separate-stderr cr-e2b doctor --live
  assert_output_contains "sandbox claude                     ok    2.1.197 (Claude Code); a worker runs this one, not the 2.1.332 cr-e2b was tested with"
}
