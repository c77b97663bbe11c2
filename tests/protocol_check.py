"""The protocol between the caller and the sandbox side, named once in
cr-e2b's RECORDS, MARKS and REPLIES: this reads the program's source and
names every place that writes or reads a record, a mark or a reply outside
those tables (a kind, a verb or a field they lack). Prints one line per
place; nothing when all is in the tables.

    python3 tests/protocol_check.py CR_E2B
"""

import ast
import os
import re
import sys

source = open(sys.argv[1], encoding="utf-8").read()
tree = ast.parse(source)
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
import cr_e2b  # noqa: E402 (the tables, as the program builds them)

TABLES = {"record": cr_e2b.RECORDS, "mark": cr_e2b.MARKS, "reply": cr_e2b.REPLIES}
KINDS = set(cr_e2b.RECORDS) | set(cr_e2b.MARKS)
found = []


def constant(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def reads_event(node, names):
    """Whether node is X.get("event"), X["event"] or a name bound to one."""
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and constant(node.args[0]) == "event"
    if isinstance(node, ast.Subscript):
        return constant(node.slice) == "event"
    return False


for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))]:
    # the names this function binds to a record's or mark's kind, and to nothing else
    bound = [(target.id, reads_event(node.value, set())) for node in ast.walk(function)
             if isinstance(node, ast.Assign) for target in node.targets if isinstance(target, ast.Name)]
    names = {name for name, kind in bound if kind} - {name for name, kind in bound if not kind}
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in TABLES:
            table, kind = TABLES[node.func.id], constant(node.args[0]) if node.args else None
            if kind is None:
                continue  # a kind passed along (protocol_line refuses an unknown one when it runs)
            if kind not in table:
                found.append(f"line {node.lineno}: {node.func.id}({kind!r}) is not in the table")
                continue
            fields = {k.arg for k in node.keywords if k.arg}
            for extra in sorted(fields - set(table[kind])):
                found.append(f"line {node.lineno}: {node.func.id}({kind!r}) writes {extra}, which the table lacks")
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            verb = constant(node.args[0]) if node.args else None
            # a Worker's ask(VERB) reads VERB's reply (Remotes.ask's words are queries)
            if name in ("parse_reply", "ask") and verb is not None and re.fullmatch(r"[a-z-]+", verb) and \
                    verb not in cr_e2b.REPLIES:
                found.append(f"line {node.lineno}: {name}({verb!r}): no such reply in the table")
        if isinstance(node, ast.Compare) and reads_event(node.left, names):
            for comparator in node.comparators:
                several = isinstance(comparator, (ast.Tuple, ast.List, ast.Set))
                values = [constant(e) for e in comparator.elts] if several else [constant(comparator)]
                for value in filter(None, values):
                    if value not in KINDS:
                        found.append(f"line {node.lineno}: reads a record or mark of kind {value!r}, "
                                     "which the tables lack")
print("\n".join(sorted(set(found), key=lambda line: int(line.split()[1].rstrip(":")))))
