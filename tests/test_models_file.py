"""models.json is read by one function into typed records (issue 33)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.llm import ModelEntry, ModelsFileError, PricingTable, read_models_file
from orchestrator.llm import models_file as models_file_module


def test_the_repository_models_file_reads_into_typed_entries() -> None:
    models = read_models_file()
    local = models.entry("local")
    assert local is not None and local.backend == "local" and local.pricing == (0.0, 0.0)
    assert models.default_model in models.ids()
    assert models.max_leak_rate is not None and 0 < models.max_leak_rate <= 1


def test_an_entry_keeps_its_settings_and_leaves_the_rest_none(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    written = {"id": "m", "n": 1, "timeout_s": 30, "structured_output": False, "extra": "kept"}
    path.write_text(json.dumps({"models": [written]}))
    models = read_models_file(path)
    entry = models.entry("m")
    assert entry == ModelEntry("m", n=1, timeout_s=30, structured_output=False)
    assert entry.sampling() == {"n": 1}
    assert models.raw["models"][0]["extra"] == "kept"
    assert models.entry("other") is None


@pytest.mark.parametrize(
    ("document", "names"),
    [
        ({"models": {}}, "field 'models' must be a list"),
        ({"models": [{"name": "m"}]}, r"models\[0\] must be an object with a string 'id'"),
        ({"models": [{"id": "m", "max_retries": True}]}, r"models\[0\]\.max_retries of 'm'"),
        ({"models": [{"id": "m", "pricing": {"prompt": -1}}]}, r"models\[0\]\.pricing of 'm'"),
        ({"models": [], "default_model": ""}, "field 'default_model'"),
        ({"models": [], "max_leak_rate": 2}, "field 'max_leak_rate'"),
    ],
)
def test_a_wrong_field_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, document: dict[str, object], names: str
) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ModelsFileError, match=names) as caught:
        read_models_file(path)
    assert str(path) in str(caught.value)


def test_a_missing_named_file_is_refused_but_a_missing_default_lists_no_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ModelsFileError, match="does not exist"):
        read_models_file(tmp_path / "missing.json")
    monkeypatch.setattr(models_file_module, "DEFAULT_MODELS_PATH", tmp_path / "absent.json")
    assert read_models_file().models == ()
    assert len(PricingTable.from_models_json()) == 0


def test_a_setting_outside_the_values_its_reader_allows_is_refused_naming_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"models": [{"id": "m", "hops": "sometimes"}]}))
    assert read_models_file(path).models[0].hops == "sometimes"  # no rule given, type only
    with pytest.raises(ModelsFileError, match=r"models\[0\]\.hops of 'm' must be one of a, b, got"):
        read_models_file(path, choices={"hops": ("a", "b")})
