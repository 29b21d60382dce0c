"""The base of the app's own JavaScript components (their modules reach the browser as written), and the
snippets of JavaScript that several of them share.

Panel runs every ``JSComponent`` module through Sucrase's TypeScript transform in the browser, once
per instance (BokehJS's ``ReactiveESM.compile``), although it imports each module only once per
class. The app's modules are plain modern JavaScript: the transform returns most of them unchanged and
rewrites the others' optional chaining (``a?.b``) into helper calls, which every current browser runs
natively. On ``/`` it was 41 transforms, 83-98 ms of the main thread while the first document is
deserialized (19 distinct modules); now ~0.3 ms. ``PlainJSComponent`` puts ``PLAIN_MARK``
on the first line of a subclass's module, and static/plain-esm.js (run on every page once BokehJS and
Panel have loaded; ``app.delivery``) makes ``compile`` return a module with that mark unchanged.
Any other component, Panel's own included, is compiled as before.
"""

from __future__ import annotations

from panel.custom import JSComponent

#: The first line of a module given to the browser as written (static/plain-esm.js looks for it).
PLAIN_MARK = "// pe:plain-esm"


class PlainJSComponent(JSComponent):
    """A ``JSComponent`` whose ``_esm`` is plain JavaScript (no TypeScript, no JSX): see the module's docstring."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        esm = cls.__dict__.get("_esm")
        if isinstance(esm, str) and not esm.startswith(PLAIN_MARK):
            cls._esm = f"{PLAIN_MARK}\n{esm}"


#: JavaScript: ``find(root, id)``, the element with that id under ``root`` or in any shadow root below it
#: (Panel draws every part of a page in a shadow root, where ``document.getElementById`` does not look).
FIND_BY_ID_JS = """
const find = (root, id) => {
  const hit = root.getElementById?.(id);
  if (hit) return hit;
  for (const el of root.querySelectorAll("*")) {
    const inner = el.shadowRoot && find(el.shadowRoot, id);
    if (inner) return inner;
  }
  return null;
};
"""


#: JavaScript: ``radioOption(model, group, i, text)``, option ``i`` of a radio group as a ``<label>`` holding its
#: ``<input type=radio>`` (named ``group``, checked when ``model.choice`` is ``i``, setting ``model.choice``
#: when picked) and its words (``text``, as plain text); returns ``{line, input, words}``.
RADIO_OPTION_JS = """
const radioOption = (model, group, i, text) => {
  const line = document.createElement("label");
  const input = document.createElement("input");
  input.type = "radio";
  input.name = group;
  input.value = String(i);
  input.checked = model.choice === i;
  input.addEventListener("change", () => { if (input.checked) model.choice = i; });
  const words = document.createElement("span");
  words.textContent = text;
  line.append(input, words);
  return { line, input, words };
};
"""
