import pytest

from rag.core import MultilingualString, ml, normalize_language

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("es", "es"), ("es-CL", "es"), ("ES_mx", "es"), ("zh-TW", "zh-Hant"), ("zh-Hant", "zh-Hant"),
        ("zh_Hant_HK", "zh-Hant"), ("zh-hk", "zh-Hant"), ("zh-CN", "en"), ("fr", "en"), ("", "en"), (None, "en"),
        ("en-GB", "en"),
    ],
)
def test_language_tags_map_to_a_supported_language(tag, expected):
    assert normalize_language(tag) == expected


def test_get_falls_back_to_english_when_a_translation_is_missing():
    text = ml("Dense retriever", es="Recuperador denso")
    assert text.get("es-CL") == "Recuperador denso"
    assert text.get("zh-TW") == "Dense retriever"
    assert text.has("es") and not text.has("zh-Hant")


def test_english_is_required():
    with pytest.raises(ValueError, match="English"):
        MultilingualString(en="  ")
    with pytest.raises(ValueError, match="'en'"):
        MultilingualString.from_dict({"es": "hola"})


def test_round_trips_through_a_dict_with_any_tag_spelling():
    text = MultilingualString.from_dict({"en": "Fusion", "es-ES": "Fusión", "zh_TW": "融合"})
    assert text.to_dict() == {"en": "Fusion", "es": "Fusión", "zh-Hant": "融合"}
    assert MultilingualString.from_dict(text.to_dict()) == text


def test_is_immutable():
    text = ml("a")
    with pytest.raises(AttributeError):
        text.anything = 1
