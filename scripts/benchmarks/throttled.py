"""What the phone benchmarks share (first-screen.py, timeline.py): DevTools' network presets and a
Caddy server for a directory (HTTPS, HTTP/2, pre-compressed siblings first, `encode gzip zstd`
for the rest)."""
import os
import shutil
import socket
import subprocess
import tempfile
import time

# DevTools' presets (front_end/core/sdk/NetworkManager.ts): bytes per second, ms.
NETWORKS = {
    "slow 4G": {"latency": 562.5, "downloadThroughput": 1.6e6 / 8 * 0.9, "uploadThroughput": 750e3 / 8 * 0.9},
    "fast 4G": {"latency": 165, "downloadThroughput": 9e6 / 8 * 0.9, "uploadThroughput": 1.5e6 / 8 * 0.9},
}


def caddy(directory):
    """Serves DIRECTORY with Caddy over HTTPS (its internal CA; HTTP/2), pre-compressed siblings
    first. Returns (base URL, stop)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    home = tempfile.mkdtemp(prefix="first-screen-caddy-")
    config = os.path.join(home, "Caddyfile")
    with open(config, "w") as f:
        f.write(f"""{{
    admin off
    auto_https disable_redirects
    skip_install_trust
    storage file_system {home}/data
}}
https://127.0.0.1:{port} {{
    tls internal
    root * {directory}
    # What has no pre-compressed sibling (sigal's pages, thumbframe's thumbnails) is compressed
    # as it is sent where that helps, as every static host does; JPEGs are left alone.
    encode gzip zstd
    file_server {{
        precompressed br gzip
    }}
}}
""")
    process = subprocess.Popen(["caddy", "run", "--config", config, "--adapter", "caddyfile"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": home})
    for _ in range(100):
        with socket.socket() as client:
            if client.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)

    def stop():
        process.terminate()
        process.wait()
        shutil.rmtree(home, ignore_errors=True)
    return f"https://127.0.0.1:{port}/", stop
