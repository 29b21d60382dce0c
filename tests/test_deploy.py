"""deploy/ without a browser: the nginx configuration, the compose file, run-local's start and stop."""

from __future__ import annotations

import gzip
import re
import subprocess
import tempfile
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from deploy.nginx import render
from tests.servers import ROOT, get, keys_per_process, need, run_local, sessions_of

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
