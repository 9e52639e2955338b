"""What the answering model is told: instructions and worked examples, in the question's language.

The instructions ask for the direct answer first, in one short sentence of the question's
language, then the number of the passage it comes from, like ``[2]``. Small models follow an
example far better than a rule, so each language also has five worked examples (a question over
two passages and its answer), sent as earlier turns of the conversation; in one the passages do
not hold the answer and it is declined, with no citation. In the last two the
passage names several numbers or people and only one answers: the 0.5B model otherwise takes the
number or name nearest the question's words ("6 capturas" for a player's career 136). The
examples' answers are whole sentences that end with their citation: an example answering only
``[2]`` taught the 0.5B model to answer ``[2]`` alone. Instructions and examples are the same
for every question of a language, so the server's prompt cache reads them once.

When the passages do not hold the answer the model is told to say so in a fixed sentence
(``DECLINED``); ``is_declined`` recognises it and its usual rewordings, and the reply the user
gets is ``NOT_FOUND``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

LANGUAGES = ("en", "es", "zh-Hant", "zh-Hans")

CITATION_MARK = re.compile(r"\[(\d+(?:\s*[,，、]\s*\d+)*)\]")
"""A citation as the instructions ask for it: ``[2]``, or several numbers, ``[1, 3]``."""


def cited_numbers(text: str) -> list[int]:
    """The passage numbers ``text`` cites, in order, repeats included."""
    return [int(number) for match in CITATION_MARK.finditer(text)
            for number in re.split(r"\s*[,，、]\s*", match.group(1))]


INSTRUCTIONS: dict[str, str] = {
    "en": (
        "Answer the question from the numbered passages. Give the direct answer first, in one short "
        "sentence in your own words, then the number of the passage it comes from in square brackets, "
        "like [2]. Add a second short sentence only when the question asks why or how. Never copy a "
        "whole passage. If the passages do not contain the answer, answer exactly \"The documents do not say.\" "
        "with no number: never answer from what you know. Answer in English."
    ),
    "es": (
        "Responde la pregunta con los pasajes numerados. Da primero la respuesta directa, en una sola "
        "frase corta con tus propias palabras, y después el número del pasaje del que proviene entre "
        "corchetes, como [2]. Añade una segunda frase corta solo si la pregunta pide un porqué o un cómo. "
        "Nunca copies un pasaje entero. Si los pasajes no contienen la respuesta, responde exactamente "
        "\"Los documentos no lo dicen.\" sin número: nunca respondas con lo que sabes. Responde en español."
    ),
    "zh-Hant": (
        "請根據編號的段落回答問題。先用一句簡短的話、以自己的措辭直接回答，再用方括號標出答案所在段落的編號，"
        "例如 [2]。只有當問題問「為什麼」或「如何」時，才再加一句簡短的說明。不要照抄整個段落。"
        "如果段落中沒有答案，就只回答「文件中沒有提到。」，不加編號：絕不用你自己知道的內容回答。請用繁體中文回答。"
    ),
    "zh-Hans": (
        "请根据编号的段落回答问题。先用一句简短的话、以自己的措辞直接回答，再用方括号标出答案所在段落的编号，"
        "例如 [2]。只有当问题问“为什么”或“如何”时，才再加一句简短的说明。不要照抄整个段落。"
        "如果段落中没有答案，就只回答“文件中没有提到。”，不加编号：绝不用你自己知道的内容回答。请用简体中文回答。"
    ),
}

DECLINED = {"en": "The documents do not say.", "es": "Los documentos no lo dicen.",
            "zh-Hant": "文件中沒有提到。", "zh-Hans": "文件中没有提到。"}
"""What the model is told to answer when the passages do not hold the answer."""
NOT_FOUND = {
    "en": "Not found in your documents: the passages retrieved do not answer this question.",
    "es": "No se encuentra en tus documentos: los pasajes recuperados no responden a esta pregunta.",
    "zh-Hant": "在你的文件中找不到：檢索到的段落沒有回答這個問題。",
    "zh-Hans": "在你的文件中找不到：检索到的段落没有回答这个问题。",
}
"""The reply when the answer is declined, whichever check decided."""
_DECLINE_PATTERNS = re.compile(
    r"(documents?|passages?|texts?)\s+(do(es)?\s+not|don'?t|doesn'?t)\s+(say|mention|contain|answer|state)"
    r"|\bi\s+(do\s+not|don'?t)\s+know\b|\bnot\s+(found|mentioned)\s+in\b|\bno\s+information\b"
    r"|\bno\s+lo\s+(dicen|dice|sé|se|mencionan|menciona)\b|\bno\s+(se\s+)?(mencionan?|indican?|dicen)\b"
    r"|no\s+contienen?\s+(la\s+)?(respuesta|informaci[oó]n)|\bno\s+hay\s+informaci[oó]n\b"
    r"|沒有提到|没有提到|未提及|沒有提及|没有提及|我不知道|沒有相關|没有相关|無法回答|无法回答|沒有說明|没有说明|找不到",
    re.IGNORECASE,
)


def is_declined(answer: str) -> bool:
    """Whether ``answer`` says the passages do not hold the answer (in any of the languages the
    instructions use, or the ways small models reword it), rather than answering."""
    text = " ".join(answer.split())
    return bool(text) and len(text) <= 160 and bool(_DECLINE_PATTERNS.search(text))


QUESTION_LABEL = {"en": "Question", "es": "Pregunta", "zh-Hant": "問題", "zh-Hans": "问题"}
CONTEXT_LABEL = {"en": "Passages", "es": "Pasajes", "zh-Hant": "段落", "zh-Hans": "段落"}
NO_PASSAGES = {"en": "(no passages)", "es": "(sin pasajes)", "zh-Hant": "（沒有段落）", "zh-Hans": "（没有段落）"}

# (question, passages, answer) per language; the answers cite [2], [1], none, [1], [2], so the
# model does not learn that the answer is always in the same passage, and sees passages that do
# not hold the answer declined in the words ``DECLINED`` gives.
EXAMPLES: dict[str, tuple[tuple[str, tuple[str, ...], str], ...]] = {
    "en": (
        ("When did the Eiffel Tower open?",
         ("The Eiffel Tower is a wrought-iron tower, 330 metres tall, on the Champ de Mars in Paris.",
          "Built for the 1889 World's Fair, the tower opened to the public on 31 March 1889 after two "
          "years of construction, and was at first criticised by many artists."),
         "The Eiffel Tower opened on 31 March 1889 [2]."),
        ("What does the enzyme amylase break down?",
         ("Amylase, made by the salivary glands and the pancreas, breaks down starch into sugars such as "
          "maltose, which the body can absorb.",
          "Lipase works on fats, and proteases such as pepsin break down proteins in the stomach."),
         "Amylase breaks down starch into sugars [1]."),
        ("How tall is the cathedral's bell tower?",
         ("The cathedral was begun in 1220 and consecrated in 1288; its architect, Robert de Luzarches, "
          "died before the nave was finished.",
          "Its stained-glass windows were removed during the war and put back in 1951."),
         "The documents do not say."),
        ("How many goals did Ana López score in the season?",
         ("The team won 18 games that season. Marta Ruiz made 9 assists, and Ana López, who played 30 "
          "games, scored 21 goals and was the top scorer.",
          "The club's stadium holds 12,000 spectators."),
         "Ana López scored 21 goals in the season [1]."),
        ("Who designed the bridge?",
         ("The city grew quickly after the railway arrived in 1890.",
          "The bridge, opened by the mayor Juan Pérez in 1932, was designed by the engineer Clara Soto, "
          "and its construction was led by Luis Mora."),
         "The engineer Clara Soto designed the bridge [2]."),
    ),
    "es": (
        ("¿Cuándo se inauguró la Torre Eiffel?",
         ("La Torre Eiffel es una torre de hierro de 330 metros de altura situada en el Campo de Marte de París.",
          "Construida para la Exposición Universal de 1889, la torre abrió al público el 31 de marzo de "
          "1889 tras dos años de obras, y al principio muchos artistas la criticaron."),
         "La Torre Eiffel se inauguró el 31 de marzo de 1889 [2]."),
        ("¿Qué descompone la enzima amilasa?",
         ("La amilasa, producida por las glándulas salivales y el páncreas, descompone el almidón en "
          "azúcares como la maltosa, que el cuerpo puede absorber.",
          "La lipasa actúa sobre las grasas, y las proteasas como la pepsina descomponen las proteínas en "
          "el estómago."),
         "La amilasa descompone el almidón en azúcares [1]."),
        ("¿Qué altura tiene el campanario de la catedral?",
         ("La catedral se empezó en 1220 y se consagró en 1288; su arquitecto, Robert de Luzarches, murió "
          "antes de que se terminara la nave.",
          "Sus vidrieras se retiraron durante la guerra y se volvieron a colocar en 1951."),
         "Los documentos no lo dicen."),
        ("¿Cuántos goles marcó Ana López en la temporada?",
         ("En la temporada el equipo ganó 18 partidos. Marta Ruiz dio 9 pases de gol, y Ana López, que "
          "jugó 30 partidos, marcó 21 goles y fue la máxima goleadora.",
          "El estadio del club tiene capacidad para 12 000 espectadores."),
         "Ana López marcó 21 goles en la temporada [1]."),
        ("¿Quién diseñó el puente?",
         ("La ciudad creció deprisa tras la llegada del ferrocarril en 1890.",
          "El puente, inaugurado por el alcalde Juan Pérez en 1932, fue diseñado por la ingeniera Clara "
          "Soto, y sus obras las dirigió Luis Mora."),
         "La ingeniera Clara Soto diseñó el puente [2]."),
    ),
    "zh-Hant": (
        ("艾菲爾鐵塔是什麼時候開放的？",
         ("艾菲爾鐵塔是一座高 330 公尺的鍛鐵塔，位於巴黎的戰神廣場。",
          "鐵塔為 1889 年世界博覽會而建，歷經兩年施工，於 1889 年 3 月 31 日向公眾開放，起初受到許多藝術家批評。"),
         "艾菲爾鐵塔於 1889 年 3 月 31 日開放 [2]。"),
        ("澱粉酶分解什麼？",
         ("澱粉酶由唾液腺和胰臟分泌，能把澱粉分解成麥芽糖等身體可吸收的糖。",
          "脂肪酶作用於脂肪，而胃蛋白酶等蛋白酶則在胃中分解蛋白質。"),
         "澱粉酶把澱粉分解成糖 [1]。"),
        ("這座大教堂的鐘樓有多高？",
         ("大教堂於 1220 年動工，1288 年祝聖；建築師羅貝爾·德·呂扎爾什在中殿完工前便已去世。",
          "教堂的彩繪玻璃窗在戰爭期間被拆下，1951 年才重新裝回。"),
         "文件中沒有提到。"),
        ("安娜·洛佩斯在本賽季進了多少球？",
         ("本賽季球隊贏了 18 場比賽。瑪爾塔·魯伊斯送出 9 次助攻，而出場 30 次的安娜·洛佩斯攻進 21 球，成為最佳射手。",
          "俱樂部的球場可容納 12000 名觀眾。"),
         "安娜·洛佩斯本賽季進了 21 球 [1]。"),
        ("這座橋是誰設計的？",
         ("1890 年鐵路通車後，這座城市迅速發展。",
          "這座橋於 1932 年由市長胡安·佩雷斯主持啟用，由工程師克拉拉·索托設計，施工由路易斯·莫拉負責。"),
         "這座橋由工程師克拉拉·索托設計 [2]。"),
    ),
    "zh-Hans": (
        ("埃菲尔铁塔是什么时候开放的？",
         ("埃菲尔铁塔是一座高 330 米的锻铁塔，位于巴黎的战神广场。",
          "铁塔为 1889 年世界博览会而建，历经两年施工，于 1889 年 3 月 31 日向公众开放，起初受到许多艺术家批评。"),
         "埃菲尔铁塔于 1889 年 3 月 31 日开放 [2]。"),
        ("淀粉酶分解什么？",
         ("淀粉酶由唾液腺和胰腺分泌，能把淀粉分解成麦芽糖等身体可吸收的糖。",
          "脂肪酶作用于脂肪，而胃蛋白酶等蛋白酶则在胃中分解蛋白质。"),
         "淀粉酶把淀粉分解成糖 [1]。"),
        ("这座大教堂的钟楼有多高？",
         ("大教堂于 1220 年动工，1288 年祝圣；建筑师罗贝尔·德·吕扎尔什在中殿完工前便已去世。",
          "教堂的彩绘玻璃窗在战争期间被拆下，1951 年才重新装回。"),
         "文件中没有提到。"),
        ("安娜·洛佩斯在本赛季进了多少球？",
         ("本赛季球队赢了 18 场比赛。玛尔塔·鲁伊斯送出 9 次助攻，而出场 30 次的安娜·洛佩斯打进 21 球，成为最佳射手。",
          "俱乐部的球场可容纳 12000 名观众。"),
         "安娜·洛佩斯本赛季进了 21 球 [1]。"),
        ("这座桥是谁设计的？",
         ("1890 年铁路通车后，这座城市迅速发展。",
          "这座桥于 1932 年由市长胡安·佩雷斯主持启用，由工程师克拉拉·索托设计，施工由路易斯·莫拉负责。"),
         "这座桥由工程师克拉拉·索托设计 [2]。"),
    ),
}

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_SPANISH = re.compile(r"[¿¡ñáéíóúü]|\b(qué|cómo|cuál|cuáles|dónde|por qué|para|los|las|una|el|es|de|en)\b", re.I)
# Common characters written differently in the two scripts (each string pairs up position by
# position): enough to tell which script a question is written in.
_SIMPLIFIED = (
    "这们个说国时为发会过对么没还经学实现问题关从当长开样动头点产种进机电业东车数义应谁该队员战卢贡献丢贾职书马鸟鱼门见贝韩语"
    "认让请论记设计话读写识选边连远运达万与专两严丰临举乐习买乱争亚亲亿仅价众优传伤体余债儿党兰兴养内军农决况减击划则刚创别剧"
    "办务劳势区医华协单卖卫历压厂县参双变叶号吗听启响围园图圣场坏块坚报声处备复夺妇妈孙宁宝审宪宫宽寻导将尔层岁岛币师带帮广库"
    "废异张弹强归录态总恶惊戏户执扩护担拥择挥损换据敌断无旧显术杀杂权条杨极构枪标树桥梦检欢毕气汉沟泽济浅测湾满灯灵灾烧热爱状"
    "独猪环画疗盖盘码础礼离积称穷竞笔简类粮紧红约级纪纯纳纸线练组细结给络统继续维综绿编网罗联胜脑艺节范荣药获营萨蓝虽补装观规"
    "视证评词试诗详误调谈谢负财责败货质购贵费贸资赛赵输轮软轻载辆违适递邮释钟钱铁银错键镇闭间闻阵阳阶际陆陈险随难页项顺须领颜"
    "风飞饭馆验鲁鸡麦齐龙于欧莱垒栉"
)
_TRADITIONAL = (
    "這們個說國時為發會過對麼沒還經學實現問題關從當長開樣動頭點產種進機電業東車數義應誰該隊員戰盧貢獻丟賈職書馬鳥魚門見貝韓語"
    "認讓請論記設計話讀寫識選邊連遠運達萬與專兩嚴豐臨舉樂習買亂爭亞親億僅價眾優傳傷體餘債兒黨蘭興養內軍農決況減擊劃則剛創別劇"
    "辦務勞勢區醫華協單賣衛歷壓廠縣參雙變葉號嗎聽啟響圍園圖聖場壞塊堅報聲處備復奪婦媽孫寧寶審憲宮寬尋導將爾層歲島幣師帶幫廣庫"
    "廢異張彈強歸錄態總惡驚戲戶執擴護擔擁擇揮損換據敵斷無舊顯術殺雜權條楊極構槍標樹橋夢檢歡畢氣漢溝澤濟淺測灣滿燈靈災燒熱愛狀"
    "獨豬環畫療蓋盤碼礎禮離積稱窮競筆簡類糧緊紅約級紀純納紙線練組細結給絡統繼續維綜綠編網羅聯勝腦藝節範榮藥獲營薩藍雖補裝觀規"
    "視證評詞試詩詳誤調談謝負財責敗貨質購貴費貿資賽趙輸輪軟輕載輛違適遞郵釋鐘錢鐵銀錯鍵鎮閉間聞陣陽階際陸陳險隨難頁項順須領顏"
    "風飛飯館驗魯雞麥齊龍於歐萊壘櫛"
)
_SIMPLIFIED_SET, _TRADITIONAL_SET = frozenset(_SIMPLIFIED), frozenset(_TRADITIONAL)


def chinese_script(text: str) -> str | None:
    """zh-Hans or zh-Hant, whichever script's own characters ``text`` uses more; None on a tie."""
    simplified = sum(1 for character in text if character in _SIMPLIFIED_SET)
    traditional = sum(1 for character in text if character in _TRADITIONAL_SET)
    if simplified == traditional:
        return None
    return "zh-Hans" if simplified > traditional else "zh-Hant"


def detect_language(text: str, context: str = "") -> str:
    """en, es, zh-Hant or zh-Hans, from the question itself (enough to choose the answer's
    language). Chinese is answered in the script it is written in; a question whose characters
    are the same in both scripts takes the script of ``context`` (the passages), else Traditional."""
    if _CJK.search(text):
        return chinese_script(text) or chinese_script(context) or "zh-Hant"
    return "es" if len(_SPANISH.findall(text)) >= 2 or re.search(r"[¿¡ñ]", text) else "en"


def user_message(language: str, question: str, passages: list[str]) -> str:
    """The numbered passages, then the question (a small model answers the question it read
    last; asked once, its tokens go to the passages instead)."""
    context = "\n\n".join(f"[{number}] {text}" for number, text in enumerate(passages, start=1))
    return f"{CONTEXT_LABEL[language]}:\n{context or NO_PASSAGES[language]}\n\n{QUESTION_LABEL[language]}: {question}"


COPIED_EXAMPLE_WORDS = 5
"""Consecutive words (articles left out) an answer shares with a worked example, and with none of
its passages, that make it a copy of the example (the decline sentence, which the model is meant
to copy, aside)."""
COPIED_EXAMPLE_CJK_CHARACTERS = 10
"""The same for a Chinese answer, in characters."""


def copied_example(answer: str, language: str, passages: Sequence[str]) -> str | None:
    """The text of the worked example ``answer`` repeats rather than its own passages, if any.

    Over passages it reads poorly, the 1.5B sometimes answers from the examples instead ("La
    ciudad creció deprisa tras la llegada del ferrocarril en 1890 [1].": 3 of 120 Spanish
    questions of the development set)."""
    from rag.evaluation.answers import answer_length, longest_shared_span  # the evaluation's own tokens

    if language not in EXAMPLES or not answer.strip():
        return None
    limit = COPIED_EXAMPLE_CJK_CHARACTERS if answer_length(answer)[1] == "characters" else COPIED_EXAMPLE_WORDS
    own = longest_shared_span(answer, passages, language) if passages else 0
    for _question, example_passages, example_answer in EXAMPLES[language]:
        for text in (*example_passages, example_answer):
            if text == DECLINED[language]:
                continue
            shared = longest_shared_span(answer, [text], language)
            if shared >= limit and shared > own:
                return text
    return None


def example_turns(language: str) -> list[dict[str, str]]:
    """The worked examples as user and assistant turns."""
    turns = []
    for question, passages, answer in EXAMPLES[language]:
        turns.append({"role": "user", "content": user_message(language, question, list(passages))})
        turns.append({"role": "assistant", "content": answer})
    return turns
