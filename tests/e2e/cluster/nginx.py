"""A throwaway nginx balancing round-robin over iac-code instances, as docs/clusters.md configures it.

Runs in the foreground from a temporary directory on a free 127.0.0.1 port: `-p` prefix, `-e` error log
and `-c` configuration there, pid file and temporary paths there too. As root, its workers run as `nobody`
(the `user` directive is only valid then). The binary comes from PATH or /usr/sbin (Debian's package).
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# The part an operator copies: round-robin (nginx's default), no stickiness, SSE unbuffered, long reads,
# WebSocket upgrades passed on (nginx drops Upgrade and Connection unless told; "" keeps upstream keep-alive).
SITE = """
map $http_upgrade $connection_upgrade {{
    default upgrade;
    ""      "";
}}
upstream iac_code {{
{servers}
}}
server {{
    listen 127.0.0.1:{port};
    location / {{
        proxy_pass http://iac_code;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        proxy_set_header Host $http_host;
        proxy_buffering off;
        proxy_request_buffering off;
        proxy_cache off;
        proxy_read_timeout 1h;
        proxy_send_timeout 1h;
        client_max_body_size 16m;
    }}
}}
"""

MAIN = """
{user}
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format upstreams "$request_method $status upstream=$upstream_addr upstream_status=$upstream_status";
    access_log {dir}/access.log upstreams;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
{site}
}}
"""


class NginxUnavailable(RuntimeError):
    pass


def find_nginx() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found is None:
        raise NginxUnavailable(
            "nginx not found on PATH nor at /usr/sbin/nginx: `.ci/run` installs it (apt-get install nginx)"
        )
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def nginx(upstreams: list[str]) -> Iterator[str]:
    """Balance over `upstreams` (host:port); yields the balancer's base URL (http://127.0.0.1:PORT)."""
    binary = find_nginx()
    root = Path(tempfile.mkdtemp(prefix="iac-code-nginx-", dir="/tmp" if os.geteuid() == 0 else None))
    try:
        (root / "tmp").mkdir()
        user = ""
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(root / "tmp", nobody.pw_uid, nobody.pw_gid)
            root.chmod(0o755)
            user = f"user nobody {grp.getgrgid(nobody.pw_gid).gr_name};"
        port = _free_port()
        servers = "\n".join(f"    server {address};" for address in upstreams)
        site = SITE.format(servers=servers, port=port)
        (root / "nginx.conf").write_text(MAIN.format(user=user, dir=root, site=site))
        command = [binary, "-p", str(root), "-e", str(root / "error.log"), "-c", str(root / "nginx.conf")]
        with open(root / "stderr.log", "wb") as sink:
            process = subprocess.Popen(command, stdout=sink, stderr=sink)
        try:
            _wait_until_listening(process, port, root)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _wait_until_listening(process: subprocess.Popen[bytes], port: int, root: Path, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            logs = "".join(
                p.read_text(errors="replace") for p in (root / "stderr.log", root / "error.log") if p.exists()
            )
            raise RuntimeError(f"nginx exited ({process.returncode}):\n{logs}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.02)
    raise TimeoutError("nginx did not listen in time")
