"""The browser client, served by the app itself: one HTML shell per page and the files of
`server/web/` (plain ES modules, CSS, SVG: nothing to build, nothing from a CDN).

The files are read once at start and served from memory under `/static/<hash>/`, where the
hash is of all of them together: a page's modules import each other by relative paths, which
stay right under one prefix, and a new release is a new prefix, so each file can be cached
for good (`immutable`) while the shells, which name the prefix, are revalidated every time.
Each file is kept gzipped too (at the highest level, once), and sent so to a browser that
takes gzip; the app's compression leaves these answers alone (`uncompressed`).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
from litestar import Request, Response, get
from litestar.exceptions import NotFoundException
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath

from server.transport.compression import KEPT_LEVEL, gzip_body, takes_gzip

WEB = Path(__file__).parents[1] / "web"

_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".html": "text/html",
    ".png": "image/png",
    ".webmanifest": "application/manifest+json",
}
FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


class Asset(msgspec.Struct, frozen=True):
    body: bytes
    gzipped: bytes | None
    media_type: str
    etag: str


def _asset(body: bytes, media_type: str) -> Asset:
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    return Asset(body, gzip_body(body, KEPT_LEVEL), media_type, etag)


class Bundle(msgspec.Struct, frozen=True):
    """Every file of the client, by its path under `server/web/`, their common hash, and
    the shell of each page."""

    version: str
    files: Mapping[str, Asset]
    shells: Mapping[str, Asset]


PAGES = {
    "lobby": "Lobby",
    "play": "Game",
    "replay": "Replay",
    "audit": "Audit",
    "settings": "Settings",
    "rules": "Rules",
    "ratings": "Ratings",
    "player": "Player",
}
"""Each page: its module (`<page>.js`) and the title of its shell."""


def load_bundle(root: Path = WEB) -> Bundle:
    found = sorted(path for path in root.rglob("*") if path.is_file() and path.suffix in _TYPES)
    digest = hashlib.sha256()
    for path in found:
        name = path.relative_to(root).as_posix()
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    version = digest.hexdigest()[:16]
    files = {
        path.relative_to(root).as_posix(): _asset(path.read_bytes(), _TYPES[path.suffix])
        for path in found
        if path.name != "shell.html"
    }
    shell = (root / "shell.html").read_text()
    shells = {
        page: _asset(_shell_of(shell, page, title, files, version), _TYPES[".html"])
        for page, title in PAGES.items()
    }
    return Bundle(version, files, shells)


_IMPORT = re.compile(rb"""from\s+["']\./([a-z_]+\.js)["']""")


def _shell_of(shell: str, page: str, title: str, files: Mapping[str, Asset], version: str) -> bytes:
    """A page's shell with its release's prefix, and every module its script imports, at any
    depth, named for preloading: the browser fetches them all at once instead of one level of
    imports after the other."""
    needed: list[str] = []
    waiting = [f"{page}.js"]
    while waiting:
        name = waiting.pop()
        if name not in needed and name in files:
            needed.append(name)
            waiting += [found.decode() for found in _IMPORT.findall(files[name].body)]
    links = "\n".join(
        f'<link rel="modulepreload" href="/static/{version}/{name}">' for name in sorted(needed)
    )
    # The play page's first reads begin before its modules have all arrived (early.js).
    early = f'<script type="module" async src="/static/{version}/early.js"></script>\n'
    filled = shell.replace("{{preload}}", links).replace("{{title}}", html.escape(title))
    filled = filled.replace("{{early}}", early if page == "play" else "")
    return filled.replace("{{page}}", page).replace("{{static}}", f"/static/{version}").encode()


BUNDLE = load_bundle()


def send(request: Request[Any, Any, Any], asset: Asset, cache: str) -> Response[bytes]:
    """`asset` as the browser asks for it: 304 if it has it, gzipped if it takes gzip."""
    headers = {"Cache-Control": cache, "ETag": asset.etag, "Vary": "Accept-Encoding"}
    if request.headers.get("if-none-match") == asset.etag:
        return Response(b"", status_code=304, headers=headers)
    if asset.gzipped is not None and takes_gzip(request.headers.get("accept-encoding", "")):
        headers["Content-Encoding"] = "gzip"
        return Response(asset.gzipped, media_type=asset.media_type, headers=headers)
    return Response(asset.body, media_type=asset.media_type, headers=headers)


def _page(path: str, page: str, what: str) -> HTTPRouteHandler:
    async def shell(request: Request[Any, Any, Any]) -> Response[bytes]:
        return send(request, BUNDLE.shells[page], REVALIDATE)

    shell.__doc__ = what
    return get(path, name=f"{page}-page", include_in_schema=False, opt={"uncompressed": True})(
        shell
    )


lobby_page = _page("/", "lobby", "The lobby: sign in, your games, the open tables, a new game.")
audit_page = _page("/audit", "audit", "The audit of a record, in words.")
settings_page = _page("/settings", "settings", "How a player is told, and their vacation.")
rules_page = _page("/rules", "rules", "The rules in short, each point with its rulings' ids.")
ratings_page = _page("/ratings", "ratings", "The rating list, highest first.")
player_page = _page("/players/{player_id:str}", "player", "A player's games, rating, reliability.")
play_page = _page("/games/{game_id:str}", "play", "A game's play page (a spectator's, alone).")
replay_page = _page("/games/{game_id:str}/replay", "replay", "The replay viewer of a game.")


def _app_file(name: str, what: str) -> HTTPRouteHandler:
    """A file of the installable app at the site's root, where the browser looks for it
    (a service worker covers only the paths under its own), revalidated every time."""

    async def app_file(request: Request[Any, Any, Any]) -> Response[bytes]:
        return send(request, BUNDLE.files[name], REVALIDATE)

    app_file.__doc__ = what
    return get(f"/{name}", name=name, include_in_schema=False, opt={"uncompressed": True})(app_file)


APP_FILES = [
    _app_file("sw.js", "The service worker: the offline page, push messages, their clicks."),
    _app_file("manifest.webmanifest", "What installs the site as an app."),
    _app_file("icon-192.png", "The app's icon."),
    _app_file("icon-512.png", "The app's icon, large."),
]


@get(
    "/static/{version:str}/{name:path}",
    name="static-file",
    include_in_schema=False,
    opt={"uncompressed": True},
)
async def static_file(
    request: Request[Any, Any, Any], version: FromPath[str], name: FromPath[str]
) -> Response[bytes]:
    """A file of the client; only under the current hash (an old page reloads its shell)."""
    asset = BUNDLE.files.get(name.lstrip("/"))
    if version != BUNDLE.version or asset is None:
        raise NotFoundException("no such file in this release of the client")
    return send(request, asset, FOREVER)


PAGE_ROUTES = [
    lobby_page,
    audit_page,
    settings_page,
    rules_page,
    ratings_page,
    player_page,
    play_page,
    replay_page,
    static_file,
    *APP_FILES,
]
