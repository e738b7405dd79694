"""OpenTelemetry spans of a run (the ``otel`` extra), checked with the SDK's in-memory exporter;
and a run without them imports no OpenTelemetry module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from canned_runs import CONTRADICTING, RACK7_TASK, Script, six_runs
from report_pages import corpus_run

from orchestrator.api import OTEL_VARIABLE, RunConfig, run_task
from orchestrator.llm.testing import ScriptedClient
from orchestrator.records.task import TaskError

ROOT = Path(__file__).resolve().parents[1]


def scripted_run(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A rack-7 run with a contradicting run, so it has a verification round."""
    report = run_task(
        RACK7_TASK,
        client=ScriptedClient(Script(six_runs(r5=CONTRADICTING)), cost_per_call=0.001),
        model="scripted",
        config=RunConfig(seed=7),
        out_dir=out,
    )
    events = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    return dict(report), events


def test_a_run_is_one_agent_span_over_its_stages_over_their_model_calls(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    report, events = scripted_run(tmp_path)
    spans = in_memory_spans(report, events)

    [run] = [s for s in spans if s.parent is None]
    assert run.name == "invoke_agent logic-graph"
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["logic_graph.calls"] == len(report["calls"])
    stages = {s.context.span_id: s for s in spans if s.parent == run.context}
    names = [s.name for s in sorted(stages.values(), key=lambda s: s.start_time)]
    assert names[:3] == ["fan_out", "merge", "checks"] and "verification" in names
    calls = [s for s in spans if s.name.startswith("chat ")]
    assert len(calls) == len(report["calls"]) == len(spans) - 1 - len(stages)
    for call in calls:
        stage = stages[call.parent.span_id]
        assert stage.start_time <= call.start_time <= call.end_time <= stage.end_time
        expected = (
            "fan_out"
            if call.attributes["logic_graph.call.role"] != "verification"
            else ("verification")
        )
        assert stage.name == expected
        assert call.name == "chat scripted"
        assert call.attributes["gen_ai.operation.name"] == "chat"
        assert call.attributes["gen_ai.request.model"] == "scripted"
        assert call.attributes["logic_graph.cost_usd"] == 0.001
        assert call.attributes["gen_ai.usage.input_tokens"] > 0
    assert (
        sum(c.attributes["gen_ai.usage.output_tokens"] for c in calls)
        == (report["totals"]["completion_tokens"])
    )
    assert run.start_time <= min(s.start_time for s in spans)
    assert run.end_time >= max(s.end_time for s in spans)


def in_memory_spans(report: dict[str, Any], events: list[dict[str, Any]]) -> list[Any]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from orchestrator.report.otel import emit_run

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    emit_run(report, events, provider.get_tracer("test"))
    return list(memory.get_finished_spans())


def test_a_corpus_run_has_its_query_rewrite_as_a_stage_with_its_model_call(
    tmp_path: Path,
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    report_json = corpus_run(tmp_path)
    report = json.loads(report_json.read_text())
    events = [json.loads(line) for line in (report_json.parent / "trace.jsonl").open()]
    spans = in_memory_spans(report, events)
    [rewrite] = [s for s in spans if s.name == "query_rewrite"]
    [call] = [s for s in spans if s.parent == rewrite.context]
    assert call.attributes["logic_graph.call.role"] == "query_rewrite"
    assert sum(s.name.startswith("chat ") for s in spans) == len(report["calls"]) == 3


def test_the_variable_sends_a_run_s_spans_to_a_file_one_json_span_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    monkeypatch.setenv(OTEL_VARIABLE, str(tmp_path / "spans.jsonl"))
    report, _ = scripted_run(tmp_path / "run")
    spans = [json.loads(line) for line in (tmp_path / "spans.jsonl").read_text().splitlines()]
    assert sum(s["name"].startswith("chat ") for s in spans) == len(report["calls"])
    assert [s["resource"]["attributes"]["service.name"] for s in spans[:1]] == ["logic-graph"]


def test_a_run_without_the_variable_imports_no_opentelemetry_module(tmp_path: Path) -> None:
    script = (
        "import sys; sys.path.insert(0, 'tests')\n"
        "from pathlib import Path\n"
        "from report_pages import rack7\n"
        f"rack7(Path({str(tmp_path)!r}))\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != OTEL_VARIABLE}
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"
    assert (tmp_path / "report.json").is_file()


def test_the_variable_without_the_extra_is_refused_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OTEL_VARIABLE, str(tmp_path / "spans.jsonl"))
    # as if the extra were absent
    monkeypatch.setitem(sys.modules, "orchestrator.report.otel", None)
    client = ScriptedClient(Script(six_runs()))
    with pytest.raises(TaskError, match="the otel extra is missing"):
        run_task(RACK7_TASK, client=client, model="scripted")
    assert client.calls == []


def test_otlp_sends_the_spans_to_the_collector_the_standard_variables_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    received: list[tuple[str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint)
        monkeypatch.setenv(OTEL_VARIABLE, "otlp")
        report, _ = scripted_run(tmp_path)
    finally:
        server.shutdown()
    names = []
    for path, body in received:
        assert path == "/v1/traces"
        request = ExportTraceServiceRequest.FromString(body)
        names += [s.name for r in request.resource_spans for ss in r.scope_spans for s in ss.spans]
    assert names.count("invoke_agent logic-graph") == 1
    assert sum(name.startswith("chat ") for name in names) == len(report["calls"])
