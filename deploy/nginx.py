"""Renders deploy/nginx.conf.template for a list of app processes.

    python -m deploy.nginx --backend app1:5006 --backend app2:5006 --listen 80 --state-dir /tmp/nginx

prints the configuration (the compose file's ``deploy/nginx-compose.conf`` is made this way);
``deploy/run-local`` renders one for loopback ports under its temporary directory.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

TEMPLATE = Path(__file__).with_name("nginx.conf.template")
_BACKEND = re.compile(r"[A-Za-z0-9_.\-]+:\d{1,5}")


def render(backends: Sequence[str], listen: str, state_dir: str, *, server_name: str = "_",
           error_log: str | None = None, access_log: str | None = None) -> str:
    """The nginx configuration for app processes ``backends`` (``host:port`` each), listening on ``listen``."""
    if not backends:
        raise ValueError("backends: at least one host:port is needed")
    for backend in backends:
        if not _BACKEND.fullmatch(backend):
            raise ValueError(f"backends: {backend!r} is not host:port")
    servers = "\n".join(f"        server {backend} max_fails=3 fail_timeout=10s;" for backend in backends)
    values = {"state_dir": state_dir, "error_log": error_log or f"{state_dir}/error.log",
              "access_log": access_log or f"{state_dir}/access.log", "servers": servers,
              "listen": listen, "server_name": server_name}
    # ${name} only: nginx's own $variables stay as they are.
    return re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], TEMPLATE.read_text())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m deploy.nginx", description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", required=True, help="an app process, host:port; repeat")
    parser.add_argument("--listen", default="80", help="what nginx listens on (default %(default)s)")
    parser.add_argument("--server-name", default="_", help="the public name (default: any)")
    parser.add_argument("--state-dir", default="/tmp/nginx", help="nginx's pid, temp and cache files")
    parser.add_argument("--error-log", default=None)
    parser.add_argument("--access-log", default=None)
    args = parser.parse_args(argv)
    print(render(args.backend, args.listen, args.state_dir, server_name=args.server_name,
                 error_log=args.error_log, access_log=args.access_log), end="")


if __name__ == "__main__":
    main()
