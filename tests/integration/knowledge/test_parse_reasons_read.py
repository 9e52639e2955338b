"""A file whose content contradicts its name is refused with a reason that reads as a sentence
in each language: the content is described by a noun phrase, which the template's "its content
is {content}" takes in English, Spanish and Chinese alike."""

import pytest

from common.i18n import translate
from rag.documents.errors import DocumentParseError
from rag.documents.parsers.detect import detect_type

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("name", "reasons"), [
    ("report.pdf", {
        "en": "the file is named '.pdf' but is not a PDF document: its content is a file without the %PDF header",
        "es": "el archivo se llama '.pdf' pero no es un documento PDF: su contenido es un archivo sin la cabecera %PDF",
        "zh-Hant": "檔名為 '.pdf'，但並非PDF 文件：其內容是缺少 %PDF 標頭的檔案"}),
    ("notes.docx", {
        "en": "the file is named '.docx' but is not a DOCX document: its content is something other than a zip package",
        "es": "el archivo se llama '.docx' pero no es un documento DOCX: su contenido es algo que no es un paquete zip",
        "zh-Hant": "檔名為 '.docx'，但並非DOCX 文件：其內容是並非 zip 封裝的內容"}),
])
def test_a_file_whose_content_contradicts_its_name_gets_a_sentence_in_each_language(name, reasons):
    with pytest.raises(DocumentParseError) as caught:
        detect_type(b"Plain words, nothing else.", name)
    error = caught.value
    for language, reason in reasons.items():
        assert translate(error.template, error.context, language) == reason
