"""Command line: ``python -m app [--port N] [--address A] [--allow-websocket-origin HOST[:PORT]] [--num-procs N]``.

With no flags it serves the explorable on http://localhost:5006/ .
"""

from __future__ import annotations

import argparse
import os

from app.blas import one_blas_thread

one_blas_thread()  # before app.server imports NumPy

from app.server import DEFAULT_PORT, serve, workers_follow_parent  # noqa: E402 (after one_blas_thread)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PE_PORT", DEFAULT_PORT)),
                        help="TCP port (default %(default)s, or $PE_PORT)")
    parser.add_argument("--address", default=os.environ.get("PE_ADDRESS") or None,
                        help="address to listen on (default: all of localhost)")
    parser.add_argument("--allow-websocket-origin", action="append", default=None, metavar="HOST[:PORT]",
                        help="a host allowed to open the websocket; repeat for more "
                             "(default: $PE_ALLOWED_ORIGINS, comma separated, else localhost)")
    parser.add_argument("--num-procs", type=int, default=int(os.environ.get("PE_NUM_PROCS", 1)),
                        help="server processes sharing the port (default %(default)s, or $PE_NUM_PROCS; "
                             "0 = one per CPU core): for a room of students moving sliders at once")
    parser.add_argument("--use-xheaders", action="store_true",
                        default=os.environ.get("PE_USE_XHEADERS", "") not in ("", "0"),
                        help="behind a proxy: take the client's address and scheme from X-Forwarded-* / X-Real-IP "
                             "(default: $PE_USE_XHEADERS)")
    args = parser.parse_args(argv)
    if args.num_procs < 0:
        parser.error(f"--num-procs must be 0 (one per core) or more, not {args.num_procs}")
    if args.allow_websocket_origin is None:
        env = os.environ.get("PE_ALLOWED_ORIGINS", "")
        args.allow_websocket_origin = [o.strip() for o in env.split(",") if o.strip()]
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    origins = args.allow_websocket_origin or [f"localhost:{args.port}", f"127.0.0.1:{args.port}"]
    print(f"Serving the explorable on http://{args.address or 'localhost'}:{args.port}/", flush=True)
    if args.num_procs != 1:
        workers_follow_parent()
    # Rooms need to know whether other processes serve the app too (components.roombus.processes).
    os.environ["PE_NUM_PROCS"] = str(args.num_procs)
    serve(port=args.port, address=args.address, allow_websocket_origin=origins, num_procs=args.num_procs,
          use_xheaders=args.use_xheaders)


if __name__ == "__main__":
    main()
