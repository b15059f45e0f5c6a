"""A tiny local HTTP server for a test, answering with a function of the request."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, List, Optional, Tuple

# handler(method, path, headers, body) -> (status, headers, body), or None to drop the connection.
Handler = Callable[[str, str, Dict[str, str], bytes], Optional[Tuple[int, Dict[str, str], bytes]]]


class LocalServer:
    def __init__(self, handler: Handler) -> None:
        self.requests: List[Dict[str, str]] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def _any(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                hdrs = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append(hdrs)
                answer = handler(self.command, self.path, hdrs, body)
                if answer is None:
                    self.close_connection = True
                    self.connection.close()
                    return
                status, headers, payload = answer
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _any

            def log_message(self, *args: object) -> None:
                pass

        self._srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self._srv.server_address[1]}"
        self._t = threading.Thread(target=self._srv.serve_forever, daemon=True)
        self._t.start()

    def close(self) -> None:
        self._srv.shutdown()
        self._srv.server_close()
