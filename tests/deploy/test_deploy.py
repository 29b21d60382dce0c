"""deploy/ without a browser: the nginx configuration, the compose file, run-local's start and stop, and
run-local as a supervisor (a killed app process or nginx is started again, the others keep running)."""

from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from deploy import run_local as supervisor
from deploy.nginx import render
from tests.helpers import wait_until
from tests.servers import (
    ROOT,
    answers,
    get,
    keys_per_process,
    live_members,
    need,
    run_local,
    run_local_status,
    sessions_of,
)

#: The issue's bound: a killed process answers again (through its port and through nginx) within this.
BACK_WITHIN_S = 10.0

COMPOSE_RENDER = (["app1:5006", "app2:5006"], "80", "/tmp")


def test_compose_nginx_config_is_the_template_rendered():
    backends, listen, state_dir = COMPOSE_RENDER
    expected = render(backends, listen, state_dir, error_log="/dev/stderr", access_log="/dev/stdout")
    assert (ROOT / "deploy" / "nginx-compose.conf").read_text() == expected


def test_compose_file_runs_the_image_behind_nginx_with_redis():
    compose = (ROOT / "deploy" / "compose.yaml").read_text()
    for needle in ("image: pe-explorable", "PE_REDIS_URL: redis://redis:6379/0", "PE_USE_XHEADERS: \"1\"",
                   "PE_PROCESSES: \"2\"", "PE_ALLOWED_ORIGINS: ${PUBLIC_NAME",
                   "./nginx-compose.conf:/etc/nginx/nginx.conf"):
        assert needle in compose, needle
    assert re.findall(r"^  (app\d+): \*app$", compose, re.M) == ["app1", "app2"]


def test_config_pins_by_a_cookie_not_by_address():
    config = render(["127.0.0.1:1", "127.0.0.1:2"], "127.0.0.1:3", "/tmp/x")
    directives = [line.split("#")[0].strip() for line in config.splitlines()]
    assert not any(line.startswith("ip_hash") for line in directives)
    assert "hash $pe_key consistent;" in config
    assert 'add_header Set-Cookie "pe_backend=$pe_key;' in config
    assert "proxy_set_header Upgrade $http_upgrade;" in config
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in config
    assert "${" not in config


@pytest.mark.parametrize("backends", [[], ["no-port"], ["a:1; evil"]])
def test_config_refuses_what_is_not_host_port(backends):
    with pytest.raises(ValueError, match="backends"):
        render(backends, "80", "/tmp/x")


def test_nginx_accepts_the_config():
    nginx = need("nginx")
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder, "nginx.conf")
        config.write_text(render(["127.0.0.1:7001", "127.0.0.1:7002"], "127.0.0.1:7000", folder))
        result = subprocess.run([nginx, "-t", "-q", "-p", folder, "-c", str(config), "-e", f"{folder}/error.log"],
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr


def test_run_local_spreads_sessions_serves_static_files_and_stops():
    with run_local(procs=2) as url:
        # Browsers without the cookie (first requests) spread over both processes, each pinned by its cookie.
        status, headers, _ = get(f"{url}/distance?lang=en")
        assert status == 200
        cookie = re.match(r"pe_backend=([0-9a-f]{32});", headers["Set-Cookie"])
        assert cookie, headers["Set-Cookie"]
        keys = keys_per_process(url, 2)
        pids = set()
        for _ in range(12):
            _, headers, _ = get(f"{url}/distance?lang=en")
            key = headers["Set-Cookie"].split(";")[0]
            pids.add(sessions_of(url, key)["pid"])
        assert pids == set(keys), "12 new browsers all reached one process"
        built = Counter(h for key in keys.values() for h in sessions_of(url, f"pe_backend={key}")["sessions"])
        assert sum(built.values()) == 13 and max(built.values()) == 1
        # Each process makes its collector's full passes at quiet moments (app/collector.py).
        for key in keys.values():
            policy = sessions_of(url, f"pe_backend={key}")["collector"]
            assert policy["installed"] and policy["frozen"] > 10_000, policy

        # Versioned static files: gzip, cached for a year; nginx's cache answers the second time.
        _, _, page = get(f"{url}/distance?lang=en")
        path = re.search(rb'src="(static/[^"]+\.js\?v=[0-9a-f]+)"', page).group(1).decode()
        for attempt in ("MISS", "HIT"):
            request = urllib.request.Request(f"{url}/{path}", headers={"Accept-Encoding": "gzip"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                body = answer.read()  # read whole: a response cut short is not cached
                assert answer.headers["Content-Encoding"] == "gzip"
                assert b"Bokeh" in gzip.decompress(body)[:200]
                assert answer.headers["Cache-Control"] == "public, max-age=31536000, immutable"
                assert answer.headers["X-Cache-Status"] == attempt
    # Stopped: nothing answers any more (run_local waited for run-local to end after SIGTERM).
    with pytest.raises(OSError):
        get(f"{url}/liveness", timeout=2)


@pytest.fixture(scope="module")
def supervised(tmp_path_factory):
    """One run-local with two app processes for the kill tests: nginx's URL, its status file, and a cookie
    key per app process's port (a restarted process keeps its port, hence its keys)."""
    status_file = tmp_path_factory.mktemp("run-local") / "status.json"
    with run_local(procs=2, status_file=status_file) as url:
        by_pid = keys_per_process(url, 2)
        apps = run_local_status(status_file)["apps"]
        assert set(by_pid) == {app["pid"] for app in apps}
        yield url, status_file, {app["port"]: f"pe_backend={by_pid[app['pid']]}" for app in apps}


def test_run_local_starts_a_killed_app_process_again_and_leaves_the_others_running(supervised):
    url, status_file, key_of = supervised
    before = run_local_status(status_file)
    victim, other = before["apps"]
    nginx_pid = before["nginx"]["pid"]

    os.kill(victim["pid"], signal.SIGKILL)

    def back() -> int | None:
        # The other process and nginx answer all along, with the same pids.
        assert sessions_of(url, key_of[other["port"]])["pid"] == other["pid"]
        status = run_local_status(status_file)
        assert status["nginx"]["pid"] == nginx_pid and status["apps"][1] == other
        new = status["apps"][0]
        if new["pid"] in (None, victim["pid"]) or not new["answering"] \
                or not answers(f"http://127.0.0.1:{victim['port']}/liveness"):
            return None
        # Through nginx only once its port answers: failed tries through nginx would count against it
        # (max_fails) and keep nginx away from it for fail_timeout.
        return new["pid"] if sessions_of(url, key_of[victim["port"]])["pid"] == new["pid"] else None

    new_pid = wait_until(back, timeout=BACK_WITHIN_S, interval=0.1,
                         message="the killed app process did not answer again through its port and nginx")
    after = run_local_status(status_file)
    assert after["apps"][0] == {**victim, "pid": new_pid, "restarts": victim["restarts"] + 1,
                                "ends_in_a_row": 1, "answering": True}
    assert after["apps"][1] == other and after["nginx"]["pid"] == nginx_pid
    assert get(f"{url}/distance?lang=en", cookie=key_of[victim["port"]])[0] == 200


def test_run_local_starts_a_killed_nginx_again_and_leaves_the_app_processes_running(supervised):
    url, status_file, key_of = supervised
    before = run_local_status(status_file)
    apps, nginx = before["apps"], before["nginx"]
    assert live_members(nginx["pid"]), "nginx's group is not where run-local says"

    os.kill(nginx["pid"], signal.SIGKILL)

    def back() -> bool:
        for app in apps:  # the app processes answer all along
            assert answers(f"http://127.0.0.1:{app['port']}/liveness"), app
        status = run_local_status(status_file)
        assert status["apps"] == apps
        # The killed master's workers keep serving on the port unless run-local ends them: gone first.
        return (status["nginx"]["pid"] not in (None, nginx["pid"]) and status["nginx"]["answering"]
                and not live_members(nginx["pid"]) and answers(f"{url}/liveness"))

    wait_until(back, timeout=BACK_WITHIN_S, interval=0.1, message="nginx did not answer again")
    after = run_local_status(status_file)
    assert after["nginx"]["restarts"] == nginx["restarts"] + 1 and after["apps"] == apps
    for app in apps:  # each cookie key still reaches the process it reached before
        assert sessions_of(url, key_of[app["port"]])["pid"] == app["pid"]


def test_a_process_that_keeps_ending_is_started_again_with_doubling_capped_delays_and_a_warning(
        monkeypatch, capsys, tmp_path):
    # The policy at a hundredth of its time scale, on a real process that ends as soon as it starts.
    monkeypatch.setattr(supervisor, "FIRST_DELAY_S", 0.02)
    monkeypatch.setattr(supervisor, "MAX_DELAY_S", 0.08)
    status_file = tmp_path / "status.json"
    child = supervisor.Supervised("app process 1", 1, [sys.executable, "-c", "raise SystemExit(3)"],
                                  "http://127.0.0.1:1/liveness")
    child.start()
    try:
        def ended_six_times() -> bool:
            supervisor.supervise_once(child, str(status_file), [child])
            return child.ends_in_a_row >= 6

        wait_until(ended_six_times, timeout=60, interval=0.01, message="the process was not started again")
    finally:
        if child.process is not None:
            child.process.kill()
            child.process.wait(10)
    log = capsys.readouterr().err
    delays = re.findall(r"app process 1 \(pid \d+, port 1\) ended with exit code 3; starting it again in ([\d.]+) s",
                        log)
    assert delays == ["0.02", "0.04", "0.08", "0.08", "0.08", "0.08"]
    assert log.count("WARNING: app process 1 ended 5 times in a row without staying up 30 s; still starting it "
                     "again, at most every 0.08 s") == 1
    status = run_local_status(status_file)
    assert status["apps"][0]["ends_in_a_row"] == 6 and status["apps"][0]["restarts"] == 5


def test_nginx_limits_one_browsers_downloads_and_says_so(supervised):
    """Past a burst of 10 CSV downloads, a browser's next ones within the second are refused (429); another
    browser is not affected."""
    url, _, cookies = supervised
    cookie = next(iter(cookies.values()))
    statuses = []
    for _ in range(16):
        try:
            statuses.append(get(f"{url}/data/scores.csv?T=24", cookie=cookie)[0])
        except urllib.error.HTTPError as error:
            statuses.append(error.code)
    assert statuses[:5] == [200] * 5 and 429 in statuses, statuses
    other = next(key for key in cookies.values() if key != cookie)
    assert get(f"{url}/data/scores.csv?T=24", cookie=other)[0] == 200


#: The lecture deployment's app processes: five machines, four processes (one per core) each.
LECTURE_BACKENDS = [f"app-{machine}:{port}" for machine in "abcde" for port in range(5006, 5010)]


def test_the_lecture_deployment_is_consistent_across_its_files():
    """deploy/lecture: nginx's list is the template rendered for every app process the app machines run,
    each app process counts them all (rooms over the shared Redis), Redis wants a password."""
    lecture = ROOT / "deploy" / "lecture"
    expected = render(LECTURE_BACKENDS, "80", "/tmp", error_log="/dev/stderr", access_log="/dev/stdout")
    assert (lecture / "nginx-lecture.conf").read_text() == expected
    apps = (lecture / "apps.yaml").read_text()
    ports = re.findall(r'PE_PORT: "(\d+)"\}, ports: \["(\d+):(\d+)"\]', apps)
    assert [int(p) for p, _, _ in ports] == list(range(5006, 5010))
    assert all(a == b == c for a, b, c in ports)
    per_machine = len(ports)
    assert f'PE_PROCESSES: "{per_machine * 5}"' in apps and len(LECTURE_BACKENDS) == per_machine * 5
    assert "PE_REDIS_URL: redis://:${REDIS_PASSWORD" in apps and "@${FRONT" in apps
    front = (lecture / "front.yaml").read_text()
    assert '"--requirepass", "${REDIS_PASSWORD' in front
    assert "./nginx-lecture.conf:/etc/nginx/nginx.conf:ro" in front
