"""Each of the platform's own pages at a desktop's width and a phone's (390 px): its
screenshot taken and its layout's shape checked — nothing off the screen sideways, no two
boxes drawn over each other — not its pixels; and axe-core finds nothing serious on it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_own_pages_browser import PASSWORD, RUN, Served, serve

from helpers import axe
from helpers.browser import chromium, in_chromium
from helpers.databases import IN_A_BROWSER, sqlite_only

pytestmark = [in_chromium, sqlite_only(IN_A_BROWSER), pytest.mark.npm]

WIDTHS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
SIGNED_OUT = ["/", "/signin", "/ada/nowhere/"]
SIGNED_IN = [
    "/",
    "/tools",
    "/tools?app=ada/runs",
    "/tokens",
    "/audit",
    "/audit?app=ada/runs",
    "/data",
    "/data?app=ada/runs",
    "/settings?app=ada/runs",
    "/spaces",
    "/people",
    "/tools?app=ada/nowhere",
]

# What is drawn side by side must not overlap: text, controls, cells, images. A box that
# holds another is not over it; an inline box is its fragments, a line each.
SHAPE = """
() => {
  const width = document.documentElement.clientWidth;
  const problems = [];
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.className && typeof el.className === "string" ? "." + el.className.split(" ")[0] : "") +
    ` "${(el.textContent || el.value || "").trim().slice(0, 30)}"`;
  const wide = document.documentElement.scrollWidth;
  if (wide > width + 1) problems.push(`the page is ${wide}px wide in a ${width}px window`);
  const scrolls = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (["auto", "scroll"].includes(getComputedStyle(a).overflowX)) return true;
    }
    return false;
  };
  const drawn = [];
  const leaves = "h1,h2,h3,p,a,button,input,select,summary,code,th,td,label,legend,img,pre," +
    ".tag,.meta,.hint";
  // drawn for a screen reader alone: inside a box of a pixel that clips it
  const unseen = (el) => {
    for (let a = el; a && a !== document.body; a = a.parentElement) {
      const r = a.getBoundingClientRect();
      if ((r.width <= 1 || r.height <= 1) && getComputedStyle(a).overflow === "hidden") return true;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll("*")) {
    // what a closed <details> holds is not drawn
    if (!el.checkVisibility({ visibilityProperty: true, contentVisibilityAuto: true })) continue;
    const style = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1 || unseen(el)) continue;
    if (!scrolls(el) && (r.left < -1 || r.right > width + 1)) {
      problems.push(`${name(el)} runs off the screen: ${Math.round(r.left)}..` +
        `${Math.round(r.right)} of ${width}`);
    }
    if (!el.matches(leaves)) continue;
    const inline = style.display === "inline";
    for (const box of inline ? el.getClientRects() : [r]) drawn.push([el, box]);
  }
  for (let i = 0; i < drawn.length; i++) {
    for (let j = i + 1; j < drawn.length; j++) {
      const [a, ra] = drawn[i], [b, rb] = drawn[j];
      if (a === b || a.contains(b) || b.contains(a)) continue;
      const x = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
      const y = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      if (x > 2 && y > 2) problems.push(`${name(a)} and ${name(b)} overlap`);
    }
  }
  return problems.slice(0, 20);
}
"""


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> Iterator[Served]:
    yield from serve(tmp_path, monkeypatch)


def sign_in(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/signin")
    page.get_by_label("Name").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{served.url}/")


def test_every_page_keeps_its_shape_and_passes_axe(served: Served, tmp_path: Path) -> None:
    service = served.service
    ada = service.local_owner()
    token = service.new_token(ada, "a script with a long label to wrap on a phone's screen")
    for _ in range(3):  # calls for the audit's rows, one refused
        httpx.post(
            f"{served.url}/ada/runs/api/command",
            json={"name": "log_run", "args": RUN},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
    httpx.post(
        f"{served.url}/ada/runs/api/command",
        json={"name": "log_run", "args": {"who": "Ada"}},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    # an entity's page in the data browser, with its forms to change and delete it
    row = service.graph.query(ada, "ada/runs", ".jog!").data["rows"][0]
    signed_in = [*SIGNED_IN, f"/data?app=ada/runs&id={row['entity']['eid']}"]
    problems: dict[str, list[str]] = {}
    shots = Path(os.environ.get("PASTURE_SHOTS", tmp_path / "shots"))
    shots.mkdir(exist_ok=True)
    with chromium() as browser:
        for screen, viewport in WIDTHS.items():
            # the page as it is served, CSP and all; and one whose CSP lets axe's script in
            plain = browser.new_context(viewport=viewport).new_page()
            checked = browser.new_context(viewport=viewport, bypass_csp=True).new_page()
            for person in ("stranger", "ada"):
                if person == "ada":
                    sign_in(plain, served)
                    sign_in(checked, served)
                for path in signed_in if person == "ada" else SIGNED_OUT:
                    where = f"{person} {path} on a {screen}"
                    plain.goto(served.url + path)
                    if path == "/":  # a command opened, its form drawn too
                        opened = plain.locator("details.command summary")
                        if opened.count():
                            opened.first.click()
                    shot = shots / f"{screen}-{person}-{len(problems)}.png"
                    plain.screenshot(path=str(shot), full_page=True)
                    assert shot.stat().st_size > 0
                    said = list(plain.evaluate(SHAPE))
                    checked.goto(served.url + path)
                    said += axe.serious(checked)
                    if said:
                        problems[where] = said
                    else:
                        problems.setdefault(where, [])
    failing = {k: v for k, v in problems.items() if v}
    assert not failing, json.dumps(failing, indent=1)
    assert len(problems) == 2 * (len(signed_in) + len(SIGNED_OUT))
