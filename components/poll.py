"""A class poll in a room: the teacher asks a quiz question, the followers answer, the teacher reveals.

On the teacher's page (the page holding the room's secret), under each question of the quiz, an
"Ask the room" button (``PollControls``, named ``poll_teacher_<n>``); once asked, the same box shows
the counts per option live (numbers and labelled bars), how many answered, and the buttons "Reveal the
answer" and "Close the poll". On a follower's page, a card fixed at the top of the screen wherever
the reader is (``PollCard``, named ``poll_card``; its question is a ``Prose`` named
``poll_question_text``): the question in the reader's own language, its options as a radio group, and
"Send"; after the reveal, the right option marked in words and the explanation.

One answer per page and poll: the page id is made here, on the server, and never comes from the
browser; a second answer from the same page is refused with a sentence on the card (the first one
counts). Opening, revealing and closing need the room's secret (``RoomBox.secret``, which a follower's
page never has), checked again by the store; option indices are checked by the store.

``PagePoll`` is one page's part in its room's poll; ``page_poll(state)`` finds it from either side (the
room box in the top bar, the quiz section), whichever is built first.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import ClassVar, TypeVar

import panel as pn
import param
from panel.custom import Child
from panel.io.state import set_curdoc

from app.model.prose import section_prose
from app.model.state import ExplorerState
from app.model.strings import text
from components import pollstore
from components.address import script_embedded
from components.lesson.quiz import CheckYourself, question_explanation, question_labels, question_right
from components.plainjs import RADIO_OPTION_JS, PlainJSComponent
from components.prose import Prose
from components.room import RoomBox, room_box
from components.widgets import mark_connected

T = TypeVar("T")

log = logging.getLogger("components.poll")

#: The part of the quiz's prose that holds question ``n``'s prompt.
PROMPT = "q{n}"

_BUTTONS_CSS = """
button { font: inherit; font-size: 1.05rem; padding: 0.35em 0.9em; min-height: 44px; border-radius: 6px;
         cursor: pointer; border: 2px solid var(--pe-t-accent, #007A5A); background: var(--pe-t-surface, #ffffff);
         color: var(--pe-t-accent, #007A5A); }
button:hover:not(:disabled) { background: var(--pe-t-accent, #007A5A); color: var(--pe-t-surface, #ffffff); }
button:focus-visible, input:focus-visible { outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; }
button:disabled { opacity: 0.55; cursor: default; }
[hidden] { display: none !important; }
.pe-poll-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
                  white-space: nowrap; }
"""

_CONTROLS_CSS = _BUTTONS_CSS + """
:host { display: block; }
.pe-poll-teacher { font-size: 1.05rem; color: var(--pe-t-ink, #222222); margin: 0.2em 0 0.8em 0; }
.pe-poll-live { border: 2px solid var(--pe-t-muted, #555555); border-radius: 8px; padding: 0.5em 0.9em;
                margin-top: 0.5em; }
.pe-poll-live p { margin: 0.2em 0; }
.pe-poll-rows { list-style: none; margin: 0.4em 0; padding: 0; }
.pe-poll-rows li { display: grid; grid-template-columns: minmax(0, 1fr) minmax(4rem, 12rem) 3.5rem;
                   gap: 0.3em 0.8em; align-items: center; padding: 0.25em 0; }
.pe-poll-option { overflow-wrap: anywhere; }
.pe-poll-bar { height: 1.1em; border: 1px solid var(--pe-t-muted, #555555); border-radius: 3px;
               background: var(--pe-t-surface, #ffffff); }
.pe-poll-bar span { display: block; height: 100%; background: #0072B2; }
.pe-poll-number { font-variant-numeric: tabular-nums; font-weight: 700; text-align: right; }
.pe-poll-right { font-weight: 700; }
.pe-poll-actions { display: flex; flex-wrap: wrap; gap: 0.5em; margin-top: 0.4em; }
"""

_CARD_CSS = _BUTTONS_CSS + """
:host { display: block; }
/* Fixed at the top of the screen: the student answers wherever on the page the teacher has taken them. */
.pe-poll-card { position: fixed; top: 0.5rem; left: 0; right: 0; margin: 0 auto; z-index: 950;
                box-sizing: border-box; width: min(42rem, calc(100vw - 1rem)); max-height: calc(100vh - 1rem);
                overflow-y: auto; padding: 0.6em 1em 0.9em 1em; border: 3px solid #0072B2; border-radius: 10px;
                background: var(--pe-t-surface, #ffffff); color: var(--pe-t-ink, #222222); font-size: 1.1rem;
                box-shadow: 0 6px 24px rgba(0, 0, 0, 0.3); }
.pe-poll-card h2 { font-size: 1.2rem; margin: 0; flex: 1 1 auto; }
.pe-poll-head { display: flex; align-items: center; gap: 0.5em; margin: 0 0 0.2em 0; }
.pe-poll-head button { font-size: 0.95rem; min-height: 36px; padding: 0.2em 0.7em; }
.pe-poll-card fieldset { border: 2px solid #d0d0d0; border-radius: 6px; margin: 0.3em 0; padding: 0.2em 0.7em 0.4em; }
.pe-poll-card legend { font-size: 1rem; color: var(--pe-t-muted, #555555); padding: 0 0.3em; }
.pe-poll-card label { display: flex; align-items: flex-start; gap: 0.6em; padding: 0.35em 0.2em; cursor: pointer;
                      line-height: 1.4; }
.pe-poll-card input { width: 24px; height: 24px; flex: none; margin: 0.05em 0 0 0; accent-color: #0072B2; }
.pe-poll-card label > span { min-width: 0; overflow-wrap: anywhere; }
.pe-poll-mark { display: block; font-weight: 700; }
.pe-poll-card .pe-poll-is-right { background: var(--pe-t-right-bg, #e8f6f1); border-left: 6px solid #009E73;
                                  padding-left: 0.4em; }
.pe-poll-row { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5em 1em; }
.pe-poll-message { margin: 0.2em 0; font-weight: 700; }
.pe-poll-message:empty { display: none; }
.pe-poll-why { margin: 0.4em 0 0 0; padding: 0.4em 0.8em; border-left: 6px solid #009E73;
               background: var(--pe-t-right-bg, #e8f6f1); line-height: 1.45; }
.pe-poll-why:empty { display: none; }
"""


class PollControls(PlainJSComponent):
    """The teacher's poll tools under one quiz question: ask, then counts (numbers and bars), reveal, close.

    To the browser: ``shown`` (this page is a room's teacher), ``status`` ("", "open", "revealed"),
    ``labels``, ``counts``, ``right`` (marked once revealed) and the texts. From it: ``asks``,
    ``reveals`` and ``closes``, click counters that Python watches.
    """

    shown = param.Boolean(default=False)
    status = param.String(default="")
    labels = param.List(default=[], item_type=str)
    counts = param.List(default=[], item_type=int)
    right = param.Integer(default=-1)
    total_text = param.String(default="", doc="How many answered, in words (read by screen readers as it changes).")
    status_text = param.String(default="")
    region = param.String(default="")
    ask_label = param.String(default="")
    ask_name = param.String(default="")
    reveal_label = param.String(default="")
    close_label = param.String(default="")
    right_mark = param.String(default="")
    asks = param.Integer(default=0, bounds=(0, None))
    reveals = param.Integer(default=0, bounds=(0, None))
    closes = param.Integer(default=0, bounds=(0, None))

    _esm = """
    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "pe-poll-teacher";
      const ask = document.createElement("button");
      ask.type = "button";
      const live = document.createElement("section");
      live.className = "pe-poll-live";
      const status = document.createElement("p");
      // "Question 1 is open to the room", read as it changes (the box appears with it: it cannot be the live region).
      const said = document.createElement("p");
      said.className = "pe-poll-hidden";
      said.setAttribute("aria-live", "polite");
      const rows = document.createElement("ul");
      rows.className = "pe-poll-rows";
      const total = document.createElement("p");
      total.setAttribute("aria-live", "polite");
      total.setAttribute("aria-atomic", "true");
      const actions = document.createElement("div");
      actions.className = "pe-poll-actions";
      const reveal = document.createElement("button");
      reveal.type = "button";
      const close = document.createElement("button");
      close.type = "button";
      actions.append(reveal, close);
      live.append(status, rows, total, actions);
      box.append(ask, said, live);
      ask.addEventListener("click", () => { model.asks = model.asks + 1; });
      reveal.addEventListener("click", () => { model.reveals = model.reveals + 1; });
      close.addEventListener("click", () => { model.closes = model.closes + 1; });
      const show = () => {
        box.hidden = !model.shown;
        ask.textContent = model.ask_label;
        ask.setAttribute("aria-label", model.ask_name);
        live.hidden = !model.status;
        live.setAttribute("aria-label", model.region);
        status.textContent = model.status_text;
        if (said.textContent !== model.status_text) said.textContent = model.status_text;
        total.textContent = model.total_text;
        reveal.textContent = model.reveal_label;
        reveal.disabled = model.status !== "open";
        close.textContent = model.close_label;
        const most = Math.max(1, ...model.counts);
        rows.replaceChildren(...model.labels.map((label, i) => {
          const row = document.createElement("li");
          const option = document.createElement("span");
          option.className = "pe-poll-option";
          option.textContent = String.fromCharCode(65 + i) + ". " + label;
          if (model.status === "revealed" && i === model.right) {
            const mark = document.createElement("strong");
            mark.className = "pe-poll-right";
            mark.textContent = " ✔ " + model.right_mark;
            option.append(mark);
          }
          const count = model.counts[i] || 0;
          const bar = document.createElement("span");
          bar.className = "pe-poll-bar";
          bar.setAttribute("aria-hidden", "true");  // the number beside it says the same in words
          const fill = document.createElement("span");
          fill.style.width = (100 * count / most) + "%";
          bar.append(fill);
          const number = document.createElement("span");
          number.className = "pe-poll-number";
          number.textContent = String(count);
          row.append(option, bar, number);
          return row;
        }));
      };
      model.on(["shown", "status", "labels", "counts", "right", "total_text", "status_text", "region", "ask_label",
                "ask_name", "reveal_label", "close_label", "right_mark"], show);
      show();
      return box;
    }
    """

    _stylesheets: ClassVar[list[str]] = [_CONTROLS_CSS]


class PollCard(PlainJSComponent):
    """A follower's card: the teacher's question, its options as a radio group, Send; then the answer marked.

    To the browser: ``shown``, the texts, ``labels``, ``answered`` (the radios are then locked), ``right`` (-1
    until revealed), ``mine`` (the option this page sent, -1 before), ``message`` and ``announce`` (both
    read by screen readers as they change). From it: ``choice`` (the option picked) and ``sends`` (a counter).
    """

    question = Child(doc="The question's prompt (a Prose passage of the quiz, in the reader's language).")
    shown = param.Boolean(default=False)
    poll = param.Integer(default=0, doc="The number of the poll shown (a new one clears the radios).")
    title = param.String(default="", doc="The card's heading, which names it (a region) for screen readers.")
    legend = param.String(default="")
    labels = param.List(default=[], item_type=str)
    send_label = param.String(default="")
    hide_label = param.String(default="", doc="Folds the card to its title (to read the page under it).")
    show_label = param.String(default="")
    right_mark = param.String(default="")
    yours_mark = param.String(default="")
    choice = param.Integer(default=-1)
    sends = param.Integer(default=0, bounds=(0, None))
    answered = param.Boolean(default=False)
    mine = param.Integer(default=-1)
    right = param.Integer(default=-1)
    explanation = param.String(default="")
    message = param.String(default="")
    announce = param.String(default="")

    _esm = RADIO_OPTION_JS + """
    export function render({ model }) {
      const card = document.createElement("section");
      card.className = "pe-poll-card";
      // Named by its title's words, not by aria-labelledby: a heading with an id would count as a section of the
      // page for what reads the page's sections (the room box, the tests).
      const title = document.createElement("h2");
      const id = "pe-poll-" + Math.random().toString(36).slice(2);
      const set = document.createElement("fieldset");
      const row = document.createElement("div");
      row.className = "pe-poll-row";
      const send = document.createElement("button");
      send.type = "button";
      const message = document.createElement("p");
      message.className = "pe-poll-message";
      message.setAttribute("aria-live", "polite");
      row.append(send, message);
      const why = document.createElement("p");
      why.className = "pe-poll-why";
      // Outside the card, always in the page: a live region that appears with its text is often not read.
      const announce = document.createElement("p");
      announce.className = "pe-poll-hidden";
      announce.setAttribute("aria-live", "assertive");
      // A student may fold the card to its title to read the page under it; a new question unfolds it.
      const head = document.createElement("div");
      head.className = "pe-poll-head";
      const fold = document.createElement("button");
      fold.type = "button";
      const body = document.createElement("div");
      body.id = id + "-body";
      fold.setAttribute("aria-controls", body.id);
      head.append(title, fold);
      body.append(model.get_child("question"), set, row, why);
      card.append(head, body);
      let folded = false;
      const showFold = () => {
        body.hidden = folded;
        fold.textContent = folded ? model.show_label : model.hide_label;
        fold.setAttribute("aria-expanded", String(!folded));
      };
      fold.addEventListener("click", () => { folded = !folded; showFold(); });
      const wrap = document.createElement("div");
      wrap.append(card, announce);
      send.addEventListener("click", () => { model.sends = model.sends + 1; });
      let drawn = -1;
      const draw = () => {
        // Drawn again on every change: the option that had the focus keeps it.
        const active = set.querySelector("input:focus");
        const kept = active ? active.value : null;
        const legend = document.createElement("legend");
        legend.textContent = model.legend;
        set.replaceChildren(legend);
        model.labels.forEach((label, i) => {
          const { line, input, words } = radioOption(model, id, i, String.fromCharCode(65 + i) + ". " + label);
          input.disabled = model.answered || model.right >= 0;
          const marks = [];
          if (model.right === i) marks.push("✔ " + model.right_mark);
          if (model.mine === i) marks.push(model.yours_mark);
          if (marks.length) {
            const mark = document.createElement("span");
            mark.className = "pe-poll-mark";
            mark.textContent = "(" + marks.join(", ") + ")";
            words.append(mark);
          }
          if (model.right === i) line.classList.add("pe-poll-is-right");
          set.append(line);
        });
        const again = kept === null ? null : set.querySelector(`input[value="${kept}"]`);
        if (again) again.focus({ preventScroll: true });
      };
      const show = () => {
        card.hidden = !model.shown;
        title.textContent = model.title;
        card.setAttribute("aria-label", model.title);
        send.textContent = model.send_label;
        send.hidden = model.answered || model.right >= 0;
        message.textContent = model.message;
        why.textContent = model.right >= 0 ? model.explanation : "";
        draw();
        showFold();
        if (model.shown && drawn !== model.poll) {
          drawn = model.poll;
          folded = false;
          showFold();
          // A new question: the reader's focus goes to its first option (without scrolling the page under the
          // card), once every property of the change has arrived (BokehJS sets them one by one). An option not
          // laid out yet cannot take the focus: tried again on the next frames, a few times at most.
          const focusFirst = (tries) => {
            const first = set.querySelector("input:not(:disabled)");
            if (!first || !model.shown) return;
            first.focus({ preventScroll: true });
            if (set.getRootNode().activeElement !== first && tries > 0) {
              requestAnimationFrame(() => focusFirst(tries - 1));
            }
          };
          setTimeout(() => focusFirst(10), 0);
        }
      };
      model.on(["shown", "poll", "title", "legend", "labels", "send_label", "hide_label", "show_label", "right_mark",
                "yours_mark",
                "answered", "mine", "right", "explanation", "message"], show);
      model.on("announce", () => { announce.textContent = model.announce; });
      show();
      announce.textContent = model.announce;
      return wrap;
    }
    """

    _stylesheets: ClassVar[list[str]] = [_CARD_CSS]


class PagePoll:
    """One page's part in its room's poll: the teacher's tools under the quiz's questions, or the follower's card.

    Follows the room box (``attach``): as a teacher it hears the poll and its counts, as a follower (or a
    student exploring on their own) the poll only. What it hears is a nudge: it reads the poll from the store
    and shows it, once per turn of the server's loop however many nudges came.
    """

    def __init__(self, state: ExplorerState) -> None:
        self.lang = state.lang
        self.page = secrets.token_urlsafe(16)  # this page's id in the room's polls: the server's, never the browser's
        self.store = pollstore.poll_store()
        self.box: RoomBox | None = None
        self.role = ""  # "teacher", "follower" or "" (no room)
        self.room = ""
        self.shown: pollstore.Poll | None = None
        self.unavailable = False  # the store did not answer the last call (components.pollstore: Redis down)
        self.listening = False  # whether the store tells this page of its room's poll (subscribed)
        self.last: pollstore.Poll | None = None  # the room's poll as last read from the store
        self.reopened = 0  # the number of a poll opened again after the store lost it (its status says so)
        self.controls: dict[int, PollControls] = {}
        self._scheduled = False
        self.prompt = Prose(section_prose("quiz", self.lang).parts[PROMPT.format(n=1)], values={}, margin=(0, 0),
                            name="poll_question_text")
        # Empty until a poll opens: a page in no poll carries no hidden question (nor its formulas to typeset).
        self.prompt.html = ""
        self.card = PollCard(question=self.prompt, legend=text(self.lang, "poll_legend"),
                             send_label=text(self.lang, "poll_send"), hide_label=text(self.lang, "poll_hide"),
                             show_label=text(self.lang, "poll_show"),
                             right_mark=text(self.lang, "poll_right_mark"),
                             yours_mark=text(self.lang, "poll_yours_mark"), name="poll_card", margin=0,
                             sizing_mode="stretch_width")
        self.card.param.watch(lambda _e: self.send(), "sends")
        self.doc = pn.state.curdoc
        if self.doc is not None and self.doc.session_context is not None:
            pn.state.on_session_destroyed(lambda _context: self._session_ended())

    # --- wiring ------------------------------------------------------------------------------------

    def attach(self, box: RoomBox) -> None:
        """Follow ``box`` (a ``components.room.RoomBox``): its mode and room say this page's part."""
        self.box = box
        box.panel.param.watch(lambda *_e: self._on_room(), ["mode", "room"])
        box.on_recreated.append(self._reopen_lost)
        self._on_room()

    def tools(self, section: CheckYourself, n: int) -> PollControls:
        """The teacher's tools under question ``n`` of ``section`` (shown only while this page is a teacher)."""
        controls = PollControls(ask_label=text(self.lang, "poll_ask"), ask_name=text(self.lang, "poll_ask_label", n=n),
                                reveal_label=text(self.lang, "poll_reveal"), close_label=text(self.lang, "poll_close"),
                                region=text(self.lang, "poll_teacher_region", n=n),
                                right_mark=text(self.lang, "poll_right_mark"), name=f"poll_teacher_{n}",
                                sizing_mode="stretch_width", margin=(0, 10))
        controls.param.watch(lambda _e: self.ask(n, section.state.d_model), "asks")
        controls.param.watch(lambda _e: self.reveal(n), "reveals")
        controls.param.watch(lambda _e: self.close(n), "closes")
        self.controls[n] = controls
        self.refresh()
        return controls

    def _on_room(self) -> None:
        panel = self.box.panel
        role = "teacher" if panel.mode == "teacher" else "follower" if panel.mode in ("following", "detached") else ""
        room = panel.room if role else ""
        if (role, room) != (self.role, self.room):
            self._listen(False)
            self.role, self.room = role, room
            self._listen(True)
        self.refresh()

    def _topics(self) -> tuple[str, ...]:
        if self.role == "teacher":
            return (pollstore.POLL, pollstore.COUNTS)
        return (pollstore.POLL,) if self.role == "follower" else ()

    def _listen(self, on: bool) -> None:
        if self.store is None or not self.room:
            self.listening = False
            return
        heard = True
        for topic in self._topics():
            heard = self._stored(self.store.subscribe if on else self.store.unsubscribe, self.room, topic,
                                 self._nudge, default=False) is not False and heard
        # A page that could not listen (the store out of reach) tries again at its next refresh.
        self.listening = on and heard

    def _nudge(self, room: str) -> None:
        if room != self.room:
            return
        if self.doc is None:
            self.refresh()
        elif not self._scheduled:
            self._scheduled = True
            self.doc.add_next_tick_callback(self._run)

    def _run(self) -> None:
        self._scheduled = False
        with set_curdoc(self.doc):
            # Panel drops held changes to a session it does not count as connected yet, and counts one only from
            # the browser's document_ready (sent once every figure has drawn) or a change it sends: a follower's
            # page on /quiz, which has no figure and sends nothing, would never show the poll.
            mark_connected()
            with pn.io.hold(self.doc):
                self.refresh()

    def _session_ended(self) -> None:
        self._listen(False)
        self.doc = None

    def _stored(self, call: Callable[..., T], *args: object, default: T) -> T:
        """``call(*args)`` on the store; while the store does not answer (Redis down or stalled), ``default``, one
        log line, and a notice on the page instead of an error: the room's poll waits, the page goes on."""
        try:
            result = call(*args)
        except Exception as error:
            log.warning("the poll store of room %s did not answer: %s", self.room, type(error).__name__)
            self.unavailable = True
            self._say_unavailable()
            return default
        if self.unavailable:
            self.unavailable = False
            self._say_unavailable()
        return result

    def _say_unavailable(self) -> None:
        message = text(self.lang, "poll_unavailable") if self.unavailable else ""
        if self.role == "follower" and self.card.shown:
            self.card.message = message
        for controls in self.controls.values():
            if controls.shown:
                controls.status_text = message or controls.status_text

    # --- the teacher's side --------------------------------------------------------------------------

    def _secret(self) -> str:
        """The room's secret, only on the page that drives the room (a follower's page has none)."""
        box = self.box
        if box is None or self.role != "teacher" or getattr(box, "mode", "") != "teacher":
            return ""
        return getattr(box, "secret", "") or ""

    def ask(self, n: int, d_model: int) -> bool:
        """Open question ``n`` (its options for ``d_model``) to the room; only the room's teacher can."""
        secret = self._secret()
        if self.store is None or not secret:
            log.warning("refused to open a poll: this page does not drive a room")
            return False
        labels = question_labels(self.lang, n, d_model)
        opened = self._stored(self.store.open, self.room, secret, n, len(labels), question_right(n, d_model), d_model,
                              default=None)
        self.refresh()
        return opened is not None

    def _reopen_lost(self) -> None:
        """The room was re-created in a store that came back empty: open again the poll this page last read (and
        reveal it again if it was), under a number past the lost one; the answers given before are gone, and the
        teacher is told so. Nothing to do without a live poll, or where the store still has one."""
        lost, secret = self.last, self._secret()
        if lost is None or not lost.live or not secret or self.store is None:
            return
        if self._stored(self.store.current, self.room, default=lost) is not None:
            return
        poll = self._stored(self.store.open, self.room, secret, lost.question, lost.options, lost.right, lost.d_model,
                            lost.number, default=None)
        if poll is not None and lost.status == "revealed":
            self._stored(self.store.reveal, self.room, secret, poll.number, default=False)
        self.reopened = poll.number if poll is not None else 0
        self.refresh()

    def _own(self, n: int) -> pollstore.Poll | None:
        if self.store is None or not self.room:
            return None
        poll = self._stored(self.store.current, self.room, default=None)
        return poll if poll is not None and poll.question == n and poll.live else None

    def reveal(self, n: int) -> bool:
        """Show question ``n``'s answer and explanation on every page of the room."""
        secret, poll = self._secret(), self._own(n)
        done = bool(secret and poll and self._stored(self.store.reveal, self.room, secret, poll.number, default=False))
        self.refresh()
        return done

    def close(self, n: int) -> bool:
        """Close question ``n``'s poll: it leaves every page of the room."""
        secret, poll = self._secret(), self._own(n)
        done = bool(secret and poll and self._stored(self.store.close, self.room, secret, poll.number, default=False))
        self.refresh()
        return done

    # --- the follower's side -------------------------------------------------------------------------

    def send(self) -> str:
        """Send the option picked on the card; says on the card what became of it."""
        poll = self.shown
        if self.role != "follower" or self.store is None or poll is None:
            return pollstore.NOT_OPEN
        choice = self.card.choice
        if not isinstance(choice, int) or not 0 <= choice < poll.options:
            self.card.message = text(self.lang, "poll_pick_first")
            return pollstore.INVALID
        result = self._stored(self.store.answer, self.room, poll.number, self.page, choice, default="")
        if not result:
            return pollstore.NOT_OPEN  # the store did not answer: said on the card, the choice kept for a new try
        if result == pollstore.COUNTED:
            self.card.param.update(answered=True, mine=choice, message=text(self.lang, "poll_sent"))
        elif result == pollstore.REPEAT:
            self.card.param.update(answered=True, message=text(self.lang, "poll_repeat"))
        elif result == pollstore.NOT_OPEN:
            self.card.message = text(self.lang, "poll_not_open")
        else:
            self.card.message = text(self.lang, "poll_pick_first")
        return result

    # --- both ----------------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Show the room's poll as the store has it now (as shown before while the store does not answer)."""
        if self.store is None or not self.room:
            poll = None
        else:
            if not self.listening:
                self._listen(True)
            poll = self._stored(self.store.current, self.room, default=self.last)
            self.last = poll
        poll = poll if poll is not None and poll.live else None
        self._show_teacher(poll if self.role == "teacher" else None)
        self._show_follower(poll if self.role == "follower" else None)
        if self.unavailable:
            self._say_unavailable()

    def _show_teacher(self, poll: pollstore.Poll | None) -> None:
        for n, controls in self.controls.items():
            if poll is None or poll.question != n:
                controls.param.update(shown=self.role == "teacher", status="", labels=[], counts=[], right=-1,
                                      total_text="", status_text="")
                continue
            counts = (self._stored(self.store.counts, self.room, poll.number, default=controls.counts)
                      or [0] * poll.options)
            status_key = "poll_open_status" if poll.status == "open" else "poll_revealed_status"
            status_text = text(self.lang, status_key, n=n)
            if poll.number == self.reopened:
                status_text += " " + text(self.lang, "poll_reopened")
            controls.param.update(shown=True, status=poll.status, labels=question_labels(self.lang, n, poll.d_model),
                                  counts=counts, right=poll.right if poll.status == "revealed" else -1,
                                  total_text=text(self.lang, "poll_total", total=sum(counts)),
                                  status_text=status_text)

    def _show_follower(self, poll: pollstore.Poll | None) -> None:
        card = self.card
        if poll is None:
            if card.shown:
                card.param.update(shown=False, announce="")
                self.prompt.html = ""
            self.shown = None
            return
        labels = question_labels(self.lang, poll.question, poll.d_model)
        if self.shown is None or self.shown.number != poll.number:
            self.prompt.param.update(html=section_prose("quiz", self.lang).parts[PROMPT.format(n=poll.question)].html,
                                     values={"d_model": str(poll.d_model)})
            card.param.update(poll=poll.number, title=text(self.lang, "poll_card_title", n=poll.question),
                              labels=labels, choice=-1, answered=False, mine=-1, right=-1, explanation="",
                              message="", announce=text(self.lang, "poll_opened", n=poll.question), shown=True)
        if poll.status == "revealed" and card.right != poll.right:
            card.param.update(right=poll.right,
                              explanation=question_explanation(self.lang, poll.question, poll.d_model, poll.right),
                              announce=text(self.lang, "poll_answer_revealed", answer=labels[poll.right]))
        self.shown = poll


def page_poll(state: ExplorerState) -> PagePoll:
    """The ``PagePoll`` of the page whose state is ``state`` (made on first call; kept on the state, the page's
    one object that both the room box and the quiz section hold)."""
    found = state.__dict__.get("_pe_page_poll")
    if found is None:
        found = PagePoll(state)
        state.__dict__["_pe_page_poll"] = found
    return found


def _embedded(state: ExplorerState) -> bool:
    # As components.room.room_box: an embed has no room box, so never a room.
    return bool(state.controls) or script_embedded()


def poll_tools(section: CheckYourself, n: int) -> PollControls | None:
    """For ``components.lesson.quiz.QUESTION_TOOLS``: the teacher's poll tools under question ``n``."""
    return None if _embedded(section.state) else page_poll(section.state).tools(section, n)


def poll_card(state: ExplorerState, kind: str) -> PollCard | None:
    """For ``app.extras``' page extras: the follower's card, on every page that has a room box."""
    return None if _embedded(state) else page_poll(state).card


def room_box_and_poll(state: ExplorerState, kind: str) -> RoomBox | None:
    """For ``app.extras.TOP_TOOLS``: ``components.room.room_box``, with the page's poll following it."""
    box = room_box(state, kind)
    if box is not None:
        page_poll(state).attach(box)
    return box
