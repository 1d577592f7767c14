"""A stateless stand-in for Plume's prompt routes, answering from stub.json in the shape of
functions/prompts/handlers.go, so that the zeroeval SDKs can be run against it to capture
fixtures. Usage: python3 stub.py PORT"""
import hashlib
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
STUB = json.load(open(os.path.join(HERE, "stub.json"), encoding="utf-8"))
STAMP = "2026-01-02T03:04:05Z"


def normalize(text):
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def body(p, v, latest):
    b = {
        "id": v["id"], "version_id": v["id"], "prompt_id": p["prompt_id"], "task_id": p["prompt_id"],
        "project_id": STUB["project_id"], "prompt": p["slug"], "content": v["content"],
        "content_hash": sha(v["content"]), "version": v["version"], "model_id": None, "model": None,
        "metadata": {}, "created_at": STAMP, "created_by": "u-1", "updated_at": STAMP, "updated_by": "u-1",
    }
    if latest:
        b["tag"], b["is_latest"] = "latest", True
    return b


class Handler(BaseHTTPRequestHandler):
    def answer(self, status, obj):
        raw = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def not_found(self):
        self.answer(404, {"error": {"code": "not_found", "message": "not found", "request_id": "r-1"}})

    def route(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) < 4 or parts[:2] != ["v1", "tasks"] or parts[3] != "prompt":
            return None, None
        p = next((p for p in STUB["prompts"] if p["slug"] == parts[2]), None)
        return p, parts[4:]

    def do_GET(self):
        p, rest = self.route()
        if p is None:
            return self.not_found()
        if rest == ["latest"] and p["versions"]:
            return self.answer(200, body(p, max(p["versions"], key=lambda v: v["version"]), True))
        if len(rest) == 3 and rest[:2] == ["versions", "by-hash"]:
            for v in p["versions"]:
                if sha(v["content"]) == rest[2]:
                    return self.answer(200, body(p, v, False))
        self.not_found()

    def do_POST(self):
        p, rest = self.route()
        if p is None or rest != ["versions", "ensure"]:
            return self.not_found()
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = normalize(req["content"])
        for v in p["versions"]:
            if v["content"] == content:
                return self.answer(200, body(p, v, False))
        return self.answer(200, body(p, dict(p["ensured"], content=content), True))

    def log_message(self, fmt, *args):
        # One line per request on stderr: the flows of the SDKs, for the README.
        sys.stderr.write("%s %s\n" % (self.requestline.split(" HTTP/")[0], args[1] if len(args) > 1 else ""))


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
