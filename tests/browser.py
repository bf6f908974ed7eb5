"""A real headless Chromium for the page tests, driven over the DevTools protocol.

Chromium comes from the OS packages (`make tools` installs Debian's ``chromium``); the
protocol is a websocket, spoken with aiohttp's client. One :class:`Browser` is one
browser process with one tab: set a cookie, open a URL, read what a person would see
(``innerText``), run an expression, click, take a full-page screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def chromium() -> str | None:
    """The browser program on PATH, or None."""
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


class Browser:
    """One headless Chromium and one tab in it."""

    def __init__(self, profile: Path, *, width: int = 1280, height: int = 900) -> None:
        program = chromium()
        if program is None:
            raise RuntimeError("no chromium on PATH: run `make tools` (apt-get install chromium)")
        profile.mkdir(parents=True, exist_ok=True)
        argv = [
            program, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", "--no-default-browser-check", "--hide-scrollbars",
            f"--user-data-dir={profile}", "--remote-debugging-port=0",
            f"--window-size={width},{height}", "about:blank",
        ]  # fmt: skip
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.width, self.height = width, height
        self.loop = asyncio.new_event_loop()
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self.loop.run_until_complete(self._connect(f"ws://127.0.0.1:{port}{path}"))

    async def _connect(self, url: str) -> None:
        self.session = aiohttp.ClientSession()
        self.ws = await self.session.ws_connect(url, max_msg_size=256 * 1024 * 1024)
        target = await self._send("Target.createTarget", {"url": "about:blank"})
        attached = await self._send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        self.sid = attached["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            await self._send(f"{domain}.enable", {}, self.sid)

    async def _send(self, method: str, params: dict[str, Any], sid: str | None = None) -> Any:
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if sid is not None:
            message["sessionId"] = sid
        await self.ws.send_str(json.dumps(message))
        while True:
            raw = await asyncio.wait_for(self.ws.receive(), timeout=30)
            if raw.type != aiohttp.WSMsgType.TEXT:
                raise RuntimeError(f"DevTools connection ended: {raw.type}")
            data = json.loads(raw.data)
            if data.get("id") == ident:
                if "error" in data:
                    raise RuntimeError(f"{method}: {data['error']}")
                return data.get("result", {})
            self.events.append(data)

    def call(self, method: str, **params: Any) -> Any:
        """One DevTools command in the tab."""
        return self.loop.run_until_complete(self._send(method, params, self.sid))

    def set_cookie(self, url: str, name: str, value: str) -> None:
        """A cookie for ``url``'s origin, as a signed-in browser holds it."""
        self.call("Network.setCookie", url=url, name=name, value=value, httpOnly=True)

    def open(self, url: str) -> int | None:
        """Go to ``url`` and wait until it has loaded; the main document's HTTP status."""
        self.events.clear()
        nav = self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while self.evaluate("document.readyState") != "complete" or self.evaluate(
            "location.href"
        ) in ("about:blank", ""):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not load")
            time.sleep(0.05)
        for event in self.events:
            params = event.get("params", {})
            if (
                event.get("method") == "Network.responseReceived"
                and params.get("type") == "Document"
                and params.get("loaderId") == nav.get("loaderId")
            ):
                return int(params["response"]["status"])
        return None

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (DevTools runs it, not the page's
        own scripts: the page's policy forbids those)."""
        found = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in found:
            raise RuntimeError(f"{expression}: {found['exceptionDetails']}")
        return found["result"].get("value")

    def text(self) -> str:
        """What a person reads: the rendered text of the page."""
        return str(self.evaluate("document.body.innerText"))

    def screenshot(self, path: Path, *, dark: bool = False) -> bytes:
        """A PNG of the whole page (light or dark colour scheme), written to ``path``."""
        scheme = "dark" if dark else "light"
        self.call(
            "Emulation.setEmulatedMedia",
            features=[{"name": "prefers-color-scheme", "value": scheme}],
        )
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=self.width, height=min(max(height, 400), 4000), deviceScaleFactor=1,
            mobile=False,
        )  # fmt: skip
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        data = base64.b64decode(shot["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.call("Emulation.clearDeviceMetricsOverride")
        return data

    def close(self) -> None:
        """Stop the browser."""
        if hasattr(self, "ws"):
            self.loop.run_until_complete(self.ws.close())
            self.loop.run_until_complete(self.session.close())
        self.loop.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
