"""A whole class in Chromium: nginx in front of two app processes (deploy/run-local) with Redis.

The lesson through nginx moves with its sliders and builds each session once; a teacher on one
process drives followers on the other; a student's forged claim to drive is refused; a follower
detaches and follows again; a follower whose process is killed comes back by itself, following.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections import Counter

import pytest
import redis

from app.model.strings import text
from tests.helpers import model_property, press, source_data, wait_for_source, wait_until
from tests.servers import get, keys_per_process, redis_process, run_local, run_local_status, sessions_of

pytestmark = pytest.mark.browser


#: The stack's redis-server (tests/servers.RedisProcess), for the test that restarts it.
STACK_REDIS: list = []


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """(nginx's URL, Redis's URL, {pid: cookie key}, run-local's status file) for two app processes behind
    nginx, rooms through Redis."""
    status_file = tmp_path_factory.mktemp("run-local") / "status.json"
    with redis_process() as server, run_local(procs=2, redis_url=server.url, status_file=status_file) as url:
        STACK_REDIS.append(server)
        yield url, server.url, keys_per_process(url, 2), status_file


def built(url: str, keys: dict[int, str]) -> Counter:
    """How often each session (hashed id) was built, over both processes."""
    return Counter(h for key in keys.values() for h in sessions_of(url, f"pe_backend={key}")["sessions"])


def new_page(browser, url: str, locale: str, key: str | None = None):
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 800})
    if key is not None:
        context.add_cookies([{"name": "pe_backend", "value": key, "url": url}])
    return context.new_page()


def test_the_lesson_through_nginx_moves_and_each_session_is_built_once(browser, stack):
    url, _redis_url, keys, _status_file = stack
    before = built(url, keys)
    pages = [new_page(browser, url, "en-US") for _ in range(3)]
    for page in pages:
        page.goto(f"{url}/?lang=en")
        wait_for_source(page, "order_outputs", timeout=30)
    first = pages[0]
    old = source_data(first, "order_outputs")["with_pe"].tolist()
    press(first, text("en", "d_model"), "ArrowRight")
    wait_for_source(first, "order_outputs", lambda d: d["with_pe"].tolist() != old)
    # nginx set its cookie on each browser, and each page's session was built once, by one process.
    for page in pages:
        assert [c["name"] for c in page.context.cookies()] == ["pe_backend"]
    after = built(url, keys)
    new = after - before
    assert sum(new.values()) == 3 and set(new.values()) == {1}
    assert max(after.values()) == 1
    for page in pages:
        page.context.close()


def test_followers_on_the_other_process_follow_the_teacher(browser, stack):
    url, redis_url, keys, _status_file = stack
    (_, teacher_key), (_, student_key) = sorted(keys.items())
    teacher = new_page(browser, url, "en-US", teacher_key)
    teacher.goto(f"{url}/explore?lang=en")
    wait_for_source(teacher, "distance_marker", timeout=30)
    teacher.get_by_role("button", name=text("en", "room_start")).click()
    link = wait_until(lambda: model_property(teacher, "room_link", "text"), message="no join link")
    assert re.fullmatch(rf"{re.escape(url)}/explore\?follow=[a-hjkmnp-z2-9]{{6}}", link), link
    room = link.rsplit("=", 1)[1]
    status, headers, svg = get(f"{url}/room_qr.svg?room={room}&path=/explore")
    assert status == 200 and headers["Content-Type"] == "image/svg+xml" and link.encode() in svg

    followers = [new_page(browser, url, "es-ES", student_key) for _ in range(2)]
    for follower in followers:
        follower.goto(link)
        wait_for_source(follower, "distance_marker", timeout=30)
        wait_until(lambda f=follower: model_property(f, "room_box", "message") == text("es", "room_following",
                                                                                        room=room))
        assert follower.evaluate("() => document.documentElement.lang") == "es"

    def k_of(page) -> int:
        return int(source_data(page, "distance_marker")["k"][0])

    press(teacher, text("en", "k"), "ArrowRight", times=2)
    for follower in followers:
        wait_until(lambda f=follower: k_of(f) == 5, timeout=15, message="a follower did not follow k")
        assert follower.get_by_text(text("es", "room_detach")).is_visible()  # still in Spanish

    # A student forges a claim to drive: refused, said on the page; the student's own moves stay theirs.
    forger, other = followers
    forger.evaluate("(room) => { Bokeh.documents[0].get_model_by_name('room_box').claim = room + ':forged'; }", room)
    wait_until(lambda: model_property(forger, "room_box", "message") == text("es", "room_refused", room=room),
               message="the forged claim was not refused on the page")
    press(forger, text("es", "k"), "ArrowLeft", times=3)
    wait_until(lambda: k_of(forger) == 2, message="the student's own slider did not move their page")
    state = json.loads(redis.Redis.from_url(redis_url).get(f"pe:room:{room}:state"))
    assert state["values"]["k"] == "5", "a student's move reached the room"
    assert k_of(other) == 5 and k_of(teacher) == 5

    # Explore on my own, then follow again.
    other.get_by_role("button", name=text("es", "room_detach")).click()
    wait_until(lambda: model_property(other, "room_box", "message") == text("es", "room_detached", room=room))
    press(other, text("es", "k"), "ArrowLeft")
    wait_until(lambda: k_of(other) == 4)
    press(teacher, text("en", "k"), "ArrowRight")
    wait_until(lambda: k_of(forger) == 6, timeout=15, message="the follower did not get the teacher's move")
    assert k_of(other) == 4, "a detached student still follows"
    other.get_by_role("button", name=text("es", "room_follow")).click()
    wait_until(lambda: k_of(other) == 6, timeout=15, message="follow again did not jump to the teacher's state")
    for page in (teacher, *followers):
        page.context.close()


def reloaded(page) -> bool:
    """Whether ``page`` is a new one (the marker set on the old one is gone)."""
    try:
        return page.evaluate("() => window.__pe_old_page === undefined")
    except Exception:  # Playwright's error while the page navigates
        return False


def test_a_followers_process_killed_mid_lesson_its_page_comes_back_following_by_itself(browser, stack):
    url, _redis_url, keys, status_file = stack
    (_, teacher_key), (student_pid, student_key) = sorted(keys.items())
    teacher = new_page(browser, url, "en-US", teacher_key)
    teacher.goto(f"{url}/explore?lang=en")
    wait_for_source(teacher, "distance_marker", timeout=30)
    teacher.get_by_role("button", name=text("en", "room_start")).click()
    link = wait_until(lambda: model_property(teacher, "room_link", "text"), message="no join link")
    room = link.rsplit("=", 1)[1]
    student = new_page(browser, url, "es-ES", student_key)
    student.goto(link)
    wait_for_source(student, "distance_marker", timeout=30)
    following = text("es", "room_following", room=room)
    wait_until(lambda: model_property(student, "room_box", "message") == following)

    def k_of(page) -> int:
        return int(source_data(page, "distance_marker")["k"][0])

    k = k_of(teacher)
    press(teacher, text("en", "k"), "ArrowRight", times=2)
    wait_until(lambda: k_of(student) == k + 2, timeout=15, message="the follower did not follow k")
    for page in (teacher, student):
        page.evaluate("() => { window.__pe_old_page = true; }")

    victim = next(app for app in run_local_status(status_file)["apps"] if app["pid"] == student_pid)
    killed = time.monotonic()
    os.kill(victim["pid"], signal.SIGKILL)
    # Its page comes back by itself (served by the other process meanwhile, or by the restarted one) ...
    wait_until(lambda: reloaded(student), timeout=30, interval=0.1,
               message="the follower's page did not reload by itself")
    wait_for_source(student, "distance_marker", timeout=30)
    # ... following the room again, at the teacher's state, and in the student's own language.
    wait_until(lambda: model_property(student, "room_box", "message") == following, timeout=20,
               message=lambda: f"the reloaded page does not follow the room: at {student.url}, "
                               f"{model_property(student, 'room_box', 'mode')!r}, "
                               f"{model_property(student, 'room_box', 'message')!r}")
    wait_until(lambda: k_of(student) == k + 2, timeout=15, message="the reloaded page lost the teacher's k")
    assert student.evaluate("() => document.documentElement.lang") == "es"
    print(f"the follower follows again {time.monotonic() - killed:.1f} s after its process was killed")
    press(teacher, text("en", "k"), "ArrowRight")
    wait_until(lambda: k_of(student) == k + 3, timeout=15, message="the reloaded page does not follow k")
    # The teacher's page, on the other process, never lost its connection.
    assert not reloaded(teacher)
    assert not teacher.evaluate("() => window.__pe_connection_lost === true")
    # And run-local started the killed process again.
    wait_until(lambda: any(app["port"] == victim["port"] and app["pid"] not in (None, victim["pid"])
                           and app["answering"] for app in run_local_status(status_file)["apps"]),
               timeout=10, message="the killed app process was not started again")
    for page in (teacher, student):
        page.context.close()


#: Whether an ``aria-live`` element of the page (through shadow roots) says exactly ``text``.
_LIVE_SAYS = """(text) => {
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.hasAttribute("aria-live") && el.textContent === text) return true;
      if (el.shadowRoot && walk(el.shadowRoot)) return true;
    }
    return false;
  };
  return walk(document);
}"""


def test_a_redis_restart_is_said_on_both_sides_and_the_room_goes_on(browser, stack):
    """Redis (no persistence) restarts under a running room: the teacher's and the follower's boxes say that
    the room's connection is lost (aria-live), then that it is back; the room, re-created by the teacher's
    page, carries the teacher's next move to the follower on the other process."""
    url, redis_url, keys, _status_file = stack
    server = STACK_REDIS[-1]
    (_, teacher_key), (_, student_key) = sorted(keys.items())
    teacher = new_page(browser, url, "en-US", teacher_key)
    student = new_page(browser, url, "es-ES", student_key)
    try:
        teacher.goto(f"{url}/explore?lang=en")
        wait_for_source(teacher, "distance_marker", timeout=30)
        teacher.get_by_role("button", name=text("en", "room_start")).click()
        link = wait_until(lambda: model_property(teacher, "room_link", "text"), message="no join link")
        room = link.rsplit("=", 1)[1]
        student.goto(link)
        wait_for_source(student, "distance_marker", timeout=30)
        wait_until(lambda: model_property(student, "room_box", "mode") == "following", timeout=20)
        server.stop()
        wait_until(lambda: teacher.evaluate(_LIVE_SAYS, text("en", "room_down_teacher", room=room)), timeout=20,
                   message="the teacher was not told that the room's connection is lost")
        wait_until(lambda: student.evaluate(_LIVE_SAYS, text("es", "room_down_follower", room=room)), timeout=20,
                   message="the follower was not told that the room's connection is lost")
        server.start()
        wait_until(lambda: teacher.evaluate(_LIVE_SAYS, text("en", "room_back_teacher", room=room)), timeout=30,
                   message="the teacher was not told that the connection is back")
        wait_until(lambda: student.evaluate(_LIVE_SAYS, text("es", "room_back_follower", room=room)), timeout=30,
                   message="the follower was not told that the connection is back")
        assert redis.Redis.from_url(redis_url).exists(f"pe:room:{room}"), "the room was not re-created"
        k = int(source_data(teacher, "distance_marker")["k"][0])
        press(teacher, text("en", "k"), "ArrowRight")
        wait_until(lambda: int(source_data(student, "distance_marker")["k"][0]) == k + 1, timeout=20,
                   message="the follower did not follow the teacher's move after the restart")
    finally:
        teacher.context.close()
        student.context.close()
