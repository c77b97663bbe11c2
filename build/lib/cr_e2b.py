#!/usr/bin/env python3
"""cr-e2b: run a Claude Code worker in an e2b sandbox on a git repository.

Manual
======

cr-e2b puts one headless Claude Code worker into one e2b sandbox, on a clone
of your repository, and lets you (or a CI job) follow it, brief it again in
the same session, and stop it.

    cr-e2b start  --repo URL --profile NAME --brief FILE [options]
    cr-e2b brief  --sandbox ID --brief FILE       follow-up, same session
    cr-e2b log    --sandbox ID [-f] [--raw]       what the worker did
    cr-e2b status --sandbox ID                    one screen of state
    cr-e2b wait   --sandbox ID [--timeout S]      block until idle
    cr-e2b list                                   every worker you run
    cr-e2b kill   --sandbox ID                    stop it for good

Keys come from the environment only: E2B_API_KEY (read by the e2b SDK, never
sent into the sandbox), ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, and
optionally GITHUB_TOKEN, which go into the sandbox's environment at creation.
No key is written to a file, put on a command line, or shown in output:
every line cr-e2b prints is masked against the keys it can see.

Inside the sandbox everything lives under /home/user/.cr:

    runner        the turn runner (bash); owns every turn of the worker
    queue/N.md    prompts, numbered in the order cr-e2b accepted them
    turns.jsonl   a record per turn event: queued, started, ended, result
    log           Claude Code's stream-json output, with the runner's markers

Turns run one at a time, in order, under a kernel lock: two Claude Code
processes resuming one session at once would fork its transcript and lose a
brief. `brief` only enqueues; the runner started by `start` (or restarted by
`brief`) drains the queue.

Exit codes
==========

    0  success
    1  failure (e2b or the sandbox said no; see the message)
    2  bad usage or input; nothing was created
    3  no such sandbox (unknown, expired or killed)
    4  wait: the last turn failed
    5  wait: the last turn ended BLOCKED
    6  wait: timed out while the worker was still busy
    7  try again later: rate limit, service busy, or network failure
  130  interrupted

Set CR_E2B_DEBUG=1 (or pass --debug) to see a traceback instead of a line.

Reading order of this file: constants; errors and masking; checking input;
what runs inside the sandbox; the SDK (the only place that touches e2b);
records and rendering; the verbs; the command line.
"""

import json
import os
import re
import sys

__version__ = "0.1.0"

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_SANDBOX = 0, 1, 2, 3
EXIT_TURN_FAILED, EXIT_BLOCKED, EXIT_WAIT_TIMEOUT, EXIT_RETRY = 4, 5, 6, 7
EXIT_INTERRUPTED = 130

KEY_NAMES = ("E2B_API_KEY", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "GITHUB_TOKEN")
MODEL_CREDENTIALS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
# Credentials that live outside these names still count as a model credential.
MODEL_PROVIDER_SWITCHES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$")
RESERVED_VARIABLES = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "IS_SANDBOX"}

HOME = "/home/user"
CR_DIR = ".cr"  # relative: the SDK resolves it against the sandbox user's home
DEFAULTS = {
    "template": None,
    "timeout": 3600,
    "integration": "main",
    "prefix": "claude/",
    "profile_variable": "CR_PROFILE",
    "install": "curl -fsSL https://claude.ai/install.sh | bash",
    "agent_args": "--permission-mode acceptEdits",
    "workdir": HOME + "/repo",
}
SETUP_TIMEOUT = 1800  # clone + install; the SDK's own default (60 s) kills both
QUICK_TIMEOUT = 120
METADATA_TAG = "cr-e2b"

PROFILE = re.compile(r"^[a-z][a-z0-9-]*$")
VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SANDBOX_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
PLACEHOLDER = re.compile(r"<([a-z][a-z-]*)>")
EPIC_LINE = re.compile(r"^EPIC [A-Za-z0-9][A-Za-z0-9._-]*: branch \S+")
BLOCKED_LINE = re.compile(r"^EPIC \S+ BLOCKED\b")
# Flags the runner owns; a user's copy would break the session or the log.
RUNNER_FLAGS = {"-p", "--print", "--session-id", "--resume", "-r", "--continue", "-c",
                "--output-format", "--input-format", "--verbose"}


# ---------------------------------------------------------------------------
# Errors and masking
# ---------------------------------------------------------------------------

class Failure(Exception):
    """A failure with its exit code; main() prints it as one line."""

    def __init__(self, message, code=EXIT_FAILED):
        super().__init__(message)
        self.code = code


def usage_error(message):
    return Failure(message, EXIT_USAGE)


class Masker:
    """Replaces the value of every secret the tool can see with [redacted]."""

    def __init__(self, names=()):
        self.values = []
        self.add(names)

    def add(self, names):
        wanted = set(KEY_NAMES) | set(names)
        wanted |= {n for n in os.environ if SECRET_NAME.search(n)}
        # Short values ("1", "true") would mask ordinary words and break JSON.
        found = {os.environ[n] for n in wanted if len(os.environ.get(n, "")) >= 8}
        self.values = sorted(set(self.values) | found, key=len, reverse=True)

    def __call__(self, text):
        for value in self.values:
            text = text.replace(value, "[redacted]")
        return text


MASK = Masker()


def out(text=""):
    sys.stdout.write(MASK(text) + "\n")


def warn(text):
    sys.stderr.write(MASK("cr-e2b: " + text) + "\n")


def tail_lines(text, count=15):
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return " | ".join(lines[-count:])


# ---------------------------------------------------------------------------
# Checking input (all of it before a sandbox exists)
# ---------------------------------------------------------------------------

def read_text_file(path, what):
    """A readable, non-empty UTF-8 file ('-' is stdin), returned as bytes."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                data = handle.read()
    except OSError as exc:
        raise usage_error(f"cannot read {what} {path}: {exc.strerror}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise usage_error(f"{what} {path} is not UTF-8 text")
    if not text.strip():
        raise usage_error(f"{what} {path} is empty")
    if "\0" in text:
        raise usage_error(f"{what} {path} contains a NUL byte; it is not text")
    return data


def first_line(data):
    for line in data.decode("utf-8", "replace").splitlines():
        if line.strip():
            return line.strip()
    return ""


def warn_if_question(data):
    if not EPIC_LINE.match(first_line(data)):
        warn("the brief's first line is not 'EPIC <id>: branch ...': "
             "the worker will take it as a question and change nothing")


def require_e2b_key():
    if not os.environ.get("E2B_API_KEY"):
        raise usage_error("E2B_API_KEY is not set; export your e2b key")


def check_sandbox_id(value):
    if not SANDBOX_ID.match(value or ""):
        raise usage_error(f"not a sandbox id: {value!r}")
    return value


def check_repo_url(url):
    """Returns (url, credential scope) or raises; the scope is scheme://host[:port]."""
    from urllib.parse import urlsplit
    if re.match(r"^[\w.-]+@[\w.-]+:", url):  # scp-like ssh: git@host:path
        return url, None
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http", "ssh", "git", "file"):
        raise usage_error(f"--repo must be an https, http, ssh, git or file URL: {url}")
    if parts.scheme in ("https", "http") and (parts.username or parts.password):
        raise usage_error("--repo carries credentials; drop them and export GITHUB_TOKEN instead")
    if parts.password:
        raise usage_error("--repo carries a password; drop it from the URL")
    if parts.scheme != "file" and not parts.hostname:
        raise usage_error(f"--repo has no host: {url}")
    if parts.scheme in ("https", "http"):
        return url, f"{parts.scheme}://{parts.netloc}"
    return url, None


def check_ref_part(value, flag):
    if not value or re.search(r"[\s~^:?*\[\\]|\.\.|@\{|^[-/]|//", value):
        raise usage_error(f"{flag} is not a usable git branch name: {value!r}")
    return value


def parse_agent_args(text):
    import shlex
    try:
        args = shlex.split(text)
    except ValueError as exc:
        raise usage_error(f"--agent-args cannot be split into words: {exc}")
    for arg in args:
        if arg.split("=", 1)[0] in RUNNER_FLAGS:
            raise usage_error(f"--agent-args must not set {arg.split('=', 1)[0]}: cr-e2b manages it")
    return args


def load_control_room(path="control-room.json"):
    """Project defaults for the branch, prefix and profile variable, if the file exists."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise usage_error(f"{path} is not valid JSON: {exc}")
    if not isinstance(data, dict):
        raise usage_error(f"{path} must hold a JSON object")
    mapping = {"integration_branch": "integration", "branch_prefix": "prefix",
               "profile_variable": "profile_variable"}
    found = {}
    for key, option in mapping.items():
        if key in data:
            if not isinstance(data[key], str) or not data[key]:
                raise usage_error(f"{path}: {key} must be a non-empty string")
            found[option] = data[key]
    return found


def local_git_identity():
    import subprocess
    identity = {}
    for field in ("name", "email"):
        try:
            done = subprocess.run(["git", "config", "--get", f"user.{field}"],
                                  capture_output=True, text=True, timeout=10)
            identity[field] = done.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            identity[field] = ""
    return identity


def default_opening_path():
    here = os.path.dirname(os.path.realpath(__file__))
    candidates = [os.path.join(here, "opening.md"),
                  os.path.join(sys.prefix, "share", "cr-e2b", "opening.md")]
    import site
    candidates.append(os.path.join(site.USER_BASE or "", "share", "cr-e2b", "opening.md"))
    for path in candidates:
        if os.path.isfile(path):
            return path
    return candidates[0]


def fill_opening(template, values):
    def replace(match):
        return values.get(match.group(1), match.group(0))
    text = PLACEHOLDER.sub(replace, template)
    left = sorted({m.group(0) for m in PLACEHOLDER.finditer(text)})
    if left:
        raise usage_error(f"the opening template has unknown placeholders: {', '.join(left)}")
    return text


class Plan:
    """Everything `start` will do, decided and checked before any SDK call."""

    def __init__(self, args, dry_run):
        self.dry_run = dry_run
        self.profile = args.profile
        if not PROFILE.match(self.profile):
            raise usage_error(f"--profile must match {PROFILE.pattern}: {self.profile!r}")
        project = load_control_room()
        pick = lambda name: getattr(args, name) if getattr(args, name) is not None \
            else project.get(name, DEFAULTS[name])  # noqa: E731
        self.integration = check_ref_part(pick("integration"), "--integration")
        self.prefix = check_ref_part(pick("prefix"), "--prefix")
        self.variable = pick("profile_variable")
        self.forwarded = list(dict.fromkeys(args.env or []))
        self.check_variables()
        self.timeout = args.timeout
        self.template = args.template
        self.repo, self.credential_scope = check_repo_url(args.repo)
        self.workdir = args.workdir or DEFAULTS["workdir"]
        self.install = args.install or DEFAULTS["install"]
        self.agent_args = parse_agent_args(
            args.agent_args if args.agent_args is not None else DEFAULTS["agent_args"])
        self.keep_on_failure = args.keep_on_failure
        if not dry_run:
            self.check_keys()
        self.brief = read_text_file(args.brief, "brief")
        self.opening_path = args.opening or default_opening_path()
        self.opening_template = read_text_file(self.opening_path, "opening template").decode()
        import uuid
        self.session = str(uuid.uuid4())
        self.fill_opening("(the sandbox id)")
        self.git_name, self.git_email = self.git_identity(args)

    def check_variables(self):
        if not VARIABLE.match(self.variable):
            raise usage_error(f"--profile-variable is not a variable name: {self.variable!r}")
        taken = set(KEY_NAMES) | RESERVED_VARIABLES | set(self.forwarded)
        if self.variable in taken or SECRET_NAME.search(self.variable):
            raise usage_error(f"--profile-variable {self.variable} collides with a key or a "
                              "variable the sandbox needs")
        for name in self.forwarded:
            if not VARIABLE.match(name) or name in RESERVED_VARIABLES:
                raise usage_error(f"--env {name!r} is not a variable that can be forwarded")
            if name not in os.environ:
                raise usage_error(f"--env {name} is not set in this environment")

    def check_keys(self):
        require_e2b_key()
        if not any(os.environ.get(n) for n in MODEL_CREDENTIALS) and \
                not any(n in self.forwarded for n in MODEL_PROVIDER_SWITCHES):
            raise usage_error("no model credential: export ANTHROPIC_API_KEY "
                              "(or CLAUDE_CODE_OAUTH_TOKEN for a Claude subscription)")

    def git_identity(self, args):
        name, email = args.git_name, args.git_email
        if not (name and email):
            local = local_git_identity()
            name, email = name or local["name"], email or local["email"]
        if not (name and email):
            raise usage_error("no git identity: pass --git-name and --git-email, or set "
                              "git config user.name and user.email")
        if "\n" in name + email:
            raise usage_error("--git-name and --git-email must be one line each")
        return name, email

    def fill_opening(self, sandbox_id):
        values = {"profile": self.profile, "profile-variable": self.variable,
                  "integration-branch": self.integration, "prefix": self.prefix,
                  "session": self.session, "sandbox": sandbox_id}
        self.opening = fill_opening(self.opening_template, values).encode()

    def envs(self):
        """The sandbox's environment: names and values; never printed."""
        envs = {self.variable: self.profile, "DISABLE_AUTOUPDATER": "1"}
        for name in MODEL_CREDENTIALS + ("GITHUB_TOKEN",):
            if os.environ.get(name):
                envs[name] = os.environ[name]
        for name in self.forwarded:
            envs[name] = os.environ[name]
        return envs

    def metadata(self):
        return {METADATA_TAG: "1", "profile": self.profile, "repo": self.repo,
                "session": self.session, "integration": self.integration,
                "prefix": self.prefix}

    def secret_names(self):
        return [n for n in self.envs() if n in KEY_NAMES or n in self.forwarded]

    def steps(self):
        steps = []
        if self.credential_scope and os.environ.get("GITHUB_TOKEN"):
            steps.append(("git-auth", f"credential helper for {self.credential_scope} "
                          "reading GITHUB_TOKEN at each use"))
        steps += [("git-identity", f"{self.git_name} <{self.git_email}>"),
                  ("clone", f"{self.repo} ({self.integration}) into {self.workdir}"),
                  ("install", "Claude Code, unless the template has it"),
                  ("queue", "turn 1 the opening, turn 2 the brief"),
                  ("launch", "the turn runner, detached")]
        return steps

    def files(self):
        """Every file start writes, in one request: (path relative to home, bytes)."""
        c = CR_DIR
        return [(f"{c}/runner", RUNNER_SCRIPT.encode()),
                (f"{c}/setup", setup_script(self).encode()),
                (f"{c}/session", self.session.encode() + b"\n"),
                (f"{c}/workdir", self.workdir.encode() + b"\n"),
                (f"{c}/agent-args", b"".join(a.encode() + b"\0" for a in self.agent_args)),
                (f"{c}/secret-names", "".join(n + "\n" for n in self.secret_names()).encode()),
                (f"{c}/inbox/opening.md", self.opening),
                (f"{c}/inbox/brief.md", self.brief)]


# ---------------------------------------------------------------------------
# What runs inside the sandbox
# ---------------------------------------------------------------------------

# The turn runner. It is the only thing that starts Claude Code. `drain` holds
# an flock on run.lock for as long as it works the queue, so the kernel frees
# the lock if it dies; Claude Code gets the lock's descriptor closed so that a
# process it leaves behind cannot hold the lock. After releasing the lock the
# runner looks at the queue once more: a brief enqueued in that instant has
# started a drainer that found the lock still taken, and would otherwise wait
# for the next brief.
RUNNER_SCRIPT = r'''#!/bin/bash
# cr-e2b turn runner: drain | enqueue FILE | kick | peek RECORDS_OFFSET LOG_OFFSET
set -u
CR="$HOME/.cr"; Q="$CR/queue"; LOG="$CR/log"; REC="$CR/turns.jsonl"
export PATH="$HOME/.local/bin:$PATH"
mkdir -p "$Q"

now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
record() { printf '%s\n' "$1" >>"$REC"; }
mark() { printf '%s\n' "$1" >>"$LOG"; }

# The first non-blank line of a file, cut to 200 bytes, as JSON string contents.
first_line() {
  sed -n '/[^[:space:]]/{p;q;}' "$1" | head -c 200 | tr -d '\000-\010\013-\037' |
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' -e 's/^[[:space:]]*//' | tr -d '\n'
}

pending() {
  local f
  for f in "$Q"/*.md; do
    [ -e "$f" ] || continue
    [ -e "${f%.md}.ended" ] || echo "${f%.md}"
  done
}

session_exists() {
  compgen -G "${CLAUDE_CONFIG_DIR:-$HOME/.claude}/projects/*/$SID.jsonl" >/dev/null
}

end_turn() { # base n exit is_error
  record "{\"turn\":$2,\"event\":\"ended\",\"at\":\"$(now)\",\"exit\":$3,\"is_error\":$4}"
  mark "{\"type\":\"cr-e2b\",\"event\":\"turn-end\",\"turn\":$2,\"exit\":$3,\"at\":\"$(now)\"}"
  : >"$1.ended"
}

run_turn() {
  local base=$1 n pid rc offset result is_error flag
  n=$((10#${base##*/}))
  if [ -e "$base.started" ]; then
    # A runner died during this turn: wait out its Claude Code, never re-send it.
    pid=$(cat "$base.pid" 2>/dev/null)
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do sleep 1; done
    end_turn "$base" "$n" null null
    return
  fi
  if session_exists; then flag=--resume; else flag=--session-id; fi
  offset=$(stat -c %s "$LOG" 2>/dev/null || echo 0)
  mark "{\"type\":\"cr-e2b\",\"event\":\"turn-start\",\"turn\":$n,\"prompt\":\"queue/${base##*/}.md\",\"first_line\":\"$(first_line "$base.md")\",\"at\":\"$(now)\"}"
  (cd "$WORKDIR" && exec claude -p "$flag" "$SID" --output-format stream-json --verbose "${ARGS[@]}") \
    <"$base.md" >>"$LOG" 2>&1 8>&- 9>&- &
  pid=$!
  echo "$pid" >"$base.pid"
  : >"$base.started"
  record "{\"turn\":$n,\"event\":\"started\",\"at\":\"$(now)\",\"flag\":\"$flag\"}"
  wait "$pid"; rc=$?
  result=$(tail -c +$((offset + 1)) "$LOG" | grep -a '^{.*"type":"result"' | tail -n 1)
  case $result in
    *'"is_error":true'*) is_error=true ;;
    *'"is_error":false'*) is_error=false ;;
    *) is_error=null ;;
  esac
  case $result in
    *'}') record "{\"turn\":$n,\"event\":\"result\",\"result\":$result}" ;;
  esac
  end_turn "$base" "$n" "$rc" "$is_error"
}

drain() {
  SID=$(cat "$CR/session"); WORKDIR=$(cat "$CR/workdir")
  ARGS=(); [ -s "$CR/agent-args" ] && mapfile -d '' -t ARGS <"$CR/agent-args"
  exec 9>>"$CR/run.lock"
  flock -n 9 || return 0
  echo $$ >"$CR/runner.pid"
  local next
  while :; do
    next=$(pending | head -n 1)
    if [ -z "$next" ]; then
      flock -u 9
      [ -n "$(pending)" ] && flock -n 9 && continue
      return 0
    fi
    run_turn "$next"
  done
}

kick() {
  setsid nohup bash "$CR/runner" drain >>"$CR/runner.err" 2>&1 </dev/null &
}

enqueue() { # FILE: prints "turn ahead"
  local n id ahead
  exec 8>>"$CR/enqueue.lock"
  flock 8
  n=$(cat "$CR/next" 2>/dev/null || echo 1)
  id=$(printf %06d "$n")
  ahead=$(pending | wc -l)
  record "{\"turn\":$n,\"event\":\"queued\",\"at\":\"$(now)\",\"prompt\":\"queue/$id.md\",\"first_line\":\"$(first_line "$1")\"}"
  mv -- "$1" "$Q/$id.md" || exit 1
  echo $((n + 1)) >"$CR/next"
  flock -u 8
  echo "$n $ahead"
}

peek() { # one line of state, then base64 of the records and of the log from the offsets
  local alive=false names pid
  # Never take run.lock here: a drainer that found it taken would leave.
  pid=$(cat "$CR/runner.pid" 2>/dev/null)
  if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'runner drain'; then
    alive=true
  fi
  names=$(sed -e 's/.*/"&"/' "$CR/secret-names" 2>/dev/null | paste -sd, -)
  printf '{"runner":%s,"pending":%s,"now":"%s","secret_names":[%s]}\n' \
    "$alive" "$(pending | wc -l)" "$(now)" "$names"
  tail -c +$(($1 + 1)) "$REC" 2>/dev/null | base64 -w0; echo
  if [ "$2" -ge 0 ]; then tail -c +$(($2 + 1)) "$LOG" 2>/dev/null | base64 -w0; fi; echo
}

case ${1:-} in
  drain) drain ;;
  kick) kick ;;
  enqueue) enqueue "$2" ;;
  peek) peek "${2:-0}" "${3:--1}" ;;
  *) echo "usage: runner drain|kick|enqueue FILE|peek REC LOG" >&2; exit 2 ;;
esac
'''

# The setup script: one foreground command does every step, so start costs one
# round trip for all of them. Each step's output goes to its own file; a failing
# step prints its name on stdout and its own tail on stderr.
SETUP_TEMPLATE = r'''#!/bin/bash
set -u
CR="$HOME/.cr"
export PATH="$HOME/.local/bin:$PATH"
step() {
  local name=$1; shift
  echo "$name" >"$CR/step"
  if ! "$@" >"$CR/setup-$name.out" 2>&1; then
    echo "cr-e2b-step-failed: $name"
    tail -n 20 "$CR/setup-$name.out" >&2
    exit 1
  fi
}
git_auth() {
  git config --global "credential.$CREDENTIAL_SCOPE.helper" \
    '!f() { test "$1" = get || return 0; echo username=x-access-token; echo "password=$GITHUB_TOKEN"; }; f'
}
git_identity() {
  git config --global user.name "$GIT_NAME" && git config --global user.email "$GIT_EMAIL"
}
clone() {
  git clone --branch "$INTEGRATION" -- "$REPO" "$WORKDIR"
}
install() {
  if command -v claude >/dev/null; then echo "Claude Code is already installed"; else
    bash -o pipefail -c "$INSTALL"
  fi
  claude --version
}
queue() {
  bash "$CR/runner" enqueue "$CR/inbox/opening.md" && bash "$CR/runner" enqueue "$CR/inbox/brief.md"
}
launch() { bash "$CR/runner" kick; }
'''


def setup_script(plan):
    import shlex
    values = {"CREDENTIAL_SCOPE": plan.credential_scope or "", "GIT_NAME": plan.git_name,
              "GIT_EMAIL": plan.git_email, "INTEGRATION": plan.integration,
              "REPO": plan.repo, "WORKDIR": plan.workdir, "INSTALL": plan.install}
    lines = [SETUP_TEMPLATE]
    lines += [f"{name}={shlex.quote(value)}" for name, value in values.items()]
    lines += [f"step {name} {name.replace('-', '_')}" for name, _ in plan.steps()]
    return "\n".join(lines) + "\n"


def runner_command(*words):
    return 'bash "$HOME/.cr/runner" ' + " ".join(str(w) for w in words)


# ---------------------------------------------------------------------------
# The e2b SDK: every call cr-e2b makes is in this section, and SDK_CONTRACT
# names each one with its parameters. tests/fixtures/e2b (the fake) and
# tests/contract.py (against the real SDK) both check against it.
# ---------------------------------------------------------------------------

SDK_CONTRACT = {
    "Sandbox.create": ["template", "timeout", "metadata", "envs"],
    "Sandbox.connect": ["sandbox_id"],
    "Sandbox.get_info": ["sandbox_id"],
    "Sandbox.kill": ["sandbox_id"],
    "Sandbox.list": ["query"],
    "SandboxQuery": ["metadata"],
    "Sandbox.files.write_files": ["files"],
    "Sandbox.commands.run": ["cmd", "timeout"],
    "exceptions": ["SandboxException", "TimeoutException", "NotFoundException",
                   "AuthenticationException", "RateLimitException", "TemplateException",
                   "InvalidArgumentException", "CommandExitException"],
}


def sdk():
    try:
        import e2b
    except ImportError:
        raise Failure("the e2b SDK is not installed: pip install 'e2b>=2.51,<3'")
    return e2b


def sdk_failure(exc, sandbox_id=None):
    """Turns anything the SDK raises into a Failure with the right exit code."""
    e2b = sys.modules.get("e2b")
    name = type(exc).__name__
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else name
    where = f"sandbox {sandbox_id}" if sandbox_id else "e2b"
    if e2b and isinstance(exc, e2b.AuthenticationException):
        return Failure(f"e2b refused the API key (check E2B_API_KEY): {detail}")
    if e2b and isinstance(exc, e2b.NotFoundException) or name == "SandboxNotRunningException":
        return Failure(f"no such sandbox: {sandbox_id} (unknown, expired or killed)",
                       EXIT_NO_SANDBOX)
    if e2b and isinstance(exc, e2b.RateLimitException) or name == "ServiceBusyException":
        return Failure(f"e2b is rate limiting or busy; try again later: {detail}", EXIT_RETRY)
    if e2b and isinstance(exc, e2b.TemplateException):
        return Failure(f"e2b cannot use that template: {detail}")
    if e2b and isinstance(exc, e2b.InvalidArgumentException):
        return Failure(f"e2b rejected the request (a lifetime over your plan's cap?): {detail}")
    if e2b and isinstance(exc, e2b.TimeoutException):
        return Failure(f"{where} did not answer in time: {detail}")
    if type(exc).__module__.split(".")[0] in ("httpx", "httpcore") or \
            isinstance(exc, (ConnectionError, TimeoutError)):
        return Failure(f"cannot reach e2b (network): {detail}", EXIT_RETRY)
    if e2b and isinstance(exc, e2b.SandboxException):
        return Failure(f"{where}: {detail}")
    return None


class Service:
    """The e2b service, as cr-e2b uses it."""

    def __init__(self):
        require_e2b_key()
        self.e2b = sdk()

    def create(self, plan):
        return self.e2b.Sandbox.create(template=plan.template, timeout=plan.timeout,
                                       metadata=plan.metadata(), envs=plan.envs())

    def connect(self, sandbox_id):
        return self.e2b.Sandbox.connect(sandbox_id)

    def info(self, sandbox_id):
        return self.e2b.Sandbox.get_info(sandbox_id)

    def kill(self, sandbox_id):
        return self.e2b.Sandbox.kill(sandbox_id)

    def workers(self):
        query = self.e2b.SandboxQuery(metadata={METADATA_TAG: "1"})
        pages = self.e2b.Sandbox.list(query=query)
        found = []
        while pages.has_next:
            found.extend(pages.next_items())
        return found

    @staticmethod
    def write(sandbox, files):
        sandbox.files.write_files([{"path": path, "data": data} for path, data in files])

    def run(self, sandbox, command, timeout=QUICK_TIMEOUT):
        """Runs a command; returns (exit code, stdout, stderr) instead of raising on exit."""
        try:
            done = sandbox.commands.run(command, timeout=timeout)
        except self.e2b.CommandExitException as exc:
            return exc.exit_code, exc.stdout or "", exc.stderr or ""
        return done.exit_code, done.stdout or "", done.stderr or ""


# ---------------------------------------------------------------------------
# Records, state and rendering
# ---------------------------------------------------------------------------

def decode_lines(data):
    return data.decode("utf-8", "replace").splitlines()


def last_text_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def fold_records(lines):
    """Folds turns.jsonl events into one dict per turn, in turn order."""
    turns = {}
    for line in lines:
        try:
            event = json.loads(line)
            n = int(event["turn"])
        except (ValueError, KeyError, TypeError):
            continue
        turn = turns.setdefault(n, {"turn": n, "prompt": None, "first_line": "",
                                    "queued_at": None, "started_at": None, "ended_at": None,
                                    "exit_code": None, "is_error": None, "last_line": "",
                                    "session_cost_usd": None, "duration_ms": None,
                                    "permission_denials": 0})
        kind = event.get("event")
        if kind == "queued":
            turn.update(prompt=event.get("prompt"), first_line=event.get("first_line", ""),
                        queued_at=event.get("at"))
        elif kind == "started":
            turn["started_at"] = event.get("at")
        elif kind == "ended":
            turn.update(ended_at=event.get("at"), exit_code=event.get("exit"))
            if turn["is_error"] is None:
                turn["is_error"] = event.get("is_error")
        elif kind == "result" and isinstance(event.get("result"), dict):
            result = event["result"]
            turn.update(is_error=result.get("is_error"),
                        last_line=last_text_line(result.get("result")),
                        session_cost_usd=result.get("total_cost_usd"),
                        duration_ms=result.get("duration_ms"),
                        permission_denials=len(result.get("permission_denials") or []))
    for turn in turns.values():
        turn["state"] = turn_state(turn)
    return [turns[n] for n in sorted(turns)]


def turn_state(turn):
    if turn["ended_at"] is None:
        return "running" if turn["started_at"] else "queued"
    if turn["exit_code"] is None:
        return "lost"
    if turn["exit_code"] != 0 or turn["is_error"]:
        return "failed"
    return "blocked" if BLOCKED_LINE.match(turn["last_line"]) else "ok"


def worker_state(header, turns):
    running = [t for t in turns if t["state"] == "running"]
    queued = sum(1 for t in turns if t["state"] == "queued")
    if header["pending"] and not header["runner"]:
        state = "dead"
    elif running:
        state = "running"
    elif header["pending"]:
        state = "starting"
    else:
        state = "idle"
    worker = {"state": state, "queued": queued, "turn": None, "since": None}
    if running:
        worker.update(turn=running[0]["turn"], since=running[0]["started_at"])
    return worker


def describe_worker(worker):
    state, queued = worker["state"], worker["queued"]
    if state == "dead":
        return "dead: turns are queued but no runner is alive (a brief restarts it)"
    text = f"running turn {worker['turn']} since {worker['since']}" if state == "running" else state
    return text + (f", {queued} queued" if queued else "")


def session_cost(turns):
    costs = [t["session_cost_usd"] for t in turns if t["session_cost_usd"] is not None]
    return costs[-1] if costs else None


class Style:
    """ANSI colour on a terminal, and never with NO_COLOR set."""

    def __init__(self, stream=sys.stdout):
        self.on = stream.isatty() and not os.environ.get("NO_COLOR")

    def __call__(self, code, text):
        return f"\033[{code}m{text}\033[0m" if self.on else text


def one_line(text, width=120):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def short_input(name, data):
    if not isinstance(data, dict):
        return one_line(data)
    for key in ("command", "file_path", "notebook_path", "pattern", "url", "query",
                "description", "prompt"):
        if isinstance(data.get(key), str):
            return one_line(data[key])
    return one_line(json.dumps(data, ensure_ascii=False))


def seconds(ms):
    return f"{ms / 1000:.1f} s" if isinstance(ms, (int, float)) else "?"


class Renderer:
    """One readable line (or a few, for multi-line text) per log event."""

    def __init__(self, style):
        self.style = style
        self.tools = {}      # tool_use_id -> (name, short input), to name denials
        self.denied = set()  # tool_use_ids already shown as denied
        self.turn = None
        self.turn_has_result = False

    def render(self, line):
        """Returns (turn number, [rendered lines]) for one raw log line."""
        try:
            event = json.loads(line)
            if not isinstance(event, dict):
                raise ValueError
        except ValueError:
            return self.turn, [line]
        kind = event.get("type")
        handler = {"cr-e2b": self.marker, "system": self.system, "assistant": self.assistant,
                   "user": self.user, "result": self.result}.get(kind)
        lines = handler(event) if handler else []
        return self.turn, lines

    def marker(self, event):
        s = self.style
        if event.get("event") == "turn-start":
            self.turn, self.turn_has_result = event.get("turn"), False
            return [s("1", f"=== turn {event.get('turn')} · {event.get('at')} · "
                              f"{one_line(event.get('first_line', ''), 100)}")]
        if event.get("event") == "turn-end" and not self.turn_has_result:
            return [s("31", f"--- turn {event.get('turn')} ended without a result · "
                            f"exit {event.get('exit')}")]
        return []

    def system(self, event):
        s, sub = self.style, event.get("subtype")
        if sub == "init":
            return [s("2", f"    {event.get('model')} · {event.get('permissionMode')} · "
                           f"claude {event.get('claude_code_version')}")]
        if sub == "api_retry":
            return [s("33", f" !! API retry {event.get('attempt')}/{event.get('max_retries')}: "
                            f"{event.get('error_status')} {event.get('error')} "
                            f"(next in {seconds(event.get('retry_delay_ms'))})")]
        if sub == "permission_denied":
            tool_id = event.get("tool_use_id")
            self.denied.add(tool_id)
            name, short = self.tools.get(tool_id, (event.get("tool_name"), ""))
            return [s("31", f" !! denied  {name}  {short}".rstrip())]
        return []

    def assistant(self, event):
        lines = []
        for block in (event.get("message") or {}).get("content") or []:
            if block.get("type") == "text" and block.get("text", "").strip():
                lines += ["    " + text for text in block["text"].strip().splitlines()]
            elif block.get("type") == "tool_use":
                short = short_input(block.get("name"), block.get("input"))
                self.tools[block.get("id")] = (block.get("name"), short)
                lines.append(f"    {block.get('name')}  {short}")
        return lines

    def user(self, event):
        lines = []
        content = (event.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") != "tool_result" or not block.get("is_error"):
                continue
            if block.get("tool_use_id") in self.denied:
                continue
            text = block.get("content")
            if isinstance(text, list):
                text = " ".join(b.get("text", "") for b in text if isinstance(b, dict))
            lines.append(self.style("31", f" !! tool error  {one_line(text or '')}"))
        return lines

    def result(self, event):
        self.turn_has_result = True
        denials = len(event.get("permission_denials") or [])
        cost = event.get("total_cost_usd")
        last = last_text_line(event.get("result"))
        outcome = "error" if event.get("is_error") else \
            "blocked" if BLOCKED_LINE.match(last) else "ok"
        parts = [outcome, seconds(event.get("duration_ms"))]
        if isinstance(cost, (int, float)):
            parts.append(f"${cost:.4f} session")
        if denials:
            parts.append(f"{denials} denial{'s' if denials > 1 else ''}")
        parts.append(one_line(last, 100))
        colour = {"error": "31", "blocked": "33", "ok": "32"}[outcome]
        return [self.style(colour, f"--- turn {self.turn} " + " · ".join(parts))]


# ---------------------------------------------------------------------------
# Talking to a worker's sandbox
# ---------------------------------------------------------------------------

class Worker:
    """One sandbox made by cr-e2b, reached through the turn runner's `peek`."""

    def __init__(self, service, sandbox_id):
        self.service, self.id = service, sandbox_id
        self.sandbox = None
        self.records = b""
        self.log = b""
        self.log_offset = 0  # bytes of the log consumed, always at a line end
        self.header = None

    def connect(self):
        with sandbox_errors(self.id):
            self.sandbox = self.service.connect(self.id)
        return self

    def peek(self, with_log):
        """One round trip: state, records since last time, log since last time."""
        log_from = self.log_offset if with_log else -1
        with sandbox_errors(self.id):
            code, stdout, stderr = self.service.run(
                self.sandbox, runner_command("peek", len(self.records), log_from))
        lines = stdout.split("\n")
        if code != 0 or len(lines) < 3:
            raise Failure(f"sandbox {self.id} has no cr-e2b runner (was it made by cr-e2b?): "
                          f"{tail_lines(stderr, 2) or f'exit {code}'}")
        import base64
        try:
            self.header = json.loads(lines[0])
            self.records += base64.b64decode(lines[1])
            chunk = base64.b64decode(lines[2])
        except ValueError:
            raise Failure(f"sandbox {self.id}: unreadable answer from the runner")
        MASK.add(self.header.get("secret_names", []))
        cut = chunk.rfind(b"\n") + 1
        self.log_offset += cut
        return chunk[:cut]

    def turns(self):
        return fold_records(decode_lines(self.records))

    def state(self):
        return worker_state(self.header, self.turns())


class sandbox_errors:
    """Context manager: SDK exceptions become Failures naming the sandbox."""

    def __init__(self, sandbox_id=None):
        self.sandbox_id = sandbox_id

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, trace):
        if exc is None or isinstance(exc, (Failure, KeyboardInterrupt)):
            return False
        failure = sdk_failure(exc, self.sandbox_id)
        if failure is None:
            return False
        raise failure from exc


# ---------------------------------------------------------------------------
# The verbs
# ---------------------------------------------------------------------------

def emit_json(document):
    out(json.dumps(document, indent=2, sort_keys=False))


def cmd_start(args):
    plan = Plan(args, args.dry_run)
    if args.dry_run:
        return show_plan(plan, args.json)
    warn_if_question(plan.brief)
    service = Service()
    with sandbox_errors():
        sandbox = service.create(plan)
    try:
        set_up(service, sandbox, plan)
    except Failure as failure:
        warn(str(failure))  # the cause first, then what became of the sandbox
        clean_up_after(service, sandbox, plan, failure)
        raise Failure("", failure.code)
    except BaseException as exc:
        clean_up_after(service, sandbox, plan, exc)
        raise
    commands = follow_up_commands(sandbox.sandbox_id)
    if args.json:
        return emit_json({"sandbox_id": sandbox.sandbox_id, "session_id": plan.session,
                          "profile": plan.profile, "repo": plan.repo,
                          "integration_branch": plan.integration,
                          "template": plan.template or "base", "timeout": plan.timeout,
                          "commands": commands})
    out(f"sandbox  {sandbox.sandbox_id}")
    out(f"session  {plan.session}")
    for name, command in commands.items():
        out(f"{name:<8} {command}")


def follow_up_commands(sandbox_id):
    return {"log": f"cr-e2b log --sandbox {sandbox_id} --follow",
            "status": f"cr-e2b status --sandbox {sandbox_id}",
            "brief": f"cr-e2b brief --sandbox {sandbox_id} --brief FILE",
            "wait": f"cr-e2b wait --sandbox {sandbox_id}",
            "kill": f"cr-e2b kill --sandbox {sandbox_id}"}


def set_up(service, sandbox, plan):
    plan.fill_opening(sandbox.sandbox_id)
    with sandbox_errors(sandbox.sandbox_id):
        Service.write(sandbox, plan.files())
    try:
        with sandbox_errors(sandbox.sandbox_id):
            code, stdout, stderr = service.run(sandbox, f'bash "$HOME/{CR_DIR}/setup"',
                                               timeout=SETUP_TIMEOUT)
    except Failure as failure:
        raise Failure(f"setup did not finish: {failure}")
    if code != 0:
        step = re.search(r"cr-e2b-step-failed: (\S+)", stdout)
        name = step.group(1) if step else "setup"
        raise Failure(f"step {name} failed (exit {code}): {tail_lines(stderr) or 'no output'}")


def clean_up_after(service, sandbox, plan, exc):
    if plan.keep_on_failure:
        warn(f"left sandbox {sandbox.sandbox_id} running for you to inspect "
             f"(--keep-on-failure); stop it with: cr-e2b kill --sandbox {sandbox.sandbox_id}")
        return
    try:
        service.kill(sandbox.sandbox_id)
    except Exception as kill_exc:
        warn(f"could not kill sandbox {sandbox.sandbox_id} after the failure "
             f"({type(kill_exc).__name__}); it is still running: "
             f"cr-e2b kill --sandbox {sandbox.sandbox_id}")
        return
    if not isinstance(exc, KeyboardInterrupt):
        warn(f"killed sandbox {sandbox.sandbox_id}, which start had made")


def show_plan(plan, as_json):
    envs = sorted(plan.envs())
    files = [(f"{HOME}/{path}", len(data)) for path, data in plan.files()]
    if as_json:
        return emit_json({"template": plan.template or "base", "timeout": plan.timeout,
                          "envs": envs, "metadata": plan.metadata(),
                          "steps": [{"name": n, "does": d} for n, d in plan.steps()],
                          "files": [{"path": p, "bytes": b} for p, b in files],
                          "agent_args": plan.agent_args, "workdir": plan.workdir})
    out(f"template   {plan.template or 'base (e2b default)'}")
    out(f"lifetime   {plan.timeout} s")
    out(f"envs       {' '.join(envs)}")
    out("metadata   " + " ".join(f"{k}={v}" for k, v in plan.metadata().items()))
    out("steps")
    for name, does in plan.steps():
        out(f"  {name:<13} {does}")
    out("files")
    for path, size in files:
        out(f"  {path}  {size} bytes")
    out(f"turns      claude -p {' '.join(plan.agent_args)} in {plan.workdir}, "
        "prompt on stdin, one at a time")


def cmd_brief(args):
    check_sandbox_id(args.sandbox)
    data = read_text_file(args.brief, "brief")
    warn_if_question(data)
    import uuid
    inbox = f"{CR_DIR}/inbox/{uuid.uuid4()}.md"
    service = Service()
    worker = Worker(service, args.sandbox).connect()
    with sandbox_errors(args.sandbox):
        Service.write(worker.sandbox, [(inbox, data)])
        code, stdout, stderr = service.run(
            worker.sandbox, runner_command("enqueue", f'"$HOME/{inbox}"', "&&", runner_command("kick")))
    match = re.match(r"(\d+) (\d+)", stdout.strip())
    if code != 0 or not match:
        raise Failure(f"sandbox {args.sandbox} did not queue the brief (was it made by cr-e2b?): "
                      f"{tail_lines(stderr, 3) or f'exit {code}'}")
    turn, ahead = int(match.group(1)), int(match.group(2))
    if args.json:
        return emit_json({"sandbox_id": args.sandbox, "turn": turn, "ahead": ahead})
    out(f"queued as turn {turn}, {ahead} ahead of it")


def cmd_log(args):
    check_sandbox_id(args.sandbox)
    worker = Worker(Service(), args.sandbox).connect()
    printer = LogPrinter(args)
    printer.feed(worker.peek(with_log=True))
    if not args.follow:
        return printer.finish()
    printer.finish()
    dead_polls = 0
    while True:
        if args.until_idle and not worker.header["pending"]:
            return
        if worker.header["pending"] and not worker.header["runner"]:
            dead_polls += 1
            if args.until_idle and dead_polls > 1:
                raise Failure(f"sandbox {args.sandbox}: {describe_worker(worker.state())}")
        else:
            dead_polls = 0
        sleep(args.interval)
        printer.feed(worker.peek(with_log=True))
        printer.finish()


class LogPrinter:
    """Prints log lines as they come: raw, or rendered; --turn and --tail apply."""

    def __init__(self, args):
        self.raw, self.only_turn, self.tail = args.raw, args.turn, args.tail
        self.renderer = Renderer(Style())
        self.held = []

    def feed(self, chunk):
        for line in decode_lines(chunk):
            if self.raw:
                turn = self.renderer.render(line)[0] if self.only_turn else None
                lines = [line]
            else:
                turn, lines = self.renderer.render(line)
            if self.only_turn is not None and turn != self.only_turn:
                continue
            self.held.extend(lines)

    def finish(self):
        held, self.held = self.held, []
        if self.tail is not None:
            held = held[-self.tail:] if self.tail else []
            self.tail = None  # after the first screen, a follow prints everything new
        for line in held:
            out(line)
        sys.stdout.flush()


def sleep(seconds_):
    import time
    time.sleep(seconds_)


def cmd_status(args):
    check_sandbox_id(args.sandbox)
    service = Service()
    with sandbox_errors(args.sandbox):
        info = service.info(args.sandbox)
    report = describe_info(info)
    worker = None
    if report["state"] == "running":
        worker = Worker(service, args.sandbox).connect()
        worker.peek(with_log=False)
        turns = worker.turns()
        state = worker.state()
        last = next((t for t in reversed(turns) if t["ended_at"]), None)
        report.update(worker=state, last_turn=last, session_cost_usd=session_cost(turns),
                      permission_denials=sum(t["permission_denials"] for t in turns),
                      turns=len(turns))
    if args.json:
        return emit_json(report)
    left = f", {format_duration(report['seconds_left'])} left" if report["seconds_left"] else ""
    out(f"sandbox   {report['sandbox_id']} ({report['state']}{left})")
    out(f"profile   {report['profile']}")
    out(f"repo      {report['repo']}")
    out(f"session   {report['session_id']}")
    if worker is None:
        out("worker    unknown while the sandbox is paused (a brief resumes it)")
        return
    out(f"worker    {describe_worker(report['worker'])}")
    last = report["last_turn"]
    if last:
        out(f"last turn {last['turn']} {last['state']} (exit {last['exit_code']}): "
            f"{last['last_line'] or '(no final line)'}")
    cost = report["session_cost_usd"]
    out(f"cost      {'$%.4f' % cost if cost is not None else 'none reported yet'}")
    out(f"denials   {report['permission_denials']}")


def describe_info(info):
    from datetime import datetime, timezone
    metadata = info.metadata or {}
    end_at = info.end_at
    left = None
    if isinstance(end_at, datetime):
        if end_at.tzinfo is None:
            end_at = end_at.replace(tzinfo=timezone.utc)
        left = max(0, int((end_at - datetime.now(timezone.utc)).total_seconds()))
    state = getattr(info.state, "value", info.state)
    return {"sandbox_id": info.sandbox_id, "state": str(state),
            "started_at": iso(info.started_at), "end_at": iso(info.end_at),
            "seconds_left": left, "profile": metadata.get("profile"),
            "repo": metadata.get("repo"), "session_id": metadata.get("session"),
            "worker": None, "last_turn": None, "session_cost_usd": None,
            "permission_denials": None, "turns": None}


def iso(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


def format_duration(total):
    hours, rest = divmod(int(total), 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


def cmd_list(args):
    service = Service()
    with sandbox_errors():
        found = service.workers()
    reports = sorted((describe_info(info) for info in found),
                     key=lambda r: r["started_at"] or "", reverse=True)
    rows = [{k: r[k] for k in ("sandbox_id", "profile", "repo", "state", "started_at",
                               "end_at", "seconds_left")} for r in reports]
    if args.json:
        return emit_json({"sandboxes": rows})
    for row in rows:
        left = format_duration(row["seconds_left"]) if row["seconds_left"] is not None else "?"
        out(f"{row['sandbox_id']}  {row['profile']}  {row['repo']}  {row['state']}  {left} left")


def cmd_wait(args):
    check_sandbox_id(args.sandbox)
    import time
    deadline = time.monotonic() + args.timeout if args.timeout else None
    worker, outcome, dead_polls = None, None, 0
    try:
        worker = Worker(Service(), args.sandbox).connect()
        while True:
            worker.peek(with_log=False)
            if not worker.header["pending"]:
                break
            dead_polls = dead_polls + 1 if not worker.header["runner"] else 0
            if dead_polls > 1:
                raise Failure(f"sandbox {args.sandbox}: {describe_worker(worker.state())}")
            if deadline and time.monotonic() + args.interval > deadline:
                outcome = "timeout"
                break
            sleep(args.interval)
    except Failure as failure:
        if failure.code != EXIT_NO_SANDBOX:
            raise
        outcome = "gone"
        if not args.json:
            raise
    turns = worker.turns() if worker and worker.header else []
    last = next((t for t in reversed(turns) if t["ended_at"]), None)
    if outcome is None:
        outcome = {"ok": "ok", "blocked": "blocked"}.get(last["state"], "failed") if last else "ok"
    code = {"ok": EXIT_OK, "failed": EXIT_TURN_FAILED, "blocked": EXIT_BLOCKED,
            "timeout": EXIT_WAIT_TIMEOUT, "gone": EXIT_NO_SANDBOX}[outcome]
    if args.json:
        emit_json({"sandbox_id": args.sandbox, "outcome": outcome, "exit_code": code,
                   "last_turn": last})
    elif outcome == "timeout":
        warn(f"sandbox {args.sandbox}: still busy after {args.timeout} s: "
             f"{describe_worker(worker.state())}")
    elif last and outcome != "ok":
        warn(f"turn {last['turn']} {outcome}: {last['last_line'] or 'exit %s' % last['exit_code']}")
    return code


def cmd_kill(args):
    check_sandbox_id(args.sandbox)
    service = Service()
    with sandbox_errors(args.sandbox):
        killed = service.kill(args.sandbox)
    if not killed:
        raise Failure(f"no such sandbox: {args.sandbox} (unknown, expired or killed)",
                      EXIT_NO_SANDBOX)


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------

EXIT_CODES_HELP = """exit codes:
  0 ok    1 failed    2 bad usage or input    3 no such sandbox
  4 last turn failed (wait)    5 last turn BLOCKED (wait)    6 wait timed out
  7 try again later (rate limit, busy, network)    130 interrupted"""


def positive_int(text):
    import argparse
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return value


def non_negative_int(text):
    return 0 if text.strip() == "0" else positive_int(text)


def positive_float(text):
    import argparse
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return value


def build_parser():
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise usage_error(f"{message} (see '{self.prog} --help')")

    def verb(name, summary, example):
        return subs.add_parser(name, help=summary, description=summary,
                               epilog=f"example:\n  {example}\n\n{EXIT_CODES_HELP}",
                               formatter_class=argparse.RawDescriptionHelpFormatter)

    parser = Parser(prog="cr-e2b", formatter_class=argparse.RawDescriptionHelpFormatter,
                    description="Run a Claude Code worker in an e2b sandbox on a git repository.",
                    epilog="example:\n  cr-e2b start --repo https://github.com/you/app.git "
                           "--profile backend --brief brief.md\n\n" + EXIT_CODES_HELP)
    parser.add_argument("--version", action="version", version=f"cr-e2b {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    subs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=Parser)

    p = verb("start", "create a sandbox, clone the repository and start the worker",
             "cr-e2b start --repo https://github.com/you/app.git --profile backend "
             "--brief brief.md")
    p.add_argument("--repo", required=True, metavar="URL", help="repository to clone")
    p.add_argument("--profile", required=True, metavar="NAME", help="worker profile, e.g. backend")
    p.add_argument("--brief", required=True, metavar="FILE", help="first brief ('-' = stdin)")
    p.add_argument("--template", help="e2b template (default: e2b's base)")
    p.add_argument("--timeout", type=positive_int, default=DEFAULTS["timeout"], metavar="SECONDS",
                   help="sandbox lifetime (default: %(default)s)")
    p.add_argument("--integration", metavar="BRANCH",
                   help="integration branch (default: control-room.json, else main)")
    p.add_argument("--prefix", help="worker branch prefix (default: control-room.json, else claude/)")
    p.add_argument("--profile-variable", metavar="NAME",
                   help="variable holding the profile (default: control-room.json, else CR_PROFILE)")
    p.add_argument("--opening", metavar="FILE", help="opening template (default: the shipped one)")
    p.add_argument("--install", metavar="COMMAND",
                   help="how to install Claude Code if missing (default: the official installer)")
    p.add_argument("--agent-args", metavar="ARGS",
                   help="claude flags for every turn (default: %r)" % DEFAULTS["agent_args"])
    p.add_argument("--workdir", metavar="PATH", help=f"clone here (default: {DEFAULTS['workdir']})")
    p.add_argument("--git-name", help="commit author name (default: local git config)")
    p.add_argument("--git-email", help="commit author email (default: local git config)")
    p.add_argument("--env", action="append", metavar="NAME",
                   help="forward this local variable into the sandbox (repeatable; a secret)")
    p.add_argument("--keep-on-failure", action="store_true",
                   help="leave the sandbox running if setup fails")
    p.add_argument("--dry-run", action="store_true",
                   help="print what would be created and run; contact nothing")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(func=cmd_start)

    p = verb("brief", "queue a follow-up for the worker, in the same session",
             "cr-e2b brief --sandbox SANDBOX_ID --brief answer.md")
    p.add_argument("--sandbox", required=True, metavar="ID")
    p.add_argument("--brief", required=True, metavar="FILE", help="the follow-up ('-' = stdin)")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(func=cmd_brief)

    p = verb("log", "show what the worker did, one readable line per event",
             "cr-e2b log --sandbox SANDBOX_ID --follow --until-idle")
    p.add_argument("--sandbox", required=True, metavar="ID")
    p.add_argument("--raw", action="store_true", help="the log as stored (stream-json)")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing new output")
    p.add_argument("--until-idle", action="store_true",
                   help="with --follow: stop when nothing is running or queued")
    p.add_argument("--turn", type=positive_int, metavar="N", help="only turn N")
    p.add_argument("--tail", type=non_negative_int, metavar="N", help="only the last N lines")
    p.add_argument("--interval", type=positive_float, default=2.0, metavar="SECONDS",
                   help="poll interval with --follow (default: %(default)s)")
    p.set_defaults(func=cmd_log)

    p = verb("status", "the sandbox's and the worker's state, on one screen",
             "cr-e2b status --sandbox SANDBOX_ID --json")
    p.add_argument("--sandbox", required=True, metavar="ID")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(func=cmd_status)

    p = verb("list", "every sandbox cr-e2b made, newest first", "cr-e2b list --json")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(func=cmd_list)

    p = verb("wait", "block until nothing is running or queued; exit by how the last turn ended",
             "cr-e2b wait --sandbox SANDBOX_ID --timeout 1800")
    p.add_argument("--sandbox", required=True, metavar="ID")
    p.add_argument("--timeout", type=positive_int, metavar="SECONDS", help="give up after this")
    p.add_argument("--interval", type=positive_float, default=5.0, metavar="SECONDS",
                   help="poll interval (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(func=cmd_wait)

    p = verb("kill", "kill the sandbox (a paused one is not resumed first)",
             "cr-e2b kill --sandbox SANDBOX_ID")
    p.add_argument("--sandbox", required=True, metavar="ID")
    p.set_defaults(func=cmd_kill)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    debug = "--debug" in argv or bool(os.environ.get("CR_E2B_DEBUG"))
    try:
        args = build_parser().parse_args(argv)
        if not args.verb:
            raise usage_error("a verb is needed: start, brief, log, status, list, wait or kill "
                              "(see 'cr-e2b --help')")
        return args.func(args) or EXIT_OK
    except Failure as failure:
        if debug:
            raise
        if str(failure):
            warn(str(failure))
        return failure.code
    except KeyboardInterrupt:
        warn("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        if debug:
            raise
        failure = sdk_failure(exc)
        if failure:
            warn(str(failure))
            return failure.code
        warn(f"unexpected {type(exc).__name__}: {one_line(str(exc), 200)} "
             "(CR_E2B_DEBUG=1 shows a traceback)")
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
