"""Property test: the log renderer and the turn records take JSON of any shape.

    python tests/fuzz_render.py [--events N] [--seed S]

The agent writes whatever it likes into the log, so every event type is
generated with every field holding values of every JSON kind (and strings with
control characters and secrets in them). For each event the renderer's handler
is called directly, without the last-resort guard in Renderer.render, so that
a handler that cannot take a shape fails here. Checked properties, one
"ok"/"not ok" line each:

  - a handler returns a list of strings for every event;
  - no rendered line holds a C0/C1 control character once made visible, or
    more than 7 characters of a secret that the event held, wherever the
    renderer cuts the line;
  - the turn records fold into turns with a known state for any record shape.
"""

import argparse
import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "sk-FUZZ-" + "q7Rt2xWv9" * 6
FIELDS = ["type", "subtype", "message", "content", "text", "name", "id", "input", "command",
          "tool_use_id", "is_error", "result", "permission_denials", "tool_input", "tool_name",
          "total_cost_usd", "duration_ms", "turn", "event", "first_line", "at", "exit", "model",
          "permissionMode", "claude_code_version", "attempt", "max_retries", "error",
          "error_status", "retry_delay_ms", "file_path", "prompt", "verdict", "ok", "reasons",
          "checks", "ms", "exit_code", "head", "branch", "pull_request", "pr_checked", "blocks", "of"]
TYPES = ["cr-e2b", "system", "assistant", "user", "result"]
WORDS = ["turn-start", "turn-end", "gate-block", "gate-check", "verdict", "init", "api_retry",
         "permission_denied", "text", "tool_use", "ready", "none", "blocked",
         "tool_result", "queued", "started", "ended", "git push origin x", "gh pr create",
         "\x1b[2K\x1b[1A--- turn 99 ok", "\x1b]0;title\x07", "\u009b31m", "ünïcødé ✓", "",
         "EPIC wc-1 BLOCKED x"] + \
    ["b" * (width - 15) + SECRET + " tail" for width in (40, 60, 100, 120, 200, 300)]


def value(rng, depth=0):
    kinds = ["null", "bool", "int", "float", "str", "str"]
    if depth < 3:
        kinds += ["list", "dict", "dict"]
    kind = rng.choice(kinds)
    if kind == "null":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, 1, -1, 2 ** 63, rng.randint(-10 ** 6, 10 ** 6)])
    if kind == "float":
        return rng.choice([0.5, -3.25, 1e308, float("nan"), float("inf")])
    if kind == "str":
        return rng.choice(WORDS) if rng.random() < 0.7 else \
            "".join(chr(rng.choice([rng.randint(0, 0x40), rng.randint(0x7f, 0xa0),
                                    rng.randint(0x20, 0x2fff)])) for _ in range(rng.randint(0, 30)))
    if kind == "list":
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return event(rng, depth + 1)


def event(rng, depth=0):
    shaped = {name: value(rng, depth + 1) for name in rng.sample(FIELDS, rng.randint(0, 8))}
    for name, choices in (("type", TYPES), ("subtype", WORDS), ("event", WORDS)):
        if rng.random() < 0.8:
            shaped[name] = rng.choice(choices)
    return shaped


def violations(lines, cr_e2b):
    for line in lines:
        if not isinstance(line, str):
            yield f"not a string: {line!r}"
            continue
        shown = cr_e2b.visible(cr_e2b.MASK(line))
        if any(ord(c) < 0x20 and c not in "\t\n" or 0x7f <= ord(c) <= 0x9f for c in shown):
            yield f"control character in {shown!r}"
        if SECRET[:8] in shown:
            yield f"secret shown in {shown!r}"


def too_deep(cr_e2b, rng):
    """Lines nested deeper than any parser goes, through the renderer's guard
    and the records' fold, as `log` and `status` meet them."""
    for depth in (900, 5000, 50000):
        opening, closing = rng.choice([("[", "]"), ('{"a":', "}")])
        line = opening * depth + f'"\x1b[2J{SECRET}"' + closing * depth
        try:
            shown = cr_e2b.Renderer(cr_e2b.Style()).render(line)[1]
            if list(violations(shown, cr_e2b)):
                yield f"depth {depth}: {list(violations(shown, cr_e2b))[0]}"
            record = '{"turn":1,"event":"result","result":{"type":"result","result":%s}}' % line
            cr_e2b.fold_records([record])
            cr_e2b.as_text(json.loads(opening * 900 + "1" + closing * 900))
        except Exception as exc:
            yield f"depth {depth}: {type(exc).__name__}: {str(exc)[:100]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    os.environ["ANTHROPIC_API_KEY"] = SECRET
    sys.path.insert(0, ROOT)
    import cr_e2b
    rng = random.Random(args.seed)
    renderer = cr_e2b.Renderer(cr_e2b.Style())
    failures = {"renderer": [], "lines": [], "records": []}
    for _ in range(args.events):
        shaped = event(rng)
        try:
            lines = renderer.handle(shaped)
        except Exception as exc:
            failures["renderer"].append(f"{type(exc).__name__}: {exc} on {json.dumps(shaped)[:300]}")
            continue
        failures["lines"] += list(violations(lines, cr_e2b))[:1]
        records = [json.dumps(event(rng)) for _ in range(3)] + \
            [json.dumps({"turn": rng.randint(1, 3), "event": "result", "result": shaped})]
        try:
            states = {turn["state"] for turn in cr_e2b.fold_records(records)}
            assert states <= {"queued", "running", "limited", "lost", "failed", "undelivered", "blocked",
                              "stalled", "over-limit", "cancelled", "dropped", "ok", "no-verdict"}
        except Exception as exc:
            failures["records"].append(f"{type(exc).__name__}: {exc} on {records}")
    failures["depth"] = list(too_deep(cr_e2b, rng))
    labels = {"renderer": "every event renders to a list of strings",
              "depth": "a line or a record nested too deep to parse shows as text, masked and escaped",
              "lines": "no rendered line shows a control character or a secret",
              "records": "turn records of any shape fold into turns with a known state"}
    for name, label in labels.items():
        found = failures[name]
        print(f"{'not ok' if found else 'ok'} fuzz, {args.events} events, seed {args.seed}: {label}")
        for failure in found[:3]:
            print(f"#   {failure}")
    return 1 if any(failures.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
