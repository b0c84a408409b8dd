"""--file: the specs read as `claude -p` reads them, the uploads folder, and the
downloads themselves against the fake Files API (tests/support/fake_api.py) on 127.0.0.1."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import Iterator, List

import pytest
from fake_api import MISSING_FILE_ID, FakeApiServer, file_content

from claude_print.run import file_downloads as fd
from claude_print.run.file_downloads import FileSpec

SESSION = "0b8e2a6e-6a36-4d0c-9a57-1c0ed4f0b8a1"


def test_specs_split_on_spaces_and_bad_ones_are_skipped() -> None:
    logged: List[str] = []
    specs = fd.parse_specs(
        ["file_a:a.txt file_b:sub/b.txt", "nocolon", "bad:", ":x"], logged.append
    )
    assert specs == [FileSpec("file_a", "a.txt"), FileSpec("file_b", "sub/b.txt")]
    assert len(logged) == 2 and "bad:" in logged[0] and ":x" in logged[1]


@pytest.mark.parametrize(
    "path, where",
    [
        ("a.txt", "a.txt"),
        ("sub/../b.txt", "b.txt"),
        ("/uploads/c.txt", "c.txt"),
        ("/work/S/uploads/d.txt", "d.txt"),
        ("/etc/passwd", "etc/passwd"),  # absolute: under uploads all the same
    ],
)
def test_every_file_lands_in_the_sessions_uploads_folder(path: str, where: str) -> None:
    assert fd.target("/work", "S", path) == f"/work/S/uploads/{where}"


@pytest.mark.parametrize("path", ["../up.txt", "a/../../up.txt"])
def test_a_path_that_climbs_out_is_refused(path: str) -> None:
    assert fd.target("/work", "S", path) is None


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    server = FakeApiServer().start()
    yield server
    server.shutdown()
    server.server_close()


def test_downloads_against_the_files_api(api: FakeApiServer, tmp_path: Path) -> None:
    specs = [
        FileSpec("file_b", "sub/b.txt"),
        FileSpec(MISSING_FILE_ID, "m.txt"),
        FileSpec("file_d", "../up.txt"),
    ]
    logged: List[str] = []
    env = {fd.TOKEN_VAR: "tok", "ANTHROPIC_BASE_URL": api.url}
    assert fd.download_all(specs, SESSION, str(tmp_path), env, logged.append) == 1
    uploads = tmp_path / SESSION / "uploads"
    assert (uploads / "sub" / "b.txt").read_bytes() == file_content("file_b")
    assert sorted(p.name for p in uploads.rglob("*") if p.is_file()) == ["b.txt"]
    assert not (tmp_path / SESSION / "up.txt").exists()
    gets = [h for h in api.hits if h["method"] == "GET"]
    # A 404 is final (one request), and the token goes as a bearer.
    assert [h["path"] for h in gets] == [
        "/v1/files/file_b/content",
        f"/v1/files/{MISSING_FILE_ID}/content",
    ]
    assert {h["auth"] for h in gets} == {"bearer"}
    assert any("status 404" in line for line in logged), logged


def test_a_server_error_is_tried_three_times(tmp_path: Path) -> None:
    statuses = [500, 502, 200]
    seen: List[str] = []

    class Flaky(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("anthropic-beta", ""))
            status = statuses.pop(0)
            self.send_response(status)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    waits: List[float] = []
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1/files/f/content"
        assert fd.fetch(url, "tok", sleep=waits.append) == b"ok"
    finally:
        server.shutdown()
        server.server_close()
    assert waits == [0.5, 1.0] and seen == [fd.FILES_BETA] * 3


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    from claude_print.run.file_downloads import save

    uploads = tmp_path / "sid" / "uploads"
    uploads.mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    (uploads / "a.txt").symlink_to(outside)
    save(b"downloaded", str(uploads / "a.txt"), str(uploads))
    assert outside.read_text() == "precious"
    assert not (uploads / "a.txt").is_symlink()
    assert (uploads / "a.txt").read_bytes() == b"downloaded"
    assert [p.name for p in uploads.iterdir()] == ["a.txt"]  # no staging file left


def test_a_symlinked_folder_out_of_uploads_is_refused(tmp_path: Path) -> None:
    from claude_print.run.file_downloads import save

    uploads = tmp_path / "sid" / "uploads"
    uploads.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (uploads / "sub").symlink_to(elsewhere)
    with pytest.raises(ValueError, match="outside"):
        save(b"x", str(uploads / "sub" / "a.txt"), str(uploads))
    assert list(elsewhere.iterdir()) == []
