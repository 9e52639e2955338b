"""parse_document: real PDF, DOCX, HTML, Markdown and text files built here, and the refusals."""

from __future__ import annotations

import io
import pickle
import zipfile

import docx
import pypdf
import pytest
from fpdf import FPDF

from rag.documents.errors import DocumentError, DocumentParseError
from rag.documents.parsers import ParsedDocument, ParseLimits, detect_type, normalize_text, parse_document

pytestmark = pytest.mark.unit

SPANISH = "El niño comió piña en el café; año nuevo, canción española: ¿qué tal?"
CHINESE = "繁體中文的知識庫，檢索增強生成。這是第二句話！"
SUPPORTED = "(supported: PDF, DOCX, HTML, Markdown, plain text)"


def make_pdf(pages: list[str], *, title: str | None = None) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    if title:
        pdf.set_title(title)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 10, text)
    return bytes(pdf.output())


def encrypt(data: bytes, *, user_password: str, owner_password: str = "owner") -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx() -> bytes:
    document = docx.Document()
    document.add_heading("Manual de usuario", 0)
    document.add_paragraph("Introducción   general.")
    document.add_heading("Instalación", 1)
    document.add_heading("Linux", 2)
    document.add_paragraph(SPANISH)
    table = document.add_table(rows=2, cols=3)
    for row_index, row in enumerate(table.rows):
        for column_index, cell in enumerate(row.cells):
            cell.text = f"r{row_index}c{column_index}"
    document.add_heading("Windows", 2)
    document.add_paragraph(CHINESE)
    document.add_heading("Uso", 1)
    document.add_paragraph("Abra la aplicación.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_zip(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


def refusal(data: bytes, filename: str, mime: str | None = None, **kwargs) -> DocumentParseError:
    with pytest.raises(DocumentParseError) as caught:
        parse_document(data, filename, mime, **kwargs)
    return caught.value


def sections(document: ParsedDocument) -> list[tuple[str, dict]]:
    return [(section.text, section.metadata) for section in document.sections]


# -- PDF ---------------------------------------------------------------------------------------

def test_pdf_sections_keep_their_page_numbers_and_title():
    data = make_pdf([f"Page {number} says hello.\nSecond line." for number in (1, 2, 3)], title="Handbook")

    document = parse_document(data, "handbook.pdf")

    assert document.mime == "application/pdf"
    assert document.metadata == {"page_count": 3, "title": "Handbook"}
    assert sections(document) == [
        (f"Page {number} says hello.\nSecond line.", {"page": number, "title": "Handbook"}) for number in (1, 2, 3)
    ]


def test_pdf_page_without_text_is_skipped_but_numbering_is_kept():
    document = parse_document(make_pdf(["Alpha", "", "Gamma"]), "gaps.pdf")

    assert [(section.text, section.metadata["page"]) for section in document.sections] == [("Alpha", 1), ("Gamma", 3)]
    assert document.metadata["page_count"] == 3


def test_pdf_spanish_text_comes_through_intact():
    document = parse_document(make_pdf([SPANISH]), "es.pdf")

    assert document.text == SPANISH


def test_pdf_is_recognised_by_content_whatever_its_name():
    assert parse_document(make_pdf(["Inside"]), "download.bin").mime == "application/pdf"


def test_encrypted_pdf_without_the_password_is_refused():
    error = refusal(encrypt(make_pdf(["Secret"]), user_password="s3cret"), "locked.pdf")

    assert error.code == "encrypted"
    assert error.reason == "the PDF is encrypted and no password was given"
    assert error.filename == "locked.pdf"


def test_encrypted_pdf_that_opens_with_the_empty_password_is_read():
    document = parse_document(encrypt(make_pdf(["Readable"]), user_password=""), "owner-only.pdf")

    assert document.text == "Readable"


def test_truncated_pdf_is_refused_as_damaged():
    data = make_pdf(["Cut short"] * 3)

    error = refusal(data[: len(data) // 2], "truncated.pdf")

    assert error.code == "damaged"
    assert error.reason.startswith("the PDF is damaged: ")
    assert len(error.reason) > len("the PDF is damaged: ")


def test_pdf_without_text_layer_is_refused_with_an_ocr_hint():
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 60, style="F")

    error = refusal(bytes(pdf.output()), "scan.pdf")

    assert error.code == "no_text"
    assert error.reason == "no text could be extracted (a scanned PDF needs OCR, which Trellis does not do)"


def test_pdf_with_more_pages_than_the_limit_is_refused():
    error = refusal(make_pdf(["a", "b", "c"]), "long.pdf", limits=ParseLimits(max_pages=2))

    assert error.code == "too_many_pages"
    assert error.reason == "the PDF has 3 pages, more than the limit of 2"


def test_png_renamed_pdf_is_refused():
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(40)

    error = refusal(png, "photo.pdf")

    assert error.code == "type_mismatch"
    assert error.reason == "the file is named '.pdf' but is not a PDF document: its content is a PNG image"


def test_text_renamed_pdf_is_refused():
    error = refusal(b"just some words", "notes.pdf")

    assert error.code == "type_mismatch"
    assert "%PDF" in error.reason


# -- DOCX --------------------------------------------------------------------------------------

def test_docx_sections_follow_heading_styles_and_tables_become_tab_separated_rows():
    document = parse_document(make_docx(), "manual.docx")

    assert document.mime == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert document.metadata == {"title": "Manual de usuario"}
    title = {"title": "Manual de usuario"}
    assert sections(document) == [
        ("Manual de usuario\n\nIntroducción general.", title),
        (f"Instalación\n\nLinux\n\n{SPANISH}\n\nr0c0\tr0c1\tr0c2\nr1c0\tr1c1\tr1c2",
         {"heading": "Instalación > Linux", **title}),
        (f"Windows\n\n{CHINESE}", {"heading": "Instalación > Windows", **title}),
        ("Uso\n\nAbra la aplicación.", {"heading": "Uso", **title}),
    ]


def test_docx_merged_cells_are_read_once():
    document = docx.Document()
    table = document.add_table(rows=1, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "wide"
    table.cell(0, 2).text = "narrow"
    out = io.BytesIO()
    document.save(out)

    assert parse_document(out.getvalue(), "t.docx").text == "wide\tnarrow"


def test_zip_renamed_docx_is_refused():
    error = refusal(make_zip({"readme.txt": "hello"}), "report.docx")

    assert error.code == "type_mismatch"
    assert error.reason == (
        "the file is named '.docx' but is not a DOCX document: its content is a zip archive without word/document.xml"
    )


def test_non_zip_docx_is_refused():
    error = refusal(b"plain words, not a package", "report.docx")

    assert error.reason == "the file is named '.docx' but is not a DOCX document: its content is something other than a zip package"


def test_docx_with_broken_xml_is_refused_as_damaged():
    with zipfile.ZipFile(io.BytesIO(make_docx())) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    files["word/document.xml"] = b"<w:document><unclosed"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)

    error = refusal(out.getvalue(), "broken.docx")

    assert error.code == "damaged"
    assert error.reason.startswith("the DOCX is damaged: ")


def test_docx_without_text_is_refused():
    out = io.BytesIO()
    docx.Document().save(out)

    assert refusal(out.getvalue(), "blank.docx").code == "no_text"


# -- HTML --------------------------------------------------------------------------------------

PAGE = f"""<!DOCTYPE html>
<html lang="zh-Hant"><head><title>  Guía   de uso </title>
<meta charset="utf-8"><style>body {{ color: red }}</style><script>var hidden = "SCRIPT";</script></head>
<body>
<noscript>NOSCRIPT</noscript><template><p>TEMPLATE</p></template><script>document.write("SCRIPT")</script>
<style>p {{ font: STYLE }}</style><svg><text>SVG</text></svg>
<p>Intro   text with <b>bold</b>
 and <a href="#">a link</a>.</p>
<h1>Install</h1>
<h2>Linux</h2>
<p>{SPANISH}</p>
<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>
<table><tr><th>name</th><th>size</th></tr><tr><td>a</td><td>1</td></tr></table>
<div hidden>HIDDEN</div><p style="display: none">INVISIBLE</p><!-- COMMENT -->
<p>line one<br>line two</p>
<h2>Mac</h2>
<div><p>{CHINESE}</p></div>
</body></html>"""


def test_html_keeps_visible_text_in_blocks_and_sections_at_headings():
    document = parse_document(PAGE.encode(), "guide.html")

    assert document.mime == "text/html"
    assert document.metadata == {"title": "Guía de uso", "language": "zh-Hant", "encoding": "utf-8"}
    title = {"title": "Guía de uso"}
    assert sections(document) == [
        ("Intro text with bold and a link.", title),
        (f"Install\n\nLinux\n\n{SPANISH}\n\none\ntwo\nnested\n\nname\tsize\na\t1\n\nline one\nline two",
         {"heading": "Install > Linux", **title}),
        (f"Mac\n\n{CHINESE}", {"heading": "Install > Mac", **title}),
    ]
    for invisible in ("SCRIPT", "STYLE", "SVG", "NOSCRIPT", "TEMPLATE", "HIDDEN", "INVISIBLE", "COMMENT", "color"):
        assert invisible not in document.text


def test_html_declared_legacy_charset_is_honoured():
    page = f'<html><head><meta charset="iso-8859-1"></head><body><p>{SPANISH}</p></body></html>'

    document = parse_document(page.encode("cp1252"), "legacy.htm")

    assert document.text == SPANISH
    assert document.metadata["encoding"] == "cp1252"


def test_html_declared_charset_wins_over_detection():
    # iso-8859-15 has € where windows-1252 (what detection would pick) has ¤.
    page = '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-15"></head>'
    page += "<body><p>Precio: 5 €, señor.</p></body></html>"

    document = parse_document(page.encode("iso-8859-15"), "precio.html")

    assert document.text == "Precio: 5 €, señor."
    assert document.metadata["encoding"] == "iso-8859-15"


def test_html_without_title_takes_its_first_heading():
    document = parse_document(b"<h2>Only heading</h2><p>Body</p>", "t.html")

    assert document.metadata["title"] == "Only heading"


def test_html_without_visible_text_is_refused():
    error = refusal(b"<html><head><script>x()</script></head><body>  </body></html>", "empty.html")

    assert error.code == "no_text"


# -- Markdown ----------------------------------------------------------------------------------

MARKDOWN = f"""# Guía

Hola **mundo**, {SPANISH}

## Instalación

```python
# not a heading
def main():
    return 1
```

{CHINESE}

| a | b |
|---|---|
| 1 | 2 |

Setext title
============

Last words.
"""


def test_markdown_sections_follow_headings_and_code_survives_verbatim():
    document = parse_document(MARKDOWN.encode(), "README.md")

    assert document.mime == "text/markdown"
    assert document.metadata == {"title": "Guía", "encoding": "utf-8"}
    title = {"title": "Guía"}
    assert sections(document) == [
        (f"Guía\n\nHola mundo, {SPANISH}", {"heading": "Guía", **title}),
        (f"Instalación\n\n# not a heading\ndef main():\n    return 1\n\n{CHINESE}\n\na\tb\n1\t2",
         {"heading": "Guía > Instalación", **title}),
        ("Setext title\n\nLast words.", {"heading": "Setext title", **title}),
    ]


# -- plain text --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("encoded", "encoding"),
    [
        ((SPANISH + "\n" + CHINESE).encode("utf-8"), "utf-8"),
        (b"\xef\xbb\xbf" + (SPANISH + "\n" + CHINESE).encode("utf-8"), "utf-8"),
        ((SPANISH + "\n" + CHINESE).encode("utf-16"), "utf-16-le"),
        (b"\xfe\xff" + (SPANISH + "\n" + CHINESE).encode("utf-16-be"), "utf-16-be"),
    ],
)
def test_unicode_text_is_decoded_by_byte_order_mark_or_as_utf8(encoded, encoding):
    document = parse_document(encoded, "notes.txt")

    assert document.text == SPANISH + "\n" + CHINESE
    assert document.metadata == {"encoding": encoding}
    assert document.mime == "text/plain"


def test_latin1_text_is_detected_and_spanish_survives():
    # On this sentence alone charset-normalizer ranks cp1250 first, which would read ñ as ń.
    document = parse_document(SPANISH.encode("latin-1"), "viejo.txt")

    assert document.text == SPANISH
    assert document.metadata["encoding"] == "cp1252"


def test_big5_traditional_chinese_is_detected():
    text = "繁體中文，知識庫檢索。這是一段比較長的句子，用來測試編碼偵測。"

    document = parse_document(text.encode("big5"), "big5.txt")

    assert document.text == text
    assert document.metadata["encoding"] == "big5"


def test_text_with_nul_bytes_is_refused_as_binary():
    error = refusal(b"looks like text\x00\x01\x02 but is not", "data.txt")

    assert error.code == "binary"
    assert error.reason == "binary file, not text"


def test_white_space_is_normalised_and_paragraph_breaks_kept():
    raw = "  Title  line \r\n\r\n\r\n\r\nfirst\u00a0\u00a0para   graph \n second line\n\n\n\nlast\x07 one  "

    assert parse_document(raw.encode(), "w.txt").text == "Title line\n\nfirst para graph\nsecond line\n\nlast one"


def test_normalize_text_keeps_tabs_and_ideographic_spaces():
    assert normalize_text("a\tb\u3000c   d") == "a\tb\u3000c d"


# -- refusals common to every type ---------------------------------------------------------------

@pytest.mark.parametrize("filename", ["empty.pdf", "empty.docx", "empty.txt", "empty.md", "empty.html", "noname"])
def test_empty_file_is_refused(filename):
    error = refusal(b"", filename)

    assert (error.code, error.reason) == ("empty", "the file is empty")


def test_white_space_only_text_is_refused_as_empty():
    assert refusal(b" \n\t\n ", "blank.txt").code == "empty"


def test_unsupported_extension_is_refused_with_the_supported_list():
    workbook = make_zip({"[Content_Types].xml": "<Types/>", "xl/workbook.xml": "<workbook/>"})

    error = refusal(workbook, "budget.xlsx")

    assert error.code == "unsupported_type"
    assert error.reason == f"unsupported file type '.xlsx' {SUPPORTED}"


def test_image_without_a_name_is_refused_by_its_content():
    error = refusal(b"\xff\xd8\xff\xe0" + bytes(20), "upload")

    assert error.reason == f"unsupported file type: the content is a JPEG image {SUPPORTED}"


def test_file_larger_than_the_limit_is_refused_before_parsing():
    error = refusal(b"x" * 3 * 1024 * 1024, "big.txt", limits=ParseLimits(max_bytes=2 * 1024 * 1024))

    assert error.code == "too_large"
    assert error.reason == "the file is 3.0 MB, larger than the limit of 2.0 MB"


@pytest.mark.parametrize(
    ("data", "filename"),
    [(("word " * 40).encode(), "t.txt"), (f"<p>{'word ' * 40}</p>".encode(), "t.html"), (None, "t.docx")],
)
def test_text_longer_than_the_character_limit_is_refused(data, filename):
    data = data or make_docx()

    error = refusal(data, filename, limits=ParseLimits(max_characters=100))

    assert error.code == "too_many_characters"
    assert error.reason == "the document has more than 100 characters of text, the most Trellis accepts"


def test_parse_limits_must_be_positive():
    with pytest.raises(ValueError, match="max_pages"):
        ParseLimits(max_pages=0)


def test_parse_error_is_a_document_error_and_serialises():
    error = refusal(b"", "x.txt")

    assert isinstance(error, DocumentError)
    assert error.to_dict() == {"reason": "the file is empty", "code": "empty", "context": {}, "filename": "x.txt"}
    assert str(error) == "the file is empty"


def test_parse_error_survives_pickling():
    error = refusal(b"", "x.xlsx")

    copy = pickle.loads(pickle.dumps(error))

    assert (copy.reason, copy.code, copy.context, copy.filename) == (
        error.reason, error.code, error.context, error.filename,
    )


# -- type detection ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("data", "filename", "mime", "expected"),
    [
        (b"hello", "notes", None, "text/plain"),
        (b"<!DOCTYPE html><p>hi</p>", "page", None, "text/html"),
        (b"<p>hi</p>", "notes.txt", None, "text/plain"),
        (b"<abbreviations> are not tags", "notes", None, "text/plain"),
        (b"# hi", "notes.MD", None, "text/markdown"),
        (b"hello", "notes.v2", "text/plain; charset=utf-8", "text/plain"),
        (b"# hi", "notes", "text/markdown", "text/markdown"),
        (b"hello", r"C:\Users\ana\notes.txt", None, "text/plain"),
    ],
)
def test_type_is_detected_from_name_then_declared_type_then_content(data, filename, mime, expected):
    assert detect_type(data, filename, mime) == expected


def test_unknown_extension_with_no_text_mime_is_refused():
    error = refusal(b"hello", "notes.v2", "application/octet-stream")

    assert error.reason == f"unsupported file type '.v2' {SUPPORTED}"


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (b"", "a.pdf"),
        (b"%PDF-1.7\n garbage", "a.pdf"),
        (b"\x89PNG\r\n\x1a\n", "a.pdf"),
        (b"PK\x03\x04broken", "a.docx"),
        (b"\x00\x01", "a.md"),
        (b"abc", "a.exe"),
    ],
)
def test_every_refusal_is_one_readable_line(data, filename):
    error = refusal(data, filename)

    assert error.reason and "\n" not in error.reason and "Traceback" not in error.reason
    assert error.filename == filename
