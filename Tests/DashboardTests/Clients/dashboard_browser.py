#!/usr/bin/python3
"""Drives headless Chromium against Lyceum's dashboard over the DevTools protocol, with a
WebSocket client written here from RFC 6455 (standard library only), and makes progress writes
over 7/MDP with pyzmq.

    dashboard_browser.py DASHBOARD_PORT BROKER COURSE LESSONS QUESTIONS OUTPUT_DIR ACTIVE_COURSE ACTIVE_LESSONS

LESSONS is the course's lesson ids joined by commas, QUESTIONS its quiz's question count;
ACTIVE_COURSE is a second course (ACTIVE_LESSONS its lesson ids, at least 3), which 30 learners
then begin, watching its first one or two lessons each: none completes it. The
page is loaded through a TCP relay this script runs, so that it can cut the browser's
connections and hold its reconnection: the browser's EventSource then reconnects by itself with
Last-Event-ID. Prints one JSON object: what the page showed before and after the writes and
after reconnecting and after the 30 learners' writes, the Last-Event-ID headers the relay saw,
and the screenshot's path and
its count of distinct colours. Exit status 0 when every step completed, 1 otherwise.
"""
import base64
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib

import zmq

PAGE_STATE = """JSON.stringify({
  dashboard: window.lyceumDashboard || null,
  status: (document.getElementById('status') || {}).textContent,
  courses: Array.from(document.querySelectorAll('#courses tbody tr')).map(row => ({
    course: row.dataset.course, title: row.querySelector('.title').textContent,
    started: Number(row.querySelector('.started').textContent),
    completed: Number(row.querySelector('.completed').textContent),
    quiz: row.querySelector('.quiz').textContent,
    bar: row.querySelector('.completion .bar > span').style.width,
    progress: row.querySelector('.progress .share').textContent,
    progress_bar: row.querySelector('.progress .bar > span').style.width})),
  feed: Array.from(document.querySelectorAll('#feed li')).map(item => item.textContent),
  feed_lessons: Array.from(document.querySelectorAll('#feed .lesson')).map(lesson => lesson.textContent)
})"""


class Relay:
    """Forwards loopback connections to the dashboard; can cut them and refuse new ones."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.refusing = False
        self.connections = []
        self.last_event_ids = []
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            if self.refusing:
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self.lock:
                self.connections += [client, upstream]
            threading.Thread(target=self.pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self.pump, args=(upstream, client, False), daemon=True).start()

    def pump(self, source, destination, is_request):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if is_request:
                    for line in data.split(b"\r\n"):
                        if line.lower().startswith(b"last-event-id:"):
                            self.last_event_ids.append(line.split(b":", 1)[1].strip().decode())
                destination.sendall(data)
        except OSError:
            pass
        for end in (source, destination):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            for connection in self.connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.connections = []


class DevTools:
    """One page target of Chromium, over a WebSocket (RFC 6455, client side: masked frames)."""

    def __init__(self, url):
        host, port, path = url[len("ws://"):].split("/", 1)[0].split(":") + ["/" + url.split("/", 3)[3]]
        self.socket = socket.create_connection((host, int(port)))
        key = base64.b64encode(os.urandom(16)).decode()
        self.socket.sendall(("GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, port, key)).encode())
        response = b""
        while b"\r\n\r\n" not in response:
            response += self.socket.recv(1)
        if b" 101 " not in response.split(b"\r\n")[0]:
            raise RuntimeError("no WebSocket upgrade: %r" % response)
        self.next_id = 0

    def send_frame(self, payload):
        header = bytes([0x81])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        mask = os.urandom(4)
        self.socket.sendall(header + mask + bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload)))

    def read_exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.socket.recv(count - len(data))
            if not chunk:
                raise RuntimeError("DevTools closed the WebSocket")
            data += chunk
        return data

    def read_message(self):
        message = b""
        while True:
            first, second = self.read_exactly(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self.read_exactly(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self.read_exactly(8))[0]
            payload = self.read_exactly(length)
            message += payload
            if first & 0x80:
                return message

    def call(self, method, **params):
        self.next_id += 1
        self.send_frame(json.dumps({"id": self.next_id, "method": method, "params": params}).encode())
        while True:
            reply = json.loads(self.read_message())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply["result"]

    def state(self):
        result = self.call("Runtime.evaluate", expression=PAGE_STATE, returnByValue=True)
        return json.loads(result["result"]["value"])


def wait_for(devtools, condition, what, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        state = devtools.state()
        if condition(state):
            return state
        if time.monotonic() > deadline:
            raise RuntimeError("the page never showed %s; it shows %s" % (what, json.dumps(state)))
        time.sleep(0.1)


def course_row(state, course):
    return next((row for row in state["courses"] if row["course"] == course), None)


def distinct_colours(png):
    """Distinct pixel colours of an 8-bit RGB or RGBA, non-interlaced PNG."""
    position, chunks, header = 8, [], None
    while position < len(png):
        length, kind = struct.unpack(">I4s", png[position:position + 8])
        data = png[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", data)
        elif kind == b"IDAT":
            chunks.append(data)
        position += 12 + length
    width, height, depth, colour_type = header[:4]
    if depth != 8 or colour_type not in (2, 6):
        raise RuntimeError("unexpected PNG format %r" % (header,))
    channels = 4 if colour_type == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for index in range(stride):
            left = line[index - channels] if index >= channels else 0
            up = previous[index]
            corner = previous[index - channels] if index >= channels else 0
            if kind == 1:
                line[index] = (line[index] + left) & 0xFF
            elif kind == 2:
                line[index] = (line[index] + up) & 0xFF
            elif kind == 3:
                line[index] = (line[index] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                distances = (abs(guess - left), abs(guess - up), abs(guess - corner))
                line[index] = (line[index] + (left, up, corner)[distances.index(min(distances))]) & 0xFF
        colours.update(bytes(line[index:index + 3]) for index in range(0, stride, channels))
        previous = line
    return len(colours)


def main(dashboard_port, broker, course, lessons, questions, output, active_course, active_lessons):
    lessons = lessons.split(",")
    active_lessons = active_lessons.split(",")
    relay = Relay(int(dashboard_port))
    context = zmq.Context()
    client = context.socket(zmq.REQ)
    client.setsockopt(zmq.LINGER, 0)
    client.connect(broker)

    def write(body):
        client.send_multipart([b"MDPC01", b"progress", json.dumps(body).encode()])
        if not client.poll(5000):
            raise RuntimeError("no reply to %r" % body)
        reply = json.loads(client.recv_multipart()[2])
        if not reply["ok"]:
            raise RuntimeError("refused: %r" % reply)

    profile = tempfile.mkdtemp(prefix="lyceum-chromium-")
    browser = subprocess.Popen(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--remote-debugging-port=0", "--remote-allow-origins=*", "--user-data-dir=" + profile,
         "--window-size=1280,800", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report = {}
    try:
        active = os.path.join(profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while not (os.path.exists(active) and open(active).read().count("\n") >= 1):
            if time.monotonic() > deadline or browser.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        devtools_port = open(active).read().split("\n")[0]
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % devtools_port, timeout=10))
        page = next(target for target in targets if target["type"] == "page")
        devtools = DevTools(page["webSocketDebuggerUrl"])
        devtools.call("Page.navigate", url="http://127.0.0.1:%d/" % relay.port)
        report["before"] = wait_for(devtools, lambda s: s["dashboard"] and s["dashboard"]["snapshots"] >= 1
                                    and course_row(s, course), "a snapshot")

        # Ada completes the course and takes the quiz with every answer 0; Bob begins it.
        write({"op": "begin_course", "learner": "ada", "course": course})
        for lesson in lessons:
            write({"op": "mark_watched", "learner": "ada", "course": course, "lesson": lesson})
        if int(questions) > 0:
            write({"op": "submit_quiz", "learner": "ada", "course": course, "answers": [0] * int(questions)})
        write({"op": "begin_course", "learner": "bob", "course": course})
        writes = 2 + len(lessons) + (1 if int(questions) > 0 else 0)
        report["writes"] = writes
        report["after"] = wait_for(devtools, lambda s: s["dashboard"]["events"] >= writes
                                   and course_row(s, course)["started"] == 2, "the writes' events")

        screenshot = devtools.call("Page.captureScreenshot", format="png")
        png = base64.b64decode(screenshot["data"])
        os.makedirs(output, exist_ok=True)
        report["screenshot"] = os.path.join(output, "dashboard.png")
        with open(report["screenshot"], "wb") as file:
            file.write(png)
        report["colours"] = distinct_colours(png)

        # The browser loses its stream; while it cannot reconnect, Carol begins the course and
        # watches a lesson; then it may reconnect, and its EventSource sends Last-Event-ID.
        relay.refusing = True
        relay.cut()
        wait_for(devtools, lambda s: s["dashboard"] and "reconnecting" in s["status"], "the lost connection")
        write({"op": "begin_course", "learner": "carol", "course": course})
        write({"op": "mark_watched", "learner": "carol", "course": course, "lesson": lessons[0]})
        time.sleep(0.5)
        relay.refusing = False
        report["resumed"] = wait_for(devtools, lambda s: s["dashboard"]["events"] >= writes + 2, "the missed events")
        report["last_event_ids"] = relay.last_event_ids

        # 30 learners each watch the first one or two lessons of the active course: 25-50 % of
        # a 4-lesson course, and nobody completes it.
        active_writes = 0
        for index in range(30):
            for lesson in active_lessons[:1 + index % 2]:
                write({"op": "mark_watched", "learner": "active-%d" % index, "course": active_course, "lesson": lesson})
                active_writes += 1
        report["active"] = wait_for(devtools, lambda s: s["dashboard"]["events"] >= writes + 2 + active_writes
                                    and course_row(s, active_course)["started"] == 30, "the 30 learners' events")
        print(json.dumps(report), flush=True)
        return 0
    except Exception as error:
        report["error"] = str(error)
        print(json.dumps(report), flush=True)
        return 1
    finally:
        browser.terminate()
        try:
            browser.wait(10)
        except subprocess.TimeoutExpired:
            browser.kill()
        subprocess.run(["rm", "-rf", profile])


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
