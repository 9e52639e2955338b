"""A corpus of hostile and broken uploads, generated with the real libraries (pypdf, fpdf2,
python-docx, zipfile) so each one is what an attacker or a broken exporter would send.

``hostile_corpus`` returns every file with what Trellis must do with it: refuse it at upload,
fail it during ingestion with a readable reason (an error code and words the reason must
contain), or ingest it with the hostile part neutralised (a file name that tries to escape the
data directory, markup that hides scripts).
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field

MEGABYTE = 1024 * 1024

GOOD_TEXT = (
    "Espaliered pears are trained flat against a sunny wall. Prune the leaders in late winter and "
    "pinch the side shoots in summer so that fruiting spurs form close to the branches."
)


@dataclass(frozen=True)
class HostileFile:
    """One upload and its expected outcome.

    ``outcome`` is ``"rejected"`` (refused by the upload request itself), ``"failed"`` (accepted,
    then failed by ingestion) or ``"ready"`` (ingested, the hostile part neutralised). ``code``
    and ``words`` describe a refusal or a failure: the error code (or the codes, when the
    machine's speed decides which limit is met first), and words its English reason must
    contain. ``display_name`` is the name Trellis must show when it differs from ``name``.
    """

    name: str
    data: bytes
    content_type: str
    outcome: str
    code: str | tuple[str, ...] | None = None
    words: tuple[str, ...] = ()
    display_name: str | None = None
    absent: tuple[str, ...] = field(default=())
    """Strings that must appear in no chunk (a script's body, a secret an entity points at)."""


@dataclass(frozen=True)
class Limits:
    """The limits the corpus is built against (the test sets the matching settings)."""

    max_upload_bytes: int
    max_pages: int
    max_characters: int
    max_chunks: int
    chunk_size: int


# -- PDF ---------------------------------------------------------------------------------------

def _text_pdf(text: str = GOOD_TEXT, pages: int = 1) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for _ in range(pages):
        pdf.add_page()
        pdf.multi_cell(w=180, h=7, text=text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def _rewritten(data: bytes, edit) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    edit(writer)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def truncated_pdf() -> bytes:
    data = _text_pdf(pages=3)
    return data[: len(data) // 2]


def javascript_pdf() -> bytes:
    """A text PDF that runs JavaScript when opened (an /OpenAction of type /JavaScript)."""
    from pypdf.generic import DictionaryObject, NameObject, TextStringObject

    def edit(writer) -> None:
        action = DictionaryObject({
            NameObject("/Type"): NameObject("/Action"),
            NameObject("/S"): NameObject("/JavaScript"),
            NameObject("/JS"): TextStringObject("app.alert('pwned'); this.exportDataObject({cName: 'x', nLaunch: 2});"),
        })
        writer._root_object[NameObject("/OpenAction")] = writer._add_object(action)

    return _rewritten(_text_pdf(), edit)


def named_javascript_pdf() -> bytes:
    """A text PDF with document-level JavaScript in its /Names tree (run when the file opens)."""
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, TextStringObject

    def edit(writer) -> None:
        action = writer._add_object(DictionaryObject({
            NameObject("/S"): NameObject("/JavaScript"),
            NameObject("/JS"): TextStringObject("app.launchURL('http://127.0.0.1:9/', true);"),
        }))
        scripts = DictionaryObject({NameObject("/Names"): ArrayObject([TextStringObject("init"), action])})
        writer._root_object[NameObject("/Names")] = DictionaryObject({NameObject("/JavaScript"): scripts})

    return _rewritten(_text_pdf(), edit)


def encrypted_pdf() -> bytes:
    return _rewritten(_text_pdf(), lambda writer: writer.encrypt(user_password="hunter2", algorithm="AES-128"))


def many_empty_pages_pdf(pages: int) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def self_referencing_page_tree_pdf() -> bytes:
    """A PDF whose page tree lists itself among its own kids: a naive walk never ends."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
    ]
    return _raw_pdf(objects)


def _raw_pdf(objects: list[bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


# -- DOCX --------------------------------------------------------------------------------------

def _good_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph(GOOD_TEXT)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _docx_with(replacements: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A real python-docx package with some parts replaced."""
    source = zipfile.ZipFile(io.BytesIO(_good_docx()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as target:
        for info in source.infolist():
            target.writestr(info.filename, replacements.get(info.filename, source.read(info.filename)))
    return buffer.getvalue()


_W = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _document_xml(body: bytes, prologue: bytes = b"") -> bytes:
    return (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' + prologue +
            b"<w:document " + _W + b"><w:body><w:p><w:r><w:t>" + body + b"</w:t></w:r></w:p></w:body></w:document>")


def xxe_docx(secret_file: str, probe_url: str) -> bytes:
    """document.xml declares an external entity reading a local file, and another one on the
    network (``probe_url``, a listener the test watches); the text uses both."""
    prologue = (b'<!DOCTYPE w:document [\n<!ENTITY secret SYSTEM "file://' + secret_file.encode() + b'">\n'
                b'<!ENTITY remote SYSTEM "' + probe_url.encode() + b'">\n]>\n')
    return _docx_with({"word/document.xml": _document_xml(b"Leak: &secret; &remote; " + GOOD_TEXT.encode(), prologue)})


def external_dtd_docx(probe_url: str) -> bytes:
    """document.xml names an external DTD on the network."""
    prologue = b'<!DOCTYPE w:document SYSTEM "' + probe_url.encode() + b'">\n'
    return _docx_with({"word/document.xml": _document_xml(GOOD_TEXT.encode(), prologue)})


def billion_laughs_docx() -> bytes:
    """Nested internal entities that would expand to about 10⁹ "lol"s."""
    entities = b'<!ENTITY lol0 "lol">\n' + b"".join(
        b'<!ENTITY lol%d "%s">\n' % (level, b"".join(b"&lol%d;" % (level - 1) for _ in range(10)))
        for level in range(1, 10)
    )
    return _docx_with({"word/document.xml": _document_xml(b"&lol9;", b"<!DOCTYPE w:document [\n" + entities + b"]>\n")})


def zip_bomb_docx(expanded_bytes: int, part: str = "word/document.xml") -> bytes:
    """A DOCX whose ``part`` inflates to ``expanded_bytes`` (mostly one repeated byte)."""
    payload = _document_xml(b"") if part == "word/document.xml" else b"<?xml version='1.0'?><w:styles " + _W + b">"
    padding = b" " * (expanded_bytes - len(payload))
    if part == "word/document.xml":
        content = payload.replace(b"<w:body>", b"<w:body>" + padding, 1)
    else:
        content = payload + padding + b"</w:styles>"
    return _docx_with({part: content})


def lying_zip_docx() -> bytes:
    """A DOCX whose document.xml claims to be tiny in the zip directory but inflates to 40 MB."""
    real = _docx_with({"word/document.xml": _document_xml(b"x" * (40 * MEGABYTE))})
    archive = bytearray(real)
    with zipfile.ZipFile(io.BytesIO(real)) as source:
        info = source.getinfo("word/document.xml")
    size = info.file_size.to_bytes(4, "little")
    small = (1000).to_bytes(4, "little")
    # The uncompressed size sits in both the local header and the central directory entry.
    archive[:] = bytes(archive).replace(size, small)
    return bytes(archive)


def malformed_docx() -> bytes:
    return _docx_with({"word/document.xml": b"<w:document " + _W + b"><w:body><w:p>unclosed"})


def plain_zip_named_docx() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", GOOD_TEXT)
    return buffer.getvalue()


# -- HTML, text, images --------------------------------------------------------------------------

def deeply_nested_html(total_bytes: int) -> bytes:
    """Scripts, event handlers and ``total_bytes`` of ``<div>`` nesting with the only text at the bottom."""
    head = (b"<!doctype html><html><head><title>Nest</title><script>fetch('http://127.0.0.1:9/steal')</script>"
            b"</head><body onload=\"alert(1)\"><script>document.cookie</script>")
    opening = b"<div>"
    depth = (total_bytes - len(head)) // (len(opening) + len(b"</div>"))
    return head + opening * depth + b"deep text" + b"</div>" * depth + b"</body></html>"


def scripts_only_html() -> bytes:
    return (b"<!doctype html><html><head><script>alert('x')</script><style>body{}</style></head><body>"
            b"<script>while(true){}</script><noscript>   </noscript><iframe src=\"file:///etc/passwd\"></iframe>"
            b"<img src=x onerror=alert(1)></body></html>")


def hostile_markup_html(probe_url: str) -> bytes:
    """Readable text around scripts, handlers, an external DTD and a remote image: the text is
    kept, the rest never reaches a chunk (and nothing is fetched)."""
    return (b'<!DOCTYPE html SYSTEM "' + probe_url.encode() + b'"><html><head><script>var token="SCRIPT-BODY-'
            b'MARKER";</script><link rel="stylesheet" href="' + probe_url.encode() + b'"></head><body>'
            b"<p onclick=\"alert('HANDLER-MARKER')\">" + GOOD_TEXT.encode() + b"</p>"
            b'<img src="' + probe_url.encode() + b'"><script>document.write("SCRIPT-BODY-MARKER")</script>'
            b"</body></html>")


PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
       + bytes(64))


def nested_lists_markdown(levels: int) -> bytes:
    """Lists within lists: Python-Markdown recurses per level and slows down quadratically."""
    return b"".join(b"  " * level + b"- item %d\n" % level for level in range(levels))


def unclosed_links_markdown(count: int) -> bytes:
    """``[a](`` repeated on one line: Python-Markdown's inline patterns take quadratic time."""
    return b"[a](" * count


def large_corpus() -> list[HostileFile]:
    """The files that need a large upload limit to reach the parser at all."""
    return [
        HostileFile("nested.html", deeply_nested_html(50 * MEGABYTE), "text/html", "failed", "too_deep",
                    ("nests", "levels deep")),
    ]


def hostile_corpus(*, limits: Limits, secret_file: str, probe_url: str, escape_token: str) -> list[HostileFile]:
    """Every hostile upload with its expected outcome. ``secret_file`` is a file outside the
    data directory an entity tries to read; ``probe_url`` a listener on loopback that must never
    be contacted; ``escape_token`` names the file a traversal tries to write."""
    text, pdf, html = "text/plain", "application/pdf", "text/html"
    docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    expansion_limit = 20 * limits.max_upload_bytes
    return [
        HostileFile("truncated.pdf", truncated_pdf(), pdf, "failed", "damaged", ("PDF", "damaged")),
        HostileFile("javascript.pdf", javascript_pdf(), pdf, "failed", "active_content", ("JavaScript",)),
        HostileFile("named-javascript.pdf", named_javascript_pdf(), pdf, "failed", "active_content", ("JavaScript",)),
        HostileFile("encrypted.pdf", encrypted_pdf(), pdf, "failed", "encrypted", ("encrypted", "password")),
        # On a loaded machine the isolated reader's time limit can run out before the page count
        # is read: either way the file fails alone and the reason names the PDF.
        HostileFile("empty-pages.pdf", many_empty_pages_pdf(limits.max_pages + 2000), pdf, "failed",
                    ("too_many_pages", "timeout"), ("PDF",)),
        HostileFile("loop.pdf", self_referencing_page_tree_pdf(), pdf, "failed", "damaged", ("PDF", "damaged")),
        HostileFile("photo.pdf", PNG, pdf, "failed", "type_mismatch", ("not a PDF document", "PNG image")),
        HostileFile("bomb.docx", zip_bomb_docx(expansion_limit + MEGABYTE), docx, "failed", "too_large",
                    ("expands", "more than")),
        HostileFile("styles-bomb.docx", zip_bomb_docx(expansion_limit + MEGABYTE, "word/styles.xml"), docx,
                    "failed", "too_large", ("expands", "more than")),
        HostileFile("lying-sizes.docx", lying_zip_docx(), docx, "failed", "damaged", ("DOCX", "damaged")),
        HostileFile("xxe.docx", xxe_docx(secret_file, probe_url), docx, "failed", "dtd", ("DTD", "entit"),
                    absent=("TOP-SECRET",)),
        HostileFile("external-dtd.docx", external_dtd_docx(probe_url), docx, "failed", "dtd", ("DTD",)),
        HostileFile("billion-laughs.docx", billion_laughs_docx(), docx, "failed", "dtd", ("DTD",)),
        HostileFile("malformed.docx", malformed_docx(), docx, "failed", "damaged", ("DOCX", "damaged")),
        HostileFile("archive.docx", plain_zip_named_docx(), docx, "failed", "type_mismatch",
                    ("not a DOCX document", "zip archive")),
        HostileFile("nested-small.html", deeply_nested_html(MEGABYTE), html, "failed", "too_deep",
                    ("nests", "levels deep")),
        HostileFile("nested-lists.md", nested_lists_markdown(1000), "text/markdown", "failed",
                    ("timeout", "too_deep")),
        HostileFile("unclosed-links.md", unclosed_links_markdown(30_000), "text/markdown", "failed", "timeout",
                    ("longer than", "Markdown")),
        HostileFile("scripts-only.html", scripts_only_html(), html, "failed", "no_text", ("no text",)),
        HostileFile("hostile-markup.html", hostile_markup_html(probe_url), html, "ready",
                    absent=("SCRIPT-BODY-MARKER", "HANDLER-MARKER", "alert")),
        HostileFile("invalid-utf8.txt", b"caf\xc3 \xff\xfe\x80\x81\x8d\x8f\x90\x9d" * 2000, text, "failed",
                    "encoding", ("encoding",)),
        HostileFile("nul-bytes.txt", GOOD_TEXT.encode() + b"\x00\x00\x00" + GOOD_TEXT.encode(), text, "failed",
                    "binary", ("binary",)),
        HostileFile("utf16-lie.txt", b"\xff\xfe" + b"\x00\xd8" * 50, text, "failed", "encoding",
                    ("byte-order mark", "UTF-16")),
        HostileFile("empty.txt", b"", text, "failed", "empty", ("empty",)),
        HostileFile("program.txt", b"\x7fELF\x02\x01\x01" + bytes(200), text, "failed", "type_mismatch",
                    ("executable",)),
        HostileFile("installer.exe", b"MZ\x90\x00" + bytes(100), "application/octet-stream", "failed",
                    "unsupported_type", ("unsupported", ".exe")),
        HostileFile("one-line.txt", b"x" * (limits.chunk_size * (limits.max_chunks + 50)), text, "failed",
                    "too_many_chunks", ("chunks", "limit")),
        HostileFile("novel.txt", (b"lorem ipsum " * (limits.max_characters // 12 + 100)), text, "failed",
                    "too_many_characters", ("characters",)),
        HostileFile("headings-only.md", b"".join(b"#" * (level % 6 + 1) + b" Heading %d\n\n" % level
                                                  for level in range(300)), "text/markdown", "ready"),
        HostileFile("oversized.txt", b"y" * (limits.max_upload_bytes + 1), text, "rejected", "too_large",
                    ("larger than the limit",)),
        HostileFile(f"../../../../../../tmp/{escape_token}.txt", GOOD_TEXT.encode(), text, "ready",
                    display_name=f"{escape_token}.txt"),
        HostileFile(f"..\\..\\..\\{escape_token}-windows.txt", (GOOD_TEXT + " Windows.").encode(), text, "ready",
                    display_name=f"{escape_token}-windows.txt"),
        HostileFile("bell\x07\x1b[31mred\x7f\u202eexe.txt", (GOOD_TEXT + " Controls.").encode(), text, "ready",
                    display_name="bell[31mredexe.txt"),
    ]
