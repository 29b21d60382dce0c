"""The house's layers, read from the source: no import cycle, and each layer imports only those below it.

``app.model`` (the core, the state, the text) at the bottom; ``components`` (the views) above it; ``app``'s
pages and server at the top. Every ``import`` statement counts, at module level or inside a function: a
deferred import is still a dependency, and a cycle hidden in a function is still a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "components", "bench", "deploy")
#: What the model may import: the standard library and these.
MODEL_THIRD_PARTY = {"numpy", "param", "markdown_it", "mdit_py_plugins"}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> tuple[set[str], set[str]]:
    """(the project's modules ``module`` imports, the top-level names of the others it imports)."""
    ours, others = set(), set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def add(name: str) -> None:
        target = name
        while target and target not in MODULES:
            target = target.rpartition(".")[0]
        if target:
            ours.add(target)
        elif name.split(".")[0] not in PACKAGES:
            others.add(name.split(".")[0])

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:  # ``from pkg import module`` imports the module
                add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    ours.discard(module)
    return ours, others


GRAPH = {module: _imported(module, path) for module, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_walk_finds_a_cycle_when_there_is_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_walk_reads_imports_inside_functions_and_relative_ones():
    ours, _ = GRAPH["app.server"]
    assert "app.pages" in ours
    assert "app.model.core" in GRAPH["app"][0]  # ``from app.model import core`` in a package's __init__


def test_no_import_cycle_in_app_components_bench_deploy():
    assert _cycles({module: ours for module, (ours, _) in GRAPH.items()}) == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("app.model")))
def test_the_model_imports_nothing_above_it_and_no_ui_library(module):
    ours, others = GRAPH[module]
    assert {m for m in ours if not m.startswith("app.model")} == set()
    import sys

    third_party = {name for name in others if name not in sys.stdlib_module_names}
    assert third_party <= MODEL_THIRD_PARTY, f"{module} imports {sorted(third_party - MODEL_THIRD_PARTY)}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("components")))
def test_the_views_import_only_the_model_and_each_other(module):
    ours, _ = GRAPH[module]
    assert {m for m in ours if not m.startswith(("app.model", "components"))} == set()


def test_the_public_core_answers_at_its_old_address():
    from app import core
    from app.model import core as model_core

    assert core is model_core
    assert sorted(core.__all__) == sorted(set(core.__all__))
    for name in ("wavelengths", "relative_scores", "encoding", "rotation", "rope_scores", "mistake_columns",
                 "order_differences", "learned_table"):
        assert callable(getattr(core, name)), name


TOPICS = ["ladder", "sinusoidal", "text", "attention", "alternatives", "rope", "mistakes", "extrapolation"]


@pytest.mark.parametrize("topic", TOPICS)
def test_every_topic_of_the_core_declares_what_it_exports(topic):
    import importlib

    module = importlib.import_module(f"app.model.core.{topic}")
    assert module.__all__, topic
    for name in module.__all__:
        assert getattr(module, name).__module__ == module.__name__ if callable(getattr(module, name)) else True
