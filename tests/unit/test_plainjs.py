"""components/plainjs.py: every JavaScript component of the app is marked plain, and the page's script
looks for the same mark."""

from __future__ import annotations

import importlib
import pkgutil
import re

import param
from panel.custom import JSComponent

import app
import components
from app.delivery import PLAIN_ESM_JS
from components.plainjs import PLAIN_MARK, PlainJSComponent


def _app_components() -> list[type]:
    for package in (app, components):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name != "app.__main__":
                importlib.import_module(info.name)
    found, todo = [], [JSComponent]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.split(".")[0] in ("app", "components") and cls is not PlainJSComponent:
            found.append(cls)
    return found


def test_every_component_of_the_app_is_plain_and_its_module_starts_with_the_mark():
    classes = _app_components()
    assert len(classes) >= 19, [c.__name__ for c in classes]
    for cls in classes:
        assert issubclass(cls, PlainJSComponent), cls
        esm = cls._render_esm(compiled=True)
        assert esm.startswith(PLAIN_MARK + "\n"), cls
        assert esm.count(PLAIN_MARK) == 1, cls


def test_the_mark_is_added_once_and_a_subclass_without_a_module_keeps_its_parents():
    class Shown(PlainJSComponent):
        _esm = "export function render() {}"

    class Again(Shown):
        value = param.Integer(default=0)

    assert Shown._esm == PLAIN_MARK + "\nexport function render() {}"
    assert Again._render_esm() == Shown._render_esm()


def test_the_page_script_looks_for_the_same_mark():
    assert re.search(r'const MARK = "([^"]+)";', PLAIN_ESM_JS).group(1) == PLAIN_MARK
