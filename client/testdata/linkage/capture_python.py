"""Runs the zeroeval Python SDK's prompt helper (ze.prompt) on every case of cases.json against
stub.py and writes what it returns to python/<case>.txt (UTF-8, no newline added), or the
error it raises to python/<case>.err. Usage: ZEROEVAL_BASE_URL=http://127.0.0.1:PORT
ZEROEVAL_API_KEY=k python3 capture_python.py SDK_SRC (the SDK's src/ folder)."""
import importlib.abc
import importlib.machinery
import json
import os
import sys
from unittest import mock


class _Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Stands in for the SDK's dependencies that the prompt helper never calls and that are not
    installed here (opentelemetry, rich)."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("opentelemetry", "rich"):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = mock.MagicMock(name=spec.name)
        m.__path__, m.__spec__ = [], spec
        return m

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Stubs())
sys.path.insert(0, sys.argv[1])
import zeroeval as ze  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(here, "python"), exist_ok=True)
for case in json.load(open(os.path.join(here, "cases.json"), encoding="utf-8")):
    kwargs = {k: case[k] for k in ("content", "variables") if k in case}
    if "from" in case:
        kwargs["from_"] = case["from"]
    out = os.path.join(here, "python", case["name"])
    try:
        text = ze.prompt(case["task"], **kwargs)
    except Exception as e:  # the error cases
        with open(out + ".err", "w", encoding="utf-8") as f:
            f.write(f"{type(e).__name__}: {e}\n")
        continue
    with open(out + ".txt", "wb") as f:
        f.write(text.encode("utf-8"))
