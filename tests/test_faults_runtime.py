"""Issue 35, the run-time of a run: deadlines that cover start-up, Ctrl-C and SIGTERM that keep
the work, one run per output folder, a size cap on answers, exit codes that say what happened.

Everything runs against the fake OpenAI-compatible server on 127.0.0.1; the signal tests run
the CLI in a subprocess. Timing bounds are generous: the machine may be loaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from canned_runs import GOOD, RACK7_TASK
from test_local import _fake_llama

from orchestrator.cli.run import main
from orchestrator.llm import ChatClient, LLMError, ResponseTooLargeError, local
from orchestrator.llm.local import _check_port_free
from orchestrator.llm.serve_front import ServeFront
from orchestrator.llm.testing import FakeOpenAIServer, FakeReply, completion_body
from orchestrator.report.outdir import OutDirInUseError, locked_out_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    path = tmp_path / "rack7.json"
    path.write_text(json.dumps(RACK7_TASK))
    return path


def served(task_file: Path, base_url: str) -> list[str]:
    return ["--task", str(task_file), "--model", "m", "--base-url", base_url]


# -- #4: the budget covers the probes before the first call -----------------------------------


def test_a_server_that_drips_props_cannot_hold_a_run_past_its_budget_seconds(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One byte every 0.3 s of a 2 kB body: read by read it never times out, and read whole it
    # would take ten minutes. The budget of 3 s must cover it.
    props = {"default_generation_settings": {"n_ctx": 4096}, "pad": "x" * 2000}
    drip = FakeReply(body=props, drip_s=0.3)
    with FakeOpenAIServer(lambda req, headers: GOOD, routes={"/props": drip}) as fake:
        started = time.monotonic()
        code = main([*served(task_file, fake.base_url), "--out", str(tmp_path / "o"), "--quiet",
                     "--budget-seconds", "3"])  # fmt: skip
        elapsed = time.monotonic() - started
    assert elapsed < 30  # was 170 s and more
    assert code == 1  # the budget went on the probe: no answer in time
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["limits"]["deadline_reached"] is True
    err = capsys.readouterr().err
    assert "Traceback" not in err and "--budget-seconds" in err


def test_a_slow_models_route_gives_a_report_not_a_protocol_error_traceback(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = FakeReply(body={"data": [{"id": "m", "owned_by": "x" * 3000}]}, drip_s=0.3)
    with FakeOpenAIServer(lambda req, headers: GOOD, catalog=catalog) as fake:
        started = time.monotonic()
        code = main([*served(task_file, fake.base_url), "--out", str(tmp_path / "o"), "--quiet",
                     "--budget-seconds", "4"])  # fmt: skip
        elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert "Traceback" not in err and "ProtocolError" not in err
    assert code in (0, 1, 3)
    assert (tmp_path / "o" / "report.json").is_file()
    assert elapsed < 30


# -- #5: a stopped client waits for nothing and sends nothing more ------------------------------


def test_abort_cuts_a_retry_back_off_short_and_sends_no_further_request() -> None:
    busy = FakeReply(status=503, headers={"Retry-After": "30"})
    with FakeOpenAIServer(lambda req, headers: busy) as fake:
        client = ChatClient(fake.base_url, api_key=None, max_retries=3)
        caller, failures = call_in_background(client, fake)
        time.sleep(0.2)  # now in its 30 s back-off
        stopped = time.monotonic()
        client.abort()
        caller.join(timeout=30)
        took = time.monotonic() - stopped
        sent = len(fake.chat_requests())
    assert took < 5 and len(failures) == 1 and sent == 1


def call_failures(client: ChatClient) -> list[LLMError]:
    """The failure of one chat call (empty when it succeeds)."""
    try:
        client.chat("m", [{"role": "user", "content": "x"}])
    except LLMError as exc:
        return [exc]
    return []


def call_in_background(
    client: ChatClient, server: FakeOpenAIServer
) -> tuple[threading.Thread, list[LLMError]]:
    """Start one chat call of ``client`` on a thread and wait (30 s at most) until ``server``
    has received it: the thread, and the list the call's failure lands in."""
    failures: list[LLMError] = []
    caller = threading.Thread(target=lambda: failures.extend(call_failures(client)))
    caller.start()
    deadline = time.monotonic() + 30
    while not server.chat_requests() and time.monotonic() < deadline:
        time.sleep(0.02)
    return caller, failures


# -- #7: an oversized answer is a named backend failure ---------------------------------------


def test_an_answer_over_the_size_cap_fails_the_call_without_reading_it_all() -> None:
    huge = completion_body("word " * 5000)  # about 25 kB
    with FakeOpenAIServer(lambda req, headers: FakeReply(body=huge)) as fake:
        client = ChatClient(fake.base_url, api_key=None, max_retries=2, max_response_bytes=4096)
        with pytest.raises(ResponseTooLargeError, match="over the limit of 4096"):
            client.chat("m", [{"role": "user", "content": "x"}])
        assert len(fake.chat_requests()) == 1  # not retried: it would be as large again


def test_huge_answers_end_the_run_as_backend_failed_with_exit_1(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = FakeReply(body=completion_body("x" * 9_000_000))
    with FakeOpenAIServer(lambda req, headers: huge) as fake:
        code = main([*served(task_file, fake.base_url), "--out", str(tmp_path / "o"), "--quiet",
                     "--n", "2"])  # fmt: skip
    assert code == 1
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["refusal_reason"] == "backend_failed"
    assert "ResponseTooLargeError" in report["calls"][0]["error"]
    assert "larger than the client reads" in capsys.readouterr().err


# -- #6: one run per output folder -------------------------------------------------------------


def test_a_second_run_on_an_output_folder_in_use_is_refused_before_any_call(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    with FakeOpenAIServer(lambda req, headers: GOOD) as fake, locked_out_dir(out):
        code = main([*served(task_file, fake.base_url), "--out", str(out), "--quiet"])
        sent = fake.chat_requests()
    assert code == 2 and sent == []
    assert "is in use by another run" in capsys.readouterr().err
    assert not (out / "report.json").exists() and not (out / "trace.jsonl").exists()


def test_the_output_folder_lock_is_exclusive_and_released_after_the_run(tmp_path: Path) -> None:
    with locked_out_dir(tmp_path / "o"), pytest.raises(OutDirInUseError):  # noqa: SIM117
        with locked_out_dir(tmp_path / "o"):
            pass
    with locked_out_dir(tmp_path / "o"):  # free again
        pass


def test_two_runs_started_together_on_one_folder_leave_one_whole_report_and_trace(
    task_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "o"
    slow = FakeReply(body=completion_body(GOOD), delay_s=0.5)
    codes: list[int] = []
    with FakeOpenAIServer(lambda req, headers: slow) as fake:
        argv = [*served(task_file, fake.base_url), "--out", str(out), "--quiet", "--n", "2"]
        threads = [threading.Thread(target=lambda: codes.append(main(argv))) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert sorted(codes) == [0, 2], codes  # one ran, the other was refused
    for line in (out / "trace.jsonl").read_text().splitlines():
        json.loads(line)  # no interleaved lines
    json.loads((out / "report.json").read_text())


# -- #5: Ctrl-C and SIGTERM finish the report and exit 130 -------------------------------------


class HalfSlow:
    """The first ``quick`` interrogations answer at once, every other call waits a minute."""

    def __init__(self, quick: int) -> None:
        self.quick = quick
        self.lock = threading.Lock()
        self.count = 0

    def __call__(self, request: dict[str, Any], headers: dict[str, str]) -> FakeReply:
        with self.lock:
            self.count += 1
            nth = self.count
        delay = 0.0 if nth <= self.quick else 60.0
        return FakeReply(body=completion_body(GOOD), delay_s=delay)


def start_cli(argv: list[str]) -> subprocess.Popen[str]:
    """``python -m orchestrator.run ARGV`` in a subprocess, on this checkout's code."""
    env = {k: v for k, v in os.environ.items() if k != "OPENROUTER_API_KEY"}
    env["PYTHONPATH"] = str(ROOT)  # not an installed copy
    return subprocess.Popen(
        [sys.executable, "-m", "orchestrator.run", *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_and_signal(
    argv: list[str], fake: FakeOpenAIServer, sig: int, *, after_requests: int
) -> tuple[int, float, str]:
    """Start the CLI in a subprocess, send ``sig`` once the fake server has seen
    ``after_requests`` chat requests; returns (exit code, seconds from signal to exit,
    stderr)."""
    proc = start_cli(argv)
    try:
        deadline = time.monotonic() + 120
        while len(fake.chat_requests()) < after_requests and time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        time.sleep(0.3)  # the calls are in flight now
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        return proc.returncode, time.monotonic() - sent, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_run_writes_the_report_of_what_was_done_and_exits_130(
    sig: int, task_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "o"
    with FakeOpenAIServer(HalfSlow(quick=2)) as fake:
        argv = [*served(task_file, fake.base_url), "--out", str(out), "--n", "4",
                "--budget-calls", "12", "--concurrency", "4"]  # fmt: skip
        code, seconds, err = run_and_signal(argv, fake, sig, after_requests=4)
    assert code == 130, err
    assert seconds < 20  # the target is 5 s; generous for a loaded machine
    assert "Traceback" not in err
    report = json.loads((out / "report.json").read_text())
    name = signal.Signals(sig).name
    assert report["interrupted"]["by"] == name
    assert report["interrupted"]["calls_stopped"] >= 2  # the two slow interrogations
    assert report["headline"].startswith(f"Interrupted ({name})")
    assert sum(1 for call in report["calls"] if call["ok"]) == 2  # the finished work is kept
    assert "Interrupted" in (out / "report.md").read_text()
    events = [json.loads(line)["event"] for line in (out / "trace.jsonl").read_text().splitlines()]
    assert "interrupted" in events and events[-1] == "report"


def test_ctrl_c_before_the_first_call_exits_130_without_a_traceback(
    task_file: Path, tmp_path: Path
) -> None:
    # The server hangs on the probe of its catalog: the run has not started yet.
    catalog = FakeReply(body={"data": []}, delay_s=60)
    with FakeOpenAIServer(lambda req, headers: GOOD, catalog=catalog) as fake:
        proc = start_cli([*served(task_file, fake.base_url), "--out", str(tmp_path / "o")])
        deadline = time.monotonic() + 60
        while not any(r.path.endswith("/models") for r in fake.requests):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err and "nothing to report" in err


# -- exit codes --------------------------------------------------------------------------------


def test_an_answer_exits_0_and_a_refusal_on_the_evidence_exits_3(
    task_file: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer(lambda req, headers: GOOD) as fake:
        answered = main([*served(task_file, fake.base_url), "--out", str(tmp_path / "a"),
                         "--quiet", "--n", "2"])  # fmt: skip
    with FakeOpenAIServer(lambda req, headers: "this is not a graph") as fake:
        refused = main([*served(task_file, fake.base_url), "--out", str(tmp_path / "r"),
                        "--quiet", "--n", "2"])  # fmt: skip
    assert (answered, refused) == (0, 3)
    assert json.loads((tmp_path / "r" / "report.json").read_text())["refused"] is True


# -- #11: logic-graph serve's front ------------------------------------------------------------


def raw_request(port: int, head: bytes, *, timeout: float = 10.0) -> bytes:
    """Send ``head`` on a fresh connection and return what comes back until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.fixture
def front() -> Iterator[tuple[ServeFront, FakeOpenAIServer]]:
    with (
        FakeOpenAIServer(routes={"/health": {"status": "ok"}}) as upstream,
        ServeFront(upstream.base_url.removesuffix("/v1")) as relay,
    ):
        yield relay, upstream


def test_the_front_relays_chat_calls_and_health_to_the_model_server(
    front: tuple[ServeFront, FakeOpenAIServer],
) -> None:
    relay, upstream = front
    client = ChatClient(relay.root + "/v1", api_key=None)
    assert client.chat("m", [{"role": "user", "content": "x"}]).text == "OK"
    assert upstream.chat_requests()[0]["messages"] == [{"role": "user", "content": "x"}]
    assert b'"status": "ok"' in raw_request(relay.port, b"GET /health HTTP/1.1\r\nHost: x\r\n"
                                            b"Connection: close\r\n\r\n")  # fmt: skip


def test_a_60_mb_body_is_answered_413_at_once_and_never_reaches_the_model(
    front: tuple[ServeFront, FakeOpenAIServer],
) -> None:
    relay, upstream = front
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 60000000\r\n\r\n"
    )
    started = time.monotonic()
    answer = raw_request(relay.port, head + b"{" * 65536)
    assert answer.startswith(b"HTTP/1.1 413") and b"over the limit" in answer
    assert time.monotonic() - started < 10  # was no reply within 120 s
    assert upstream.requests == []


def test_health_answers_while_64_half_open_connections_say_nothing(
    front: tuple[ServeFront, FakeOpenAIServer],
) -> None:
    relay, _ = front
    idle = [socket.create_connection(("127.0.0.1", relay.port)) for _ in range(64)]
    try:
        started = time.monotonic()
        answer = raw_request(
            relay.port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        assert answer.startswith(b"HTTP/1.1 200")
        assert time.monotonic() - started < 5
    finally:
        for sock in idle:
            sock.close()


def test_closing_the_front_is_not_held_up_by_a_client_holding_a_connection() -> None:
    slow = FakeReply(body=completion_body("late"), delay_s=60)
    with FakeOpenAIServer(lambda req, headers: slow) as upstream:
        relay = ServeFront(upstream.base_url.removesuffix("/v1"))
        idle = socket.create_connection(("127.0.0.1", relay.port))
        client = ChatClient(relay.root + "/v1", api_key=None, max_retries=0, timeout_s=60)
        waiting, failures = call_in_background(client, upstream)
        started = time.monotonic()
        relay.close()
        closed_in = time.monotonic() - started
        waiting.join(timeout=30)
        idle.close()
    assert closed_in < 5 and not waiting.is_alive()
    assert len(failures) == 1  # the client was cut off, not left waiting a minute


def test_a_restart_on_the_same_port_right_after_a_clean_stop_is_not_refused() -> None:
    with FakeOpenAIServer(routes={"/health": {"status": "ok"}}) as upstream:
        root = upstream.base_url.removesuffix("/v1")
        first = ServeFront(root)
        port = first.port
        # Connections the server closes first leave TIME_WAIT entries on its port.
        for _ in range(3):
            raw_request(port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        first.close()
        _check_port_free(port)  # what `logic-graph serve --port` checks before loading a model
        with ServeFront(root, port=port) as second:
            assert second.port == port


def test_serve_stops_on_sigterm_within_seconds_while_a_client_holds_a_connection(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a free port for the public side
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    slow = FakeReply(body=completion_body("late"), delay_s=60)
    with FakeOpenAIServer(lambda req, headers: slow, routes={"/health": {"ok": 1}}) as llama:
        root = llama.base_url.removesuffix("/v1")
        monkeypatch.setattr(local, "_import_xllamacpp", lambda: _fake_llama(root, []))
        monkeypatch.setattr(local, "ensure_model_file", lambda spec, **_: tmp_path / "m.gguf")
        stopped: list[float] = []

        def client_then_sigterm() -> None:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with contextlib.suppress(OSError):
                    if raw_request(port, b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"):
                        break
                time.sleep(0.05)
            held = socket.create_connection(("127.0.0.1", port))  # says nothing, stays open
            caller = ChatClient(url + "/v1", api_key=None, max_retries=0, timeout_s=60)
            threading.Thread(target=call_failures, args=(caller,), daemon=True).start()
            while not llama.chat_requests() and time.monotonic() < deadline:
                time.sleep(0.05)
            stopped.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(10)
            held.close()

        helper = threading.Thread(target=client_then_sigterm, daemon=True)
        helper.start()
        code = local.serve_main(["--model", "local", "--port", str(port)])
        returned = time.monotonic()
    assert code == 0 and stopped
    assert returned - stopped[0] < 10  # the target is 5 s; generous for a loaded machine
    assert capsys.readouterr().out.strip() == f"http://127.0.0.1:{port}/v1"
