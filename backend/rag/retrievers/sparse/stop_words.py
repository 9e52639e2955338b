"""Built-in stop-word lists: English (scikit-learn's) and Spanish.

The Spanish list is based on the Snowball list (articles, pronouns, prepositions, conjunctions
and every form of *estar*, *haber*, *ser* and *tener*) plus common adverbs, demonstratives and
question words it lacks (*si*, *así*, *aquel*, *cómo*...). Words are written with their
accents; the converter folds both lists the way it folds the text, so matching holds when
accents are stripped.
"""

from __future__ import annotations

import functools

_SNOWBALL_SPANISH = """
    a al algo algunas algunos ante antes como con contra cual cuando de del desde donde durante
    e el ella ellas ellos en entre era erais eran eras eres es esa esas ese eso esos esta estas
    este esto estos fue fuera fuerais fueran fueras fueron fuese fueseis fuesen fueses fui
    fuimos fuiste fuisteis fuéramos fuésemos ha habida habidas habido habidos habiendo habremos
    habrá habrán habrás habré habréis habría habríais habríamos habrían habrías habéis había
    habíais habíamos habían habías han has hasta hay haya hayamos hayan hayas hayáis he hemos
    hube hubiera hubierais hubieran hubieras hubieron hubiese hubieseis hubiesen hubieses
    hubimos hubiste hubisteis hubiéramos hubiésemos hubo la las le les lo los me mi mis mucho
    muchos muy más mí mía mías mío míos nada ni no nos nosotras nosotros nuestra nuestras
    nuestro nuestros o os otra otras otro otros para pero poco por porque que quien quienes qué
    se sea seamos sean seas seremos será serán serás seré seréis sería seríais seríamos serían
    serías seáis sin sobre sois somos son soy su sus suya suyas suyo suyos sí también tanto te
    tendremos tendrá tendrán tendrás tendré tendréis tendría tendríais tendríamos tendrían
    tendrías tened tenemos tenga tengamos tengan tengas tengo tengáis tenida tenidas tenido
    tenidos teniendo tenéis tenía teníais teníamos tenían tenías ti tiene tienen tienes todo
    todos tu tus tuve tuviera tuvierais tuvieran tuvieras tuvieron tuviese tuvieseis tuviesen
    tuvieses tuvimos tuviste tuvisteis tuviéramos tuviésemos tuvo tuya tuyas tuyo tuyos tú un
    una uno unos vosotras vosotros vuestra vuestras vuestro vuestros y ya yo él éramos esté
    estés estemos estéis estén estaré estarás estará estaremos estaréis estarán estaría estarías
    estaríamos estaríais estarían estaba estabas estábamos estabais estaban estuve estuviste
    estuvo estuvimos estuvisteis estuvieron estuviera estuvieras estuviéramos estuvierais
    estuvieran estuviese estuvieses estuviésemos estuvieseis estuviesen estando estado estada
    estados estadas estad estoy estás está estamos estáis están estar
"""
_MORE_SPANISH = """
    si así aquí allí allá ahí ahora aún aunque luego mientras pues según sino tan tal vez cada
    cómo cuál cuáles cuándo cuánto cuánta cuántos cuántas dónde adónde quién quiénes aquel
    aquella aquellas aquellos aquello mismo misma mismos mismas cualquier cualquiera demás
    dentro hacia tras bajo usted ustedes ello ésta éste
"""
SPANISH_STOP_WORDS: frozenset[str] = frozenset(_SNOWBALL_SPANISH.split() + _MORE_SPANISH.split())


@functools.cache
def english_stop_words() -> frozenset[str]:
    """scikit-learn's English list (318 words), imported on first use: importing scikit-learn
    costs most of a second, which only converters that ask for English should pay."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def stop_words(name: str) -> frozenset[str]:
    """The built-in list called ``name`` (``"english"``, ``"spanish"`` or ``"none"``)."""
    if name == "english":
        return english_stop_words()
    if name == "spanish":
        return SPANISH_STOP_WORDS
    if name == "none":
        return frozenset()
    raise ValueError(f"unknown stop-word list {name!r}; expected 'english', 'spanish' or 'none'")
