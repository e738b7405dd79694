"""Readers: text, Markdown, HTML and PDF to pages of text; bad files raise ReadError."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_fixtures import HAS_PYPDF, make_pdf

from corpus import pages
from corpus.readers import ReadError, html_to_text, read_pages


def test_text_files_are_read_as_one_page_with_newlines_normalised(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbfLine one.\r\nLine two.\rLine three.")
    pages = read_pages(path)
    assert [(p.number, p.text) for p in pages] == [(1, "Line one.\nLine two.\nLine three.")]


def test_markdown_keeps_its_text_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "b.MD"
    path.write_text("# Title\n\nBody *text*.\n", encoding="utf-8")
    assert read_pages(path)[0].text == "# Title\n\nBody *text*.\n"


def test_html_keeps_visible_text_with_headings_lists_and_entities() -> None:
    markup = (
        "<html><head><title>T</title><style>x{}</style></head><body>"
        "<h2>Power</h2><p>The UPS &amp; <b>generator</b> feed hall B.</p>"
        "<ul><li>one</li><li>two</li></ul><script>var hidden = 1;</script>"
        "<pre>a = 1\nb = 2</pre></body></html>"
    )
    assert html_to_text(markup) == (
        "## Power\n\nThe UPS & generator feed hall B.\n\n- one\n\n- two\n\na = 1\n\nb = 2"
    )


def test_malformed_html_is_read_without_error() -> None:
    text = html_to_text("<div><p>unclosed <b>bold <i>and <h1>Heading</div></p><<>>&bogus;")
    assert "unclosed bold and" in text
    assert "# Heading" in text


def test_invalid_utf8_is_a_read_error_naming_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok \xff\xfe")
    with pytest.raises(ReadError, match=r"not UTF-8 text .*offset 3"):
        read_pages(path)


def test_binary_data_with_nul_bytes_is_a_read_error(tmp_path: Path) -> None:
    path = tmp_path / "bin.md"
    path.write_bytes(b"abc\x00def")
    with pytest.raises(ReadError, match="NUL byte at offset 3"):
        read_pages(path)


def test_a_missing_file_is_a_read_error(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match="cannot read"):
        read_pages(tmp_path / "gone.txt")


def test_an_unsupported_suffix_is_a_value_error_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unsupported suffix '\.png'"):
        read_pages(tmp_path / "image.png")
    with pytest.raises(ValueError, match="path must be"):
        read_pages(42)  # type: ignore[arg-type]


@pytest.mark.skipif(not HAS_PYPDF, reason="needs the optional pypdf package ([corpus] extra)")
def test_a_pdf_gives_one_page_of_text_per_pdf_page(tmp_path: Path) -> None:
    path = tmp_path / "r.pdf"
    path.write_bytes(make_pdf(["Rack 9 is in hall D.", "Page two (power)."]))
    pages = read_pages(path)
    assert [(p.number, p.text.strip()) for p in pages] == [
        (1, "Rack 9 is in hall D."),
        (2, "Page two (power)."),
    ]


@pytest.mark.skipif(not HAS_PYPDF, reason="needs the optional pypdf package ([corpus] extra)")
def test_a_truncated_pdf_is_a_read_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    with pytest.raises(ReadError, match="unreadable PDF"):
        read_pages(path)


def test_without_pypdf_a_pdf_is_a_read_error_saying_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "pdf_support", lambda: "PDF support needs pypdf: pip install x")
    path = tmp_path / "r.pdf"
    path.write_bytes(make_pdf(["text"]))
    with pytest.raises(ReadError, match="PDF support needs pypdf"):
        read_pages(path)


@pytest.mark.parametrize(
    "markup",
    [
        "<html><head><title>Racks</title><body><p>Rack 7 is in hall B.</p></body></html>",
        "<html><head><meta charset=utf-8><p>Rack 7 is in hall B.</p>",
        "<p>Intro.</p><svg><circle r=1/><p>Rack 7 is in hall B.</p>",
        "<div><math><mi>x</mi><div>Rack 7 is in hall B.</div></div>",
    ],
)
def test_an_unclosed_head_svg_or_math_keeps_the_text_after_it(markup: str) -> None:
    assert "Rack 7 is in hall B." in html_to_text(markup)


def test_text_inside_closed_svg_and_a_stray_end_tag_are_handled() -> None:
    markup = "<p>A</p></svg><svg><text>label</text></svg><p>B</p></script><p>C</p>"
    assert html_to_text(markup) == "A\n\nB\n\nC"
