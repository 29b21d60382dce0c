"""Joining a room by its code, without a browser: how a typed code is read, and what the box on ``/`` answers
(the in-process bus)."""

from __future__ import annotations

import json

import pytest

from app.model.state import ROOM_ALPHABET, ExplorerState, room_code, valid_room_id
from app.model.strings import text
from components import roombus as rooms
from components.room import RoomBox, room_page, typing_place


@pytest.mark.parametrize("typed", ["ab3k9x", "AB3K9X", "  ab3k9x\n", "ab3 k9x", "AB3-K9X", "ab 3k 9x",
                                   "ab3\u2013k9x", "\uff41\uff42\uff13\uff4b\uff19\uff58"])
def test_a_typed_code_is_read_without_case_spaces_or_dashes(typed):
    assert room_code(typed) == "ab3k9x"


@pytest.mark.parametrize("typed", ["", "   ", "ab3k9", "ab3k9xy", "ab3k90", "ab3k9o", "ab3k91", "ab3k9l", "ab3k9i",
                                   "<b>x", "<b>x</b>", "ab3k9x;", "ab3_k9x", "ab3.k9x", "ab3k9x" * 20, "ab3k9\u00e9",
                                   None, 123456, ["ab3k9x"]])
def test_anything_else_is_refused_and_no_look_alike_is_guessed(typed):
    assert room_code(typed) == ""


def test_every_room_id_reads_as_itself():
    made = {rooms.new_room_id() for _ in range(100)}
    assert all(room_code(room) == room and room_code(room.upper()) == room for room in made)
    assert all(valid_room_id(room_code(ch * 6)) for ch in ROOM_ALPHABET)
    assert not set("01ilo") & set(ROOM_ALPHABET)  # why nothing is mended: the look-alikes are all missing


def send(box: RoomBox, typed: str) -> None:
    """What the browser sends when the reader presses Join (or Enter)."""
    box.join.typed = typed
    box.join.asks += 1


def test_the_box_is_on_the_lesson_only_and_only_while_the_page_is_in_no_room(local_bus):
    assert RoomBox(ExplorerState(lang="en"), "view").join is None
    assert RoomBox(ExplorerState(lang="en"), "section").join is None
    assert RoomBox(ExplorerState(lang="en", present=True), "lesson").join is None
    teacher = RoomBox(ExplorerState(lang="en"), "lesson")
    assert teacher.join.shown and teacher.join.label == text("en", "room_code")
    assert teacher.join in teacher.panel.objects
    teacher.start_room()
    assert teacher.mode == "teacher" and not teacher.join.shown
    student = RoomBox(ExplorerState(lang="es", follow=teacher.room), "lesson")
    assert student.mode == "following" and not student.join.shown
    student.detach_from_room()
    assert not student.join.shown  # "Follow again" is what a detached student needs
    teacher.end_room()
    assert teacher.join.shown
    lost = RoomBox(ExplorerState(lang="en", follow="zzzzzz"), "lesson")
    assert lost.mode == "missing" and lost.join.shown  # a wrong link: the right code can be typed here


def test_a_running_rooms_code_opens_the_teachers_page_following_it(local_bus):
    teacher = RoomBox(ExplorerState(lang="en"), "lesson")
    teacher.start_room()
    student = RoomBox(ExplorerState(lang="es"), "lesson")
    send(student, f" {teacher.room.upper()} ")
    assert student.join.go == f"/?follow={teacher.room}&lang=es"
    assert student.join.message == text("es", "room_joining", room=teacher.room) and not student.join.invalid

    # The teacher reads another section, then another page: the code opens where the teacher is.
    teacher.panel.location = "/#hands"
    send(student, teacher.room)
    assert student.join.go == f"/?follow={teacher.room}&lang=es#hands"
    teacher.panel.location = "/explore#"
    send(student, teacher.room)
    assert student.join.go == f"/explore?follow={teacher.room}&lang=es"
    assert json.loads(local_bus.latest(teacher.room))["path"] == "/explore"


def test_a_wrong_code_is_said_and_nothing_opens(local_bus):
    student = RoomBox(ExplorerState(lang="en"), "lesson")
    send(student, "<b>x")
    assert student.join.go == "" and student.join.invalid
    assert student.join.message == text("en", "room_join_invalid")
    assert "<" not in student.join.message  # what was typed is never repeated
    send(student, "zzzzzz")
    assert student.join.go == ""
    assert student.join.message == text("en", "room_join_missing", room="zzzzzz")

    teacher = RoomBox(ExplorerState(lang="en"), "lesson")
    teacher.start_room()
    room = teacher.room
    teacher.end_room()
    send(student, room)
    assert student.join.go == "" and student.join.message == text("en", "room_join_closed", room=room)


def test_a_code_sent_while_the_page_is_in_a_room_is_ignored(local_bus):
    teacher = RoomBox(ExplorerState(lang="en"), "lesson")
    teacher.start_room()
    other = RoomBox(ExplorerState(lang="en"), "lesson")
    other.start_room()
    send(teacher, other.room)  # a hostile page: the box is hidden in a teacher's page
    assert teacher.join.go == "" and teacher.mode == "teacher"


def test_without_rooms_there_is_no_box_to_type_in(monkeypatch):
    monkeypatch.delenv("PE_REDIS_URL", raising=False)
    monkeypatch.setenv("PE_PROCESSES", "2")
    rooms.reset_bus()
    try:
        box = RoomBox(ExplorerState(lang="en"), "lesson")
        assert box.mode == "unavailable" and not box.join.shown
        assert box.panel.message == text("en", "room_needs_redis")
        send(box, "ab3k9x")
        assert box.join.go == "" and box.join.message == ""
    finally:
        rooms.reset_bus()


def test_the_rooms_page_is_one_of_the_apps_and_its_section_a_slug():
    assert room_page("ab3k9x", "en", None) == "/?follow=ab3k9x&lang=en"
    forged = {"path": "//evil.example/x", "section": "a\"><script>", "values": {}, "seq": 1, "t": 0.0}
    assert room_page("ab3k9x", "es", forged) == "/?follow=ab3k9x&lang=es"
    assert room_page("ab3k9x", "en", {"closed": True, "path": "", "section": ""}) == "/?follow=ab3k9x&lang=en"
    assert room_page("ab3k9x", "en", {"path": "/shift", "section": "shift"}) == "/shift?follow=ab3k9x&lang=en#shift"


def test_the_qr_screen_carries_the_code_and_where_to_type_it(local_bus):
    teacher = RoomBox(ExplorerState(lang="es"), "explore")
    teacher.start_room()
    assert teacher.link.code == teacher.room and teacher.link.code_label == text("es", "room_code")
    before, address, after = teacher.link.where
    assert address == "localhost"  # the lesson's page, where the box is: no path, no scheme to type
    assert before + address + after == text("es", "room_code_where", address="localhost")
    assert typing_place("en", "https://class.example.org:8443")[1] == "class.example.org:8443"
