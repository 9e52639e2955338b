"""Small real-language corpora shared by the sparse retrieval tests."""

SCIENCE = [
    "Vitamin D deficiency is associated with an increased risk of type 2 diabetes in adults.",
    "The tumour suppressor protein p53 regulates the cell cycle and prevents genome mutation.",
    "Statins lower LDL cholesterol and reduce the risk of heart attack and stroke.",
    "Regular aerobic exercise improves insulin sensitivity in patients with type 2 diabetes.",
    "CRISPR-Cas9 allows precise editing of the genome in living cells.",
    "Mutations in BRCA1 and BRCA2 raise the lifetime risk of breast and ovarian cancer.",
    "Gut microbiota composition influences obesity, inflammation and insulin resistance.",
    "Aspirin reduces the risk of a second heart attack but increases bleeding risk.",
    "The measles vaccine is safe and does not cause autism; large cohort studies agree.",
    "Sleep deprivation impairs memory consolidation and raises cortisol levels.",
    "Telomere shortening is a hallmark of cellular ageing and limits cell division.",
    "Antibiotic resistance spreads between bacteria through horizontal gene transfer.",
    "Smoking is the leading cause of lung cancer and chronic obstructive pulmonary disease.",
    "Vitamin D supplements did not prevent fractures in older adults in a large trial.",
    "The cell cycle checkpoint kinase ATM responds to DNA double-strand breaks.",
    "Obesity increases the risk of type 2 diabetes, heart disease and several cancers.",
    "The placebo effect is stronger when the patient expects relief.",
    "The human heart pumps blood through the arteries and the veins.",
    "",
    "Insulin insulin insulin: repeated words test term frequency saturation.",
]

SCIENCE_QUERIES = [
    "vitamin D and type 2 diabetes",
    "p53 cell cycle",
    "heart attack heart attack risk",
    "does the measles vaccine cause autism",
    "genome editing with CRISPR",
    "insulin",
    "quantum chromodynamics",
    "",
    "the the the risk",
]

SPANISH = [
    "La canción de cuna que cantaba mi abuela me ayudaba a dormir.",
    "El niño comió más manzanas que la niña durante el recreo.",
    "Los volcanes de Chile forman parte del Cinturón de Fuego del Pacífico.",
    "La economía española creció gracias al turismo y a las exportaciones.",
    "Un corazón sano necesita ejercicio, sueño y una alimentación equilibrada.",
    "El pingüino de Humboldt vive en las costas de Perú y Chile.",
]

# Traditional Chinese, as the zh-Hant interface's users write it.
CHINESE = [
    "珍珠奶茶是一種源自臺灣的茶飲，在奶茶中加入以木薯粉製成的粉圓，口感Q彈，如今已風行全世界。",
    "臺北101是位於臺北市信義區的摩天大樓，曾經是世界最高的建築物，每年跨年夜都會施放煙火。",
    "日月潭位於南投縣魚池鄉，是臺灣最大的天然淡水湖泊，湖面以拉魯島為界，東側形如日輪，西側狀似月鉤。",
    "颱風是發生在西北太平洋的熱帶氣旋，夏秋兩季常帶來強風豪雨，造成淹水與土石流。",
    "國立故宮博物院收藏大量中華文物，其中翠玉白菜與肉形石最受遊客歡迎。",
    "臺灣高速鐵路連接臺北與高雄，全長約三百五十公里，最快只需九十分鐘。",
]

CHINESE_QUERIES = {
    "珍珠奶茶的起源": 0,
    "世界最高的大樓": 1,
    "臺灣最大的湖泊": 2,
    "颱風帶來豪雨": 3,
    "故宮的翠玉白菜": 4,
    "高速鐵路到高雄": 5,
}
