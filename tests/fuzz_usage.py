"""Property test: the runner's readers of Claude Code's JSON count only what counts.

    python tests/fuzz_usage.py [--runs N] [--seed S]

The runner prices each run of Claude Code from its output (read_run, then
run_spend): the costUSD of each model in its result's
model_usage_since_last_result, or, for a run with no result (a watchdog ended
it), its requests' usage tokens (the most each message id showed) at the
session's rate, the cost per token of the last result's modelUsage
(session_rate). It also reads when a rejected limit resets, the API's error
status and the permission denials. That output is the worker's to write, so
each run is generated with the figures that count placed among nested,
reordered and hostile ones: keys in any order, the same keys nested deeper,
wrong types, strings for numbers, NaN, infinities, negative and huge numbers,
missing fields, lines nested deeper than any parser goes and lines that are
no JSON at all. Checked properties, one "ok"/"not ok" line each:

  - the readers never raise, whatever the lines and the exit code;
  - a run's cost and tokens, and the session's rate, are exactly what the
    honest figures add up to: no hostile value is ever counted;
  - a reset time, an error status and a denial count come only from their
    own places in the JSON, and are sane numbers.
"""

import argparse
import json
import math
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = ["1.5", "", "NaN", True, False, None, [], [3], {}, {"costUSD": 2}, float("nan"), float("inf"),
           -float("inf"), -1, -0.5, 10 ** 30, 1e300, 2 ** 64, "12", {"input_tokens": 7}]
SCALARS = [value for value in HOSTILE if not isinstance(value, dict)]  # where an object would count
NOISE_KEYS = ["type", "costUSD", "usage", "input_tokens", "output_tokens", "inputTokens", "id", "message",
              "model_usage_since_last_result", "modelUsage", "resetsAt", "status", "result", "is_error"]


def honest_usd(rng):
    return rng.choice([0, 0.05, 1.25, round(rng.uniform(0, 20), 6)])


def honest_tokens(rng):
    return rng.choice([0, 10, 1000, rng.randint(0, 10 ** 7)])


def noise(rng, depth=0):
    """A value of any JSON kind, with the readers' own keys inside it."""
    kind = rng.choice(["scalar", "scalar", "list", "dict"] if depth < 3 else ["scalar"])
    if kind == "scalar":
        return rng.choice(HOSTILE + ["result", "assistant", "rejected", 0.05, 1000])
    if kind == "list":
        return [noise(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(NOISE_KEYS): noise(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def shuffled(rng, fields):
    """fields in any order, with noise of keys the readers do not read."""
    items = list(fields.items()) + [(f"x{n}", noise(rng)) for n in range(rng.randint(0, 2))]
    rng.shuffle(items)
    return dict(items)


def figure(rng, honest):
    """(the value to write, what it counts): an honest figure, or a hostile one that counts nothing."""
    if rng.random() < 0.7:
        value = honest(rng)
        return value, value
    return rng.choice(HOSTILE), 0


def per_model(rng, token_names):
    """A per-model usage object: (it, the dollars and the tokens it honestly holds)."""
    models, costs, tokens = {}, 0, 0
    for n in range(rng.randint(0, 3)):
        cost, counted = figure(rng, honest_usd)
        fields, costs = {"costUSD": cost}, costs + counted
        for name in token_names:
            if rng.random() < 0.8:  # a field may be missing
                fields[name], counted = figure(rng, honest_tokens)
                tokens += counted
        fields["nested"] = {"costUSD": 99, **{name: 99 for name in token_names}}  # deeper: never counted
        models[f"claude-{n}"] = shuffled(rng, fields)
    if rng.random() < 0.2:
        models["broken"] = rng.choice(SCALARS)  # a model whose usage is no object
    return models, costs, tokens


def run_lines(rng, cr_e2b):
    """A run's output, and what an honest reading of it gives."""
    lines, want = [], {"usd": None, "used": {}, "resets": None, "status": None, "printed": None, "denials": 0,
                       "result": None}
    for _ in range(rng.randint(0, 12)):
        kind = rng.choice(["assistant", "assistant", "assistant", "result", "rate", "noise", "deep", "text"])
        if kind == "assistant":
            message_id = rng.choice(["msg_a", "msg_b", "msg_c", 7, None])
            usage, counted = {}, 0
            for name in cr_e2b.USAGE_TOKENS:
                if rng.random() < 0.8:
                    usage[name], value = figure(rng, honest_tokens)
                    counted += value
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": 5, "input_tokens": 99}  # nested: not counted
            usage = shuffled(rng, usage) if rng.random() < 0.9 else rng.choice(SCALARS)
            message = shuffled(rng, {"id": message_id, "usage": usage, "content": noise(rng)})
            lines.append(shuffled(rng, {"type": "assistant", "message": message, "usage": {"input_tokens": 99}}))
            if isinstance(message_id, str):
                counted = counted if isinstance(usage, dict) else 0
                want["used"][message_id] = max(want["used"].get(message_id, 0), counted)
        elif kind == "result":
            models, costs, _ = per_model(rng, cr_e2b.MODEL_TOKENS)
            since = models if rng.random() < 0.85 else rng.choice(SCALARS)
            status, counted = figure(rng, lambda r: r.choice([429, 529, 500, 0]))
            denials = [rng.choice([{"tool_name": "Bash", "tool_use_id": "t"}, "Bash", 3, None, []])
                       for _ in range(rng.randint(0, 3))]
            fields = {"type": "result", "is_error": rng.choice([True, False, "true", None]),
                      "model_usage_since_last_result": since, "total_cost_usd": 1000,
                      "api_error_status": status, "permission_denials": rng.choice([denials, "none", None])}
            result = shuffled(rng, {name: value for name, value in fields.items() if rng.random() < 0.9
                                    or name == "type"})
            lines.append(result)
            want["result"] = result
            if isinstance(result.get("model_usage_since_last_result"), dict):
                want["usd"] = costs
            kept = "api_error_status" in result and type(status) is int and counted == status
            want["status"] = status if kept else None
            want["denials"] = sum(isinstance(d, dict) for d in result.get("permission_denials") or []) \
                if isinstance(result.get("permission_denials"), list) else 0
        elif kind == "rate":
            resets, counted = figure(rng, lambda r: r.randint(0, 2 * 10 ** 9))
            state = rng.choice(["rejected", "allowed_warning", None])
            info = shuffled(rng, {"status": state, "resetsAt": resets})
            lines.append(shuffled(rng, {"type": "rate_limit_event", "rate_limit_info": info}))
            if state == "rejected" and type(resets) is int and counted == resets:
                want["resets"] = resets
        elif kind == "noise":  # of no type the readers read
            line = noise(rng)
            lines.append({**line, "type": "noise"} if isinstance(line, dict) else line)
        elif kind == "deep":
            depth = rng.choice([50, 900, 5000, 100000])
            opening, closing = rng.choice([("[", "]"), ('{"usage":', "}")])
            lines.append('{"type":"assistant","message":{"id":"msg_deep","usage":{"input_tokens":%s}}}'
                         % (opening * depth + "1" + closing * depth))
        else:
            status = rng.randint(100, 599)
            lines.append(rng.choice([f"API Error: {status} overloaded", "Error: no conversation", b"\xff\xfe{"]))
            if lines[-1] == f"API Error: {status} overloaded":
                want["printed"] = status
    encoded = []
    for line in lines:
        if isinstance(line, bytes):  # no UTF-8
            encoded.append(line + b"\n")
            continue
        text = line if isinstance(line, str) else json.dumps(line, separators=rng.choice([(",", ":"), (", ", ": ")]))
        encoded.append(text.encode() + b"\n")
    if want["status"] is None:
        want["status"] = want["printed"]
    want["tokens"] = sum(want["used"].values())
    return encoded, want


def close(a, b):
    return a is not None and math.isfinite(a) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def check(rng, cr_e2b):
    """The failures of one generated run, as lines."""
    lines, want = run_lines(rng, cr_e2b)
    session, rate_costs, rate_tokens = per_model(rng, cr_e2b.MODEL_TOKENS)
    session_result = shuffled(rng, {"type": "result", "modelUsage": session})
    try:
        run = cr_e2b.read_run(lines)
        rate = cr_e2b.session_rate(session_result)
        usd, how = cr_e2b.run_spend(run, rate)
        cr_e2b.session_rate(rng.choice(HOSTILE + [None, {"modelUsage": rng.choice(HOSTILE)}]))
        limit, wake = cr_e2b.run_limit(run, rng.choice([0, 1, 143]))
        denials = cr_e2b.denial_count(run["result"])
    except Exception as exc:
        return [], [f"{type(exc).__name__}: {str(exc)[:200]} on {lines!r:.300}"], []
    counted, read = [], []
    want_rate = round(rate_costs / rate_tokens, 12) if rate_tokens else 0.0
    if not close(rate, want_rate):
        counted.append(f"rate {rate!r}, want {want_rate!r}, of {session!r:.300}")
    want_usd = want["usd"] if want["usd"] is not None else want["tokens"] * want_rate
    if how != ("result" if want["usd"] is not None else "tokens") or not close(usd, want_usd) or usd < 0:
        counted.append(f"spend {usd!r} by {how}, want {want_usd!r}, of {lines!r:.300}")
    if run["tokens"] != want["tokens"]:
        counted.append(f"tokens {run['tokens']!r}, want {want['tokens']!r}, of {lines!r:.300}")
    if run["resets"] != want["resets"] or not (wake is None or 0 <= wake <= cr_e2b.MAX_EPOCH + 86400):
        read.append(f"resets {run['resets']!r} (wake {wake!r}), want {want['resets']!r}, of {lines!r:.300}")
    if run["status"] != want["status"]:
        read.append(f"status {run['status']!r}, want {want['status']!r}, of {lines!r:.300}")
    if denials != want["denials"]:
        read.append(f"denials {denials!r}, want {want['denials']!r}, of {lines!r:.300}")
    if limit is not None and not isinstance(limit, str):
        read.append(f"limit {limit!r}")
    return counted, [], read


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    sys.path.insert(0, ROOT)
    import cr_e2b
    rng = random.Random(args.seed)
    failures = {"counted": [], "raised": [], "read": []}
    for _ in range(args.runs):
        counted, raised, read = check(rng, cr_e2b)
        failures["counted"] += counted
        failures["raised"] += raised
        failures["read"] += read
    labels = {"raised": "the readers of Claude Code's JSON take any lines without raising",
              "counted": "a run's cost, its tokens and the session's rate count no hostile value",
              "read": "a reset time, an error status and the denials come only from their places"}
    for name, label in labels.items():
        found = failures[name]
        print(f"{'not ok' if found else 'ok'} fuzz, {args.runs} runs, seed {args.seed}: {label}")
        for failure in found[:3]:
            print(f"#   {failure}")
    return 1 if any(failures.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
