"""A class poll in Chromium, one process (the in-process bus): a teacher asks quiz question 1, two followers
(one in Spanish, one in English, one on a phone's width) answer on their own screens, the teacher's counts
move, the teacher reveals and both followers see the right answer marked in words and its explanation."""

from __future__ import annotations

import pytest
import redis
from playwright.sync_api import expect

from app.model.strings import text
from components.lesson.quiz import FIXED, question_labels
from components.roombus import ROOM_TTL_S
from tests.browser.test_a11y_browser import _axe
from tests.helpers import model_property, wait_until
from tests.servers import keys_per_process, redis_server, run_local

pytestmark = pytest.mark.browser

#: The follower's card: its box on screen (through shadow roots), or null when absent or hidden.
_CARD_BOX = """() => {
  let found = null;
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.matches(".pe-poll-card") && !el.hidden) found = el.getBoundingClientRect().toJSON();
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return found;
}"""


def open_page(browser, url: str, size: tuple[int, int], locale: str, errors: list[str], key: str | None = None):
    """A page of its own browser context (``key``: nginx's cookie that picks the app process)."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale=locale)
    if key is not None:
        context.add_cookies([{"name": "pe_backend", "value": key, "url": url}])
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(url)
    wait_until(lambda: model_property(page, "room_box", "mode") not in (None, ""), timeout=40,
               message=f"{url} was not drawn")
    return page


def a_poll(browser, base: str, teacher_key: str | None = None, follower_key: str | None = None,
           check_axe: bool = True) -> None:
    """The teacher asks question 1; follower A (es, 390 px, the mouse) picks option 0, follower B (en, the
    keyboard) option 1; the teacher's counts read 1 and 1; the reveal marks the right option on both cards."""
    errors: list[str] = []
    teacher = open_page(browser, f"{base}/quiz?lang=en", (1280, 800), "en-US", errors, teacher_key)
    pages = [teacher]
    try:
        ask = teacher.get_by_role("button", name=text("en", "poll_ask_label", n=1))
        expect(ask).to_be_hidden()  # no room yet: no poll
        teacher.get_by_role("button", name=text("en", "room_start")).click()
        link = wait_until(lambda: model_property(teacher, "room_link", "text"), message="no join link")
        link = base + link[link.index("/quiz"):]  # through the address the test reaches (nginx's, in the stack)
        a = open_page(browser, link.replace("?", "?lang=es&"), (390, 844), "es-ES", errors, follower_key)
        b = open_page(browser, link.replace("?", "?lang=en&"), (1280, 800), "en-US", errors, follower_key)
        pages += [a, b]
        for follower in (a, b):
            wait_until(lambda follower=follower: model_property(follower, "room_box", "mode") == "following",
                       timeout=20, message="a follower did not join")

        ask.click()
        wait_until(lambda: model_property(teacher, "poll_teacher_1", "status") == "open", message="not opened")
        for follower, lang, option in ((a, "es", 0), (b, "en", 1)):
            card = follower.get_by_role("region", name=text(lang, "poll_card_title", n=1))
            expect(card).to_be_visible(timeout=20_000)
            expect(follower.get_by_text(text(lang, "poll_opened", n=1))).to_be_attached()  # said (aria-live)
            labels = question_labels(lang, 1, 32)
            group = card.get_by_role("group", name=text(lang, "poll_legend"))
            radio = group.get_by_role("radio", name=f"{'ABCD'[option]}. {labels[option]}")
            if option == 0:
                radio.check()
                card.get_by_role("button", name=text(lang, "poll_send")).click()
            else:  # by keyboard: the question took the focus on its first option; the arrow picks the next one
                expect(group.get_by_role("radio").first).to_be_focused()
                follower.keyboard.press("ArrowDown")
                expect(radio).to_be_checked()
                follower.keyboard.press("Tab")
                expect(card.get_by_role("button", name=text(lang, "poll_send"))).to_be_focused()
                follower.keyboard.press("Enter")
            expect(card.get_by_text(text(lang, "poll_sent"))).to_be_visible()
        # The phone's card folds to its title, to read the page under it, and unfolds.
        card_a = a.get_by_role("region", name=text("es", "poll_card_title", n=1))
        card_a.get_by_role("button", name=text("es", "poll_hide")).click()
        expect(card_a.get_by_role("group", name=text("es", "poll_legend"))).to_be_hidden()
        card_a.get_by_role("button", name=text("es", "poll_show")).click()
        expect(card_a.get_by_role("group", name=text("es", "poll_legend"))).to_be_visible()
        # The phone's card is on screen and within its width, wherever the page is scrolled.
        a.mouse.wheel(0, 1500)
        wait_until(lambda: a.evaluate("window.scrollY") > 0, timeout=10, message="the phone's page did not scroll")
        box = a.evaluate(_CARD_BOX)
        assert box and box["top"] >= 0 and box["left"] >= 0 and box["right"] <= 390 and box["bottom"] <= 844, box

        wait_until(lambda: model_property(teacher, "poll_teacher_1", "counts") == [1, 1, 0, 0], timeout=20,
                   message="the teacher's counts did not read 1 and 1")
        live = teacher.get_by_role("region", name=text("en", "poll_teacher_region", n=1))
        expect(live.get_by_text(text("en", "poll_total", total=2))).to_be_visible()
        if check_axe:
            _axe(teacher, "teacher with a poll open")
            _axe(a, "follower's card, answered (es, 390 px)")

        live.get_by_role("button", name=text("en", "poll_reveal")).click()
        right = FIXED[1][1]
        for follower, lang in ((a, "es"), (b, "en")):
            card = follower.get_by_role("region", name=text(lang, "poll_card_title", n=1))
            marked = card.get_by_text(f"{'ABCD'[right]}. {question_labels(lang, 1, 32)[right]}")
            expect(marked).to_contain_text(text(lang, "poll_right_mark"), timeout=20_000)
            expect(card.get_by_text(text(lang, f"quiz_1_{FIXED[1][0][right]}_why"))).to_be_visible()
            answer = question_labels(lang, 1, 32)[right]
            expect(follower.get_by_text(text(lang, "poll_answer_revealed", answer=answer))).to_be_attached()

        if check_axe:
            _axe(b, "follower's card, revealed (en)")
        live.get_by_role("button", name=text("en", "poll_close")).click()
        for follower, lang in ((a, "es"), (b, "en")):
            expect(follower.get_by_role("region", name=text(lang, "poll_card_title", n=1))).to_be_hidden(timeout=20_000)
    finally:
        for page in pages:
            page.context.close()
    assert errors == []


def test_a_teacher_asks_the_room_and_two_followers_answer(browser, app_url):
    a_poll(browser, app_url)


def test_a_poll_across_two_processes_through_redis(browser):
    """The teacher on one app process, both followers on the other (nginx's cookie), the poll in Redis."""
    with redis_server() as redis_url, run_local(procs=2, redis_url=redis_url) as url:
        teacher_key, follower_key = keys_per_process(url, 2).values()
        a_poll(browser, url, teacher_key, follower_key, check_axe=False)
        client = redis.Redis.from_url(redis_url)
        polls = list(client.scan_iter("pe:room:*:poll"))
        assert len(polls) == 1 and client.hget(polls[0], "status") == b"closed"
        assert 0 < client.ttl(polls[0]) <= ROOM_TTL_S
