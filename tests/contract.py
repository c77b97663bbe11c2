"""Checks an e2b SDK against every call, parameter, field and exception cr-e2b uses.

    python tests/contract.py          the e2b installed for this Python
    python tests/contract.py --fake   the recording fake in tests/fixtures

The list of what cr-e2b uses is cr-e2b's own SDK_CONTRACT, read from its
importable twin, so the code, the fake and this check name the same things.
Prints one line per check and exits 1 if any fails (or the SDK won't import).
"""

import dataclasses
import importlib
import inspect
import os
import sys
import typing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def names_of(target):
    """Every name a caller may use on target: parameters, fields, attributes."""
    found = set(dir(target)) | set(getattr(target, "__annotations__", {}))  # a TypedDict's keys too
    if dataclasses.is_dataclass(target):
        found |= {f.name for f in dataclasses.fields(target)}
    if callable(target):
        signatures = []
        try:
            signatures.append(inspect.signature(target))
        except (TypeError, ValueError):
            pass
        get_overloads = getattr(typing, "get_overloads", lambda _: [])
        signatures += [inspect.signature(o) for o in get_overloads(target)]
        for signature in signatures:
            found |= set(signature.parameters)
    return found


def resolve(module, dotted):
    """Follows a path like Sandbox.files.write_files, through typed properties,
    like Template.from_template().run_cmd, through what a call returns, and
    like api.client_sync.get_api_client, through submodules."""
    target = module
    for part in dotted.split("."):
        called = part.endswith("()")
        part = part[:-2] if called else part
        attribute = inspect.getattr_static(target, part, None) if inspect.isclass(target) else None
        if inspect.ismodule(target) and not hasattr(target, part):  # a submodule not imported yet
            target = importlib.import_module(f"{target.__name__}.{part}")
        elif isinstance(attribute, property):
            target = typing.get_type_hints(attribute.fget)["return"]
        else:
            target = getattr(target, part)
        if called:
            target = typing.get_type_hints(target)["return"]
    return target


def check(module, contract):
    results = []
    for dotted, wanted in contract.items():
        if dotted == "exceptions":
            for name in wanted:
                ok = isinstance(getattr(module, name, None), type) and \
                    issubclass(getattr(module, name), BaseException)
                results.append((ok, f"exception {name}"))
            continue
        try:
            target = resolve(module, dotted)
        except (AttributeError, KeyError, NameError) as exc:
            results.append((False, f"{dotted}: missing ({exc})"))
            continue
        missing = [name for name in wanted if name not in names_of(target)]
        label = f"{dotted}({', '.join(wanted)})"
        results.append((not missing, label + (f": missing {', '.join(missing)}" if missing else "")))
    return results


def main():
    fake = "--fake" in sys.argv[1:]
    if fake:
        sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
    sys.path.insert(0, ROOT)
    import cr_e2b
    try:
        import e2b
    except Exception as exc:
        print(f"not ok cannot import the e2b SDK: {type(exc).__name__}: {exc}")
        return 1
    version = "fake" if fake else getattr(e2b, "__version__", None) or installed_version(e2b)
    failed = 0
    for ok, label in check(e2b, cr_e2b.SDK_CONTRACT):
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} e2b {version}: {label}")
    return 1 if failed else 0


def installed_version(module):
    """The installed distribution's version, if it is the module imported."""
    from importlib.metadata import PackageNotFoundError, distribution
    try:
        installed = distribution("e2b")
        if os.path.samefile(installed.locate_file("e2b/__init__.py"), module.__file__):
            return installed.version
    except (PackageNotFoundError, OSError):
        pass
    return f"(not installed: {os.path.dirname(module.__file__)})"


if __name__ == "__main__":
    sys.exit(main())
