#!/usr/bin/env python3
"""A header-adding proxy for the conformance suite's server scenarios.

The suite sends no Authorization header; tai requires its bearer key. This proxy listens
on a port, adds `Authorization: Bearer KEY` to every request and forwards it to tai
unchanged otherwise (method, path, headers, body), then relays tai's answer. It never
switches tai's authentication off. Usage: auth_proxy.py LISTEN_PORT TARGET_PORT KEY
"""
import http.client
import http.server
import sys

LISTEN, TARGET, KEY = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "proxy-connection"}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def forward(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "authorization"}
        headers["Authorization"] = "Bearer " + KEY
        conn = http.client.HTTPConnection("127.0.0.1", TARGET, timeout=60)
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        self.send_response(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in HOP and k.lower() != "content-length":
                self.send_header(k, v)
        if resp.getheader("content-type", "").startswith("text/event-stream"):
            # A stream (subscriptions/listen): relay it as it comes, chunk by chunk.
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                while True:
                    data = resp.read1(65536)
                    if not data:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            conn.close()
            self.close_connection = True
            return
        data = resp.read()
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = forward

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", LISTEN), Proxy).serve_forever()
