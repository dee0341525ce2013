"""The pictures of the documentation's tour (``docs/tour.md``), made from the demo's own output, so that they are
made again whenever what members see changes.

``python -m bot.demo.pictures [--out docs/pictures]`` runs ``paperping demo`` into a temporary folder, then has
headless Chromium (Debian's ``chromium``) take a screenshot of each page the demo wrote for one thing a member
sees (``pieces/NAME.html``) and of the first screen of the lab's report, and crops the empty space below each.
Nothing leaves the machine: the pages are local files, and Chromium starts with its network features off.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the pictures and the width each is taken at (a Slack message pane, or the report's page)
PICTURES = {
    "post": 760,
    "digest": 760,
    "context-reply": 760,
    "answer": 760,
    "agent": 760,
    "fulltext-post": 760,
    "fulltext-answer": 760,
    "profile": 760,
    "home": 760,
    "report": 1100,
}
HEIGHT = 2400  # taken this tall, then cropped to what the page shows
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def screenshot(page: Path, png: Path, width: int, height: int = HEIGHT) -> None:
    """A screenshot of a local page by headless Chromium (``chromium`` on the PATH)."""
    browser = shutil.which("chromium")
    if browser is None:
        raise SystemExit("the pictures need Debian's chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="paperping-chromium-") as profile:
        subprocess.run(
            [
                browser,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                f"--screenshot={png}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def crop(png: Path, margin: int = 16, most: int | None = None) -> None:
    """Cut the empty (white) rows below the page's content, keeping ``margin`` pixels; at most ``most`` rows."""
    from PIL import Image, ImageChops

    with Image.open(png) as image:
        rgb = image.convert("RGB")
    box = ImageChops.difference(rgb, Image.new("RGB", rgb.size, (255, 255, 255))).getbbox()
    bottom = min(rgb.height, (box[3] if box else rgb.height) + margin)
    if most is not None:
        bottom = min(bottom, most)
    rgb.crop((0, 0, rgb.width, bottom)).save(png, optimize=True)


def make_pictures(demo_out: Path, out: Path) -> list[Path]:
    """The tour's pictures from a demo's output folder (``paperping demo --out``)."""
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for name, width in PICTURES.items():
        page = demo_out / "report" / "index.html" if name == "report" else demo_out / "pieces" / f"{name}.html"
        png = out / f"{name}.png"
        screenshot(page, png, width)
        crop(png, most=1400 if name == "report" else None)  # the report: its first screen
        made.append(png)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "pictures")
    args = parser.parse_args()
    from bot.demo.workflow import run_demo
    from socialrag.config import Settings

    with tempfile.TemporaryDirectory(prefix="paperping-pictures-") as tmp:
        demo_out = Path(tmp) / "demo"
        run_demo(Settings.from_env().with_changes(offline=True), Path(tmp) / "home", demo_out, say=lambda _: None)
        for png in make_pictures(demo_out, args.out):
            print(f"wrote {png.relative_to(ROOT) if png.is_relative_to(ROOT) else png}")


if __name__ == "__main__":
    main()
