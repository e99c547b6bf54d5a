"""The book's stored full results fetched where they are missing (modlib.remote), from a file://
copy of the repository; offline, a clear failure within the timeout."""

import json
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
import torch

from modlib import remote, results
from modlib import resists_at_scale as rs

ROOT = Path(__file__).resolve().parents[1]
FULL = ROOT / "notebooks" / "results" / "full"
CHAPTER = rs.CHAPTER  # a few results, 0.2 MB: the cheapest chapter to copy and load
STORED = sorted(p.stem for p in (FULL / CHAPTER).glob("*.json") if not p.name.startswith("_"))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A copy of the repository's stored results for one chapter, and its index, as file://."""
    copy = tmp_path / "repo"
    (copy / "notebooks" / "results" / "full").mkdir(parents=True)
    shutil.copy(FULL / remote.INDEX, copy / "notebooks" / "results" / "full" / remote.INDEX)
    shutil.copytree(FULL / CHAPTER, copy / "notebooks" / "results" / "full" / CHAPTER)
    monkeypatch.setenv(remote.URL_ENV, copy.as_uri())
    monkeypatch.delenv(remote.FETCH_ENV, raising=False)
    monkeypatch.setenv("CI", "true")  # nobody to ask
    return copy / "notebooks" / "results" / "full"


def test_the_index_lists_every_stored_full_result():
    index = json.loads((FULL / remote.INDEX).read_text())
    assert index == remote.build_index(FULL.parent), "rewrite it: python -m modlib.remote index"


def test_the_repository_comes_from_config_and_the_github_raw_path(monkeypatch):
    monkeypatch.delenv(remote.URL_ENV, raising=False)
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    assert remote.repository() == (config["url"], config["branch"])
    assert remote.base_url() == f"{config['url']}/raw/{config['branch']}/notebooks/results/full"
    assert remote.base_url("file:///x/repo/") == "file:///x/repo/notebooks/results/full"



def test_outside_a_checkout_the_results_come_from_the_installed_release(tmp_path, monkeypatch):
    # Colab: no _config.yml beside modlib; the results stored with the code installed, not main's
    monkeypatch.setattr(remote, "CHECKOUT", tmp_path)
    monkeypatch.setenv(remote.URL_ENV, "https://example.org/fork/book/")
    assert remote.repository() == ("https://example.org/fork/book", remote.RELEASE)
    assert remote.base_url() == f"https://example.org/fork/book/raw/{remote.RELEASE}/notebooks/results/full"
    monkeypatch.delenv(remote.URL_ENV)
    from importlib import metadata

    try:
        metadata.metadata(remote.DISTRIBUTION)
    except metadata.PackageNotFoundError:
        with pytest.raises(remote.FetchError, match=remote.URL_ENV):
            remote.repository()
    else:
        assert remote.repository()[1] == remote.RELEASE

def test_full_profile_fetches_the_chapter_and_its_code_loads_it_without_computing(repo, store, monkeypatch, capsys):
    monkeypatch.setenv(remote.FETCH_ENV, "1")
    assert results.available_profile("full", CHAPTER) == "full"
    assert f"Fetched {len(STORED)} of the book's stored full results" in capsys.readouterr().out
    for path in sorted((FULL / CHAPTER).glob("*.*")):
        assert (store / "full" / CHAPTER / path.name).read_bytes() == path.read_bytes()
    assert not [p for p in store.rglob("*") if p.name.startswith(".")]  # no temporary file left
    with results.store_only():  # computes nothing: raises if any result were stale or missing
        runs = rs.run("full", torch.device("cpu"))
    assert sorted(runs.rows) == sorted(p.stem for p in (FULL / CHAPTER).glob("*.json"))
    remote.offer(CHAPTER)  # all stored now: nothing to fetch, nothing said
    assert capsys.readouterr().out == ""


def test_a_file_changed_on_the_server_with_its_own_checksum_recomputed_is_refused(repo, store):
    """The files are checked against the pinned commit's index, not against the checksum a
    fetched file carries itself (issue 54, item 6)."""
    path = repo / CHAPTER / "mnist-A.json"
    meta = json.loads(path.read_text())
    meta["metrics"] = {**meta["metrics"], "tampered": True}
    meta["sha256"] = results.checksum(meta)
    path.write_text(json.dumps(meta))
    assert results.read(path) is not None  # it checks out by itself
    with pytest.raises(remote.FetchError, match="mnist-A.json is not the file the pinned index .* SHA-256 differs"):
        remote.fetch_chapter(CHAPTER)
    assert not store.exists() or not list(store.rglob("*.json"))


@pytest.mark.parametrize("damage", ["npz", "json"])
def test_a_damaged_download_writes_nothing(repo, store, damage):
    if damage == "npz":
        npz = repo / CHAPTER / "scan-B.npz"
        npz.write_bytes(npz.read_bytes()[:-10])
        match = "scan-B.npz is not the file the pinned index .* SHA-256 differs"
    else:
        path = repo / CHAPTER / "scan-B.json"
        path.write_text(path.read_text().replace('"mnist', '"MNIST', 1).replace('"scan', '"Scan', 1))
        match = "scan-B.json is not the file the pinned index .* SHA-256 differs"
    with pytest.raises(remote.FetchError, match=match):
        remote.fetch_chapter(CHAPTER)
    assert not store.exists() or not list(store.rglob("*.json"))


def test_results_already_here_are_kept(repo, store, capsys):
    (store / "full" / CHAPTER).mkdir(parents=True)
    shutil.copy(FULL / CHAPTER / "mnist-A.json", store / "full" / CHAPTER)
    shutil.copy(FULL / CHAPTER / "mnist-A.npz", store / "full" / CHAPTER)
    assert sorted(remote.fetch_chapter(CHAPTER)) == [f"{CHAPTER}/{n}" for n in STORED if n != "mnist-A"]
    assert "kept 1 already here" in capsys.readouterr().out


def test_a_chapter_that_reads_another_fetches_both(repo, store, monkeypatch):
    monkeypatch.setitem(remote.READS, CHAPTER, ("redundant_input_toy",))
    with pytest.raises(remote.FetchError, match="redundant_input_toy/baselines.json"):  # not in the copy
        remote.fetch_chapter(CHAPTER)
    assert not store.exists() or not list(store.rglob("*.json"))


def test_without_asking_nothing_is_fetched_and_the_note_says_how(repo, store, capsys):
    remote.offer(CHAPTER)  # CI=true: nobody to ask
    out = capsys.readouterr().out
    assert "not stored" in out and f"{remote.FETCH_ENV}=1" in out and f"python -m modlib.remote fetch {CHAPTER}" in out
    assert not store.exists() or not list(store.rglob("*.json"))


def test_asked_the_reader_decides(repo, store, monkeypatch, capsys):
    monkeypatch.setattr(remote, "_ask", lambda prompt: False)
    remote.offer(CHAPTER)
    assert "Computing the full-profile results" in capsys.readouterr().out
    assert not store.exists() or not list(store.rglob("*.json"))
    prompts = []
    monkeypatch.setattr(remote, "_ask", lambda prompt: prompts.append(prompt) or True)
    remote.offer(CHAPTER)
    assert "Fetch the book's stored results from file://" in prompts[0]
    assert len(list((store / "full" / CHAPTER).glob("*.json"))) == len(STORED)


def test_never_fetches_with_0_or_in_the_book_build(repo, store, monkeypatch):
    monkeypatch.setattr(remote, "_ask", lambda prompt: pytest.fail("asked"))
    for never in ("0", "no", "false"):
        monkeypatch.setenv(remote.FETCH_ENV, never)
        remote.offer(CHAPTER)
    monkeypatch.setenv(remote.FETCH_ENV, "maybe")
    with pytest.raises(remote.FetchError, match="use 1 .* or 0"):
        remote.offer(CHAPTER)
    monkeypatch.delenv(remote.FETCH_ENV)
    monkeypatch.setenv(results.FROM_STORE_ENV, "1")
    assert results.available_profile("full", CHAPTER) == "default"
    assert not store.exists() or not list(store.rglob("*.json"))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_offline_it_fails_at_once_naming_what_it_could_not_reach_and_how_to_compute(store, monkeypatch):
    url = f"http://127.0.0.1:{_closed_port()}/breaking-it-down/book"
    monkeypatch.setenv(remote.URL_ENV, url)
    monkeypatch.setenv(remote.FETCH_ENV, "1")
    start = time.monotonic()
    with pytest.raises(remote.FetchError) as err:
        results.available_profile("full", CHAPTER)
    assert time.monotonic() - start < 5
    message = str(err.value)
    assert f"could not reach {url}/raw/{remote.RELEASE}/notebooks/results/full/{CHAPTER}/{STORED[0]}.json" in message
    assert f"{remote.FETCH_ENV}=0" in message and f"python -m modlib.batch --profile full notebooks/{CHAPTER}.ipynb" in message
    assert not store.exists() or not list(store.rglob("*.json"))


def test_a_server_that_never_answers_times_out(store, monkeypatch):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    held = []
    threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()
    monkeypatch.setattr(remote, "TIMEOUT_S", 0.5)
    start = time.monotonic()
    try:
        with pytest.raises(remote.FetchError, match="could not reach .*timed out"):
            remote.fetch_chapter(CHAPTER, url=f"http://127.0.0.1:{server.getsockname()[1]}/r")
    finally:
        server.close()
    assert time.monotonic() - start < 5


def test_the_command_line_fetches_and_fails_with_a_message(repo, tmp_path, capsys):
    assert remote.main(["fetch", CHAPTER, "--root", str(tmp_path / "cli")]) == 0
    assert len(list((tmp_path / "cli" / "full" / CHAPTER).glob("*.npz"))) == len(STORED)
    assert remote.main(["fetch", "no_such_chapter", "--root", str(tmp_path / "cli")]) == 1
    assert "stores no full results for 'no_such_chapter'" in capsys.readouterr().err


def test_in_a_kernel_the_reader_is_asked_and_papermill_is_not():
    """``_ask`` in a real kernel: a frontend that answers stdin (Jupyter, Colab) is asked; one that
    allows none (papermill, the book build) is not, and nothing waits."""
    import os

    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("CI", None)
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    try:
        code = "from modlib import remote; print('answer', remote._ask('Fetch them? [Y/n] '))"
        asked = kc.execute(code, allow_stdin=True)
        request = kc.get_stdin_msg(timeout=60)
        assert request["content"]["prompt"] == "Fetch them? [Y/n] "
        kc.input("n")
        assert "answer False" in _printed(kc, asked)
        assert "answer None" in _printed(kc, kc.execute(code, allow_stdin=False))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _printed(kc, msg_id: str) -> str:
    """What the execution ``msg_id`` printed, once the kernel is idle after it."""
    out = ""
    while True:
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out += msg["content"]["text"]
        elif msg["msg_type"] == "error":
            raise AssertionError("\n".join(msg["content"]["traceback"]))
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return out


def _serve(handler) -> tuple[str, socket.socket]:
    """A local HTTP server on a free port whose every connection ``handler(conn)`` answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def loop():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handler, args=(conn,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}/r", server


def _answer(conn, body: bytes, length: int, pause: float = 0.0):
    try:
        conn.recv(65536)
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % length)
        for i in range(len(body)):
            conn.sendall(body[i:i + 1])
            time.sleep(pause)
    except OSError:
        pass
    finally:
        conn.close()


def test_a_server_that_trickles_bytes_meets_the_overall_deadline(store, monkeypatch):
    url, server = _serve(lambda conn: _answer(conn, b"x" * 1000, 1000, pause=0.05))
    monkeypatch.setattr(remote, "TIMEOUT_S", 1.0)
    monkeypatch.setattr(remote, "DEADLINE_S", 1.0)
    start = time.monotonic()
    try:
        with pytest.raises(remote.FetchError, match=r"ran past its deadline of 1 s") as err:
            remote.fetch_chapter(CHAPTER, url=url)
    finally:
        server.close()
    assert time.monotonic() - start < 5 and "\n" not in str(err.value) and f"{url}/raw/{remote.RELEASE}" in str(err.value)


def test_a_partial_download_and_a_file_over_the_cap_are_one_line_errors(store, monkeypatch):
    url, server = _serve(lambda conn: _answer(conn, b"{}", 1000))
    try:
        with pytest.raises(remote.FetchError, match=r"the download ended after 2 of 1000 bytes") as err:
            remote.fetch_chapter(CHAPTER, url=url)
        assert "\n" not in str(err.value)
        monkeypatch.setattr(remote, "MAX_BYTES", 10)
        with pytest.raises(remote.FetchError, match=r"is 1000 bytes, over the cap of 10 per file"):
            remote.fetch_chapter(CHAPTER, url=url)
    finally:
        server.close()


def _pinned(tmp_path, monkeypatch, index: dict):
    """A checkout whose committed index is ``index``."""
    checkout = tmp_path / "checkout"
    (checkout / "notebooks" / "results" / "full").mkdir(parents=True, exist_ok=True)
    (checkout / "notebooks" / "results" / "full" / remote.INDEX).write_text(json.dumps(index))
    monkeypatch.setattr(remote, "CHECKOUT", checkout)


def test_a_malformed_index_or_a_name_outside_the_chapter_is_refused(repo, store, tmp_path, monkeypatch):
    _pinned(tmp_path, monkeypatch, {"chapters": {CHAPTER: ["mnist-A"]}})  # the old form, no checksums
    with pytest.raises(remote.FetchError, match="_index.json is not an index of stored results"):
        remote.fetch_chapter(CHAPTER)
    sums = {".json": "0" * 64, ".npz": "0" * 64}
    _pinned(tmp_path, monkeypatch, {"chapters": {CHAPTER: {"../../../evil": sums}}})
    with pytest.raises(remote.FetchError, match=r"lists '../../../evil', which is not a result of 'resists_at_scale'"):
        remote.fetch_chapter(CHAPTER)
    assert not (tmp_path / "evil.json").exists() and (not store.exists() or not list(store.rglob("*.json")))


def test_without_a_checkout_the_index_of_the_release_or_the_named_commit_is_used(repo, store, tmp_path, monkeypatch):
    monkeypatch.setattr(remote, "CHECKOUT", tmp_path / "installed")
    monkeypatch.delenv(remote.COMMIT_ENV, raising=False)
    assert len(remote.fetch_chapter(CHAPTER)) == len(STORED)  # file:// copies have one tree: its index is read
    asked = []

    def unreachable(url, deadline):
        asked.append(url)
        raise remote.FetchError(f"could not reach {url}")

    monkeypatch.setattr(remote, "_get", unreachable)
    for commit, ref in (("", remote.RELEASE), ("abc123", "abc123")):
        monkeypatch.setenv(remote.COMMIT_ENV, commit)
        with pytest.raises(remote.FetchError):
            remote.pinned_index("https://example.org/book")
        assert asked[-1] == f"https://example.org/book/raw/{ref}/notebooks/results/full/_index.json"


def test_index_refuses_a_root_with_no_stored_results(tmp_path, capsys):
    with pytest.raises(SystemExit):
        remote.main(["index", "--root", str(tmp_path / "typo")])
    assert "holds no stored full results" in capsys.readouterr().err
    assert not (tmp_path / "typo").exists()
